#!/usr/bin/env bash
# The variant matrix at sector size (e2e/porep-32g-c16-serial), then Nsight Systems against the
# kernel times and the 2^24 stage's kernels. Binaries built elsewhere from the same tree travel in
# .device/lean/bins.tar.xz with the runtime packages they need. Logs in /tmp/kg.
set -u
root=$PWD
mkdir -p /tmp/kg /tmp/head /tmp/cap
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; df -h /tmp; date -u
tar --exclude=./.device --exclude=./build --exclude=./results/local -cf - . | tar -xf - -C /tmp/head
mkdir -p /tmp/head/.device && cp .device/lean/*.deb /tmp/head/.device/
cd /tmp/head
source scripts/device-deps.sh
c=$(find /usr/local/cuda/ /usr/local/cuda-13*/ -name 'libcupti.so.13*' 2>/dev/null | head -1); echo "cupti: $c"
[ -n "$c" ] && cp -L "$c" /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13
tar -xJf "$root/.device/lean/bins.tar.xz"
bad=""
for p in default baseline pinned smallvec presize all; do
  ldd build/$p/harness/cuzk-bench | grep 'not found'
  build/$p/harness/cuzk-bench info --json > /tmp/kg/info-$p.json || bad="$bad $p"
done
echo "binaries that do not run:${bad:- none}"
[ -n "$bad" ] && { echo DONE; exit 1; }
echo SETUPDONE
# The key of 32g-c16 into results/local/params (generated on the GPU by `all`), and one sector.
step bash -c "build/all/harness/cuzk-bench run --suite e2e --case porep-32g-c16-serial --backend cuda --out /tmp/kg/c16-serial-all.jsonl --force > /tmp/kg/c16-serial-all.txt 2>&1"
tail -5 /tmp/kg/c16-serial-all.txt
ls -la results/local/params
echo KEYDONE
step scripts/gpu-matrix.sh /tmp/kg/mx sector_start
while :; do scripts/gpu-matrix.sh /tmp/kg/mx sector_wait 600 > /tmp/kg/mx/wait.txt 2>&1; rc=$?; [ $rc != 3 ] && break; done
echo "== $(date -u +%H:%M:%S) matrix exit $rc"
cat /tmp/kg/mx/wait.txt
step bash -c "build/baseline/harness/cuzk-bench report /tmp/kg/mx/sector-matrix > /tmp/kg/mx/report.txt 2>&1"
echo MATRIXDONE
step scripts/gpu-noise-study.sh /tmp/kg/study nsys_kernel
cat /tmp/kg/study/nsys_kernel.txt
echo NSYSDONE
for p in all default; do
  step env CUZK_PRESET=$p scripts/nsys-capture.sh --suite stage --case gpu-2e24 --backend cuda --out /tmp/cap/$p \
    --warmup 1 --reps 10 -- --stable > /tmp/kg/cap-$p.log 2>&1
  cp /tmp/cap/$p/*.jsonl /tmp/kg/cap-$p.jsonl
  k=""; for ph in msm_l msm_a msm_b_g1 msm_h ntt_h; do k="$k --kernels proof/prove/$ph"; done
  [ $p = all ] && k="$k --kernels proof/prove/msm_b_g2"
  python3 scripts/nsys-gpu-time.py --sqlite /tmp/cap/$p/stage-gpu-2e24.sqlite --results /tmp/kg/cap-$p.jsonl $k \
    > /tmp/kg/cap-$p-kernels.txt 2>&1
  cat /tmp/kg/cap-$p-kernels.txt
done
echo DONE
