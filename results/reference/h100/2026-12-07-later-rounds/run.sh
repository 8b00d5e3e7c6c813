#!/usr/bin/env bash
# The later rounds cut to fill the GPU: build this tree and the one before (base.tar.gz), GPU MSM
# tests, bench A/B in one binary, the 2^24 stage's kernel-time spread in each tree, then calibrate
# on kernel time and the whole GPU test binary. Logs in /tmp/kg.
set -u
root=$PWD
mkdir -p /tmp/kg /tmp/base
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; date -u
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX
tar -xzf .device/base.tar.gz -C /tmp/base
mkdir -p /tmp/base/.device && cp .device/*.deb /tmp/base/.device/
step bash -c "cmake --preset default >/tmp/kg/cmake.log 2>&1 && cmake --build build/default -j16 --target cuzk-bench bench_gpu test_gpu > /tmp/kg/build.log 2>&1"
echo "warnings: $(grep -c 'warning:' /tmp/kg/build.log)"
grep -B2 -A5 ' error' /tmp/kg/build.log | head -30
echo BUILDDONE
B=build/default/harness/cuzk-bench
# The base tree builds while the MSM tests run (correctness only; nothing is timed meanwhile).
(cd /tmp/base && cmake --preset default >/tmp/kg/cmake-base.log 2>&1 && cmake --build build/default -j12 --target cuzk-bench > /tmp/kg/build-base.log 2>&1; echo "base build exit $?" >> /tmp/kg/build-base.log) &
bp=$!
step bash -c "CUZK_BENCH=$root/$B timeout 300 build/default/tests/test_gpu '*GPU MSM*' > /tmp/kg/test-msm.txt 2>&1"
tail -4 /tmp/kg/test-msm.txt
echo TESTDONE
wait $bp; tail -1 /tmp/kg/build-base.log
G=build/default/suites/bench_gpu
step bash -c "$G --benchmark_filter='BM_gpu_msm_later_rounds|BM_gpu_msm_g1/log_n:24/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0' --benchmark_out=/tmp/kg/bench-msm.json --benchmark_out_format=json > /tmp/kg/bench-msm.txt 2>&1"
grep BM_ /tmp/kg/bench-msm.txt
echo BENCHDONE
for side in new base; do
  b=$root/$B; [ $side = base ] && b=/tmp/base/$B
  step bash -c "$b run --suite stage --case gpu-2e24 --backend cuda --stable --gpu-activity --reps 10 --out /tmp/kg/stage-$side.jsonl > /tmp/kg/stage-$side.txt 2>&1"
  /usr/bin/python3 .device/kernel_cv.py /tmp/kg/stage-$side.jsonl > /tmp/kg/stage-$side-cv.txt 2>&1 || python3 .device/kernel_cv.py /tmp/kg/stage-$side.jsonl > /tmp/kg/stage-$side-cv.txt 2>&1
  cat /tmp/kg/stage-$side-cv.txt
done
step bash -c "$B compare --threshold 0.005 /tmp/kg/stage-base.jsonl /tmp/kg/stage-new.jsonl > /tmp/kg/stage-compare.txt 2>&1"
cat /tmp/kg/stage-compare.txt | head -40
echo STAGEDONE
step bash -c "$G --benchmark_filter='BM_prove_stage_cuda_overlap_later_rounds' --benchmark_out=/tmp/kg/bench-stage.json --benchmark_out_format=json > /tmp/kg/bench-stage.txt 2>&1"
grep BM_ /tmp/kg/bench-stage.txt
echo STAGEBENCHDONE
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && step scripts/gpu-noise-study.sh /tmp/kg/study calibrate_kernel
head -40 /tmp/kg/study/calibrate_kernel.txt
echo CALDONE
step bash -c "CUZK_BENCH=$root/$B timeout 420 build/default/tests/test_gpu > /tmp/kg/test-gpu-all.txt 2>&1"
tail -5 /tmp/kg/test-gpu-all.txt
echo DONE
