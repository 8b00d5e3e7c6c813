#!/usr/bin/env bash
# The one GPU test case call 2 could not run (it needs cuzk-bench), on the final code, build default.
set -x
rm -rf /tmp/head && mkdir -p /tmp/head && tar -xf .device/head.tar -C /tmp/head && cp -r .device /tmp/head/
cd /tmp/head && source scripts/device-deps.sh && export CMAKE_PREFIX_PATH=$DEPS_PREFIX
t0=$(date +%s)
cmake --preset default > $OUT/build.log 2>&1 && cmake --build build/default -j16 --target test_gpu cuzk-bench >> $OUT/build.log 2>&1; echo "build rc=$? s=$(( $(date +%s)-t0 ))"
grep -c 'warning:' $OUT/build.log
cd build/default && CUZK_BENCH=$PWD/harness/cuzk-bench tests/test_gpu "[faults]" > $OUT/faults.txt 2>&1; echo "faults rc=$?"; tail -5 $OUT/faults.txt
