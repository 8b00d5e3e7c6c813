#!/usr/bin/env bash
# The 2^24 stage's kernel-time spread, calibrate on kernel time, and the G1 MSM and NTT anchors,
# with the default preset's binaries built on the development VM. Runs detached; logs in /tmp/kg.
set -u
mkdir -p /tmp/kg /tmp/deps
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; date -u; git log --oneline -1
for f in .device/lean/*.deb; do dpkg -x "$f" /tmp/deps; done
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
c=$(find /usr/local/cuda/ /usr/local/cuda-13*/ -name 'libcupti.so.13*' 2>/dev/null | head -1); echo "cupti: $c"
[ -n "$c" ] && cp -L "$c" /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13
tar -xJf .device/lean/bins-h.tar.xz
B=build/default/harness/cuzk-bench; G=build/default/suites/bench_gpu
ldd $B $G | grep 'not found'
$B info --json > /tmp/kg/info.json || { echo DONE; exit 1; }
echo SETUPDONE
step bash -c "$B run --suite stage --case gpu-2e24 --backend cuda --stable --gpu-activity --reps 10 --out /tmp/kg/stage.jsonl > /tmp/kg/stage.txt 2>&1"
python3 results/reference/h100/2026-12-07-kernel-time/kernel_cv.py /tmp/kg/stage.jsonl > /tmp/kg/stage-cv.txt 2>&1
cat /tmp/kg/stage-cv.txt
echo STAGEDONE
step bash -c "$G --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0|BM_gpu_ntt_forward/log_n:2[02]/order:0' --benchmark_out=/tmp/kg/bench.json --benchmark_out_format=json > /tmp/kg/bench.txt 2>&1"
grep BM_ /tmp/kg/bench.txt
echo BENCHDONE
step scripts/gpu-noise-study.sh /tmp/kg/study calibrate_kernel
head -60 /tmp/kg/study/calibrate_kernel.txt
echo CALDONE
tar -czf /tmp/kg/raw.tgz -C /tmp/kg stage.jsonl stage.txt bench.json study info.json
echo DONE
