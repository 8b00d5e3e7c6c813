#!/bin/bash
# A build beside the fresh-clone runs: rebuilds a CUDA-off tree from scratch, one job, until they end.
cd /work/wt-load
n=0
while pgrep -f /tmp/twice.sh >/dev/null; do
  n=$((n+1)); rm -rf build/load
  echo "load build $n start $(date +%T)"
  cmake -S . -B build/load -G Ninja -DCUZK_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null 2>&1
  timeout 3h ninja -C build/load -j1 >/dev/null 2>&1 &
  p=$!
  while kill -0 $p 2>/dev/null; do pgrep -f /tmp/twice.sh >/dev/null || { pkill -P $p; kill $p; }; sleep 10; done
  echo "load build $n end $(date +%T)"
done
