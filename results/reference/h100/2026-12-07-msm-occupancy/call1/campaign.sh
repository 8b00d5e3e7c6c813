#!/usr/bin/env bash
# Kernel baseline: default build, bench MSM/NTT, ncu of the MSM's bucket sums and the NTT passes,
# nsys kernel summary of the 2^24 MSM, then the whole GPU test binary. Logs in /tmp/kg.
set -u
mkdir -p /tmp/kg /tmp/head
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date +%H:%M:%S) exit $rc"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc
tar -xzf .device/head.tar.gz -C /tmp/head
cp -r .device /tmp/head/.device
cd /tmp/head
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX
mkdir -p /tmp/exp && tar -xf .device/head.tar.gz -C /tmp/exp && (cd /tmp/exp && (patch -p1 < /tmp/head/.device/exp.patch || git apply /tmp/head/.device/exp.patch); grep -c "ahead" cuda/msm/msm.cu)
step bash -c "cmake --preset default >/tmp/kg/cmake.log 2>&1 && cmake --build build/default -j16 --target bench_gpu test_gpu cuzk-bench > /tmp/kg/build.log 2>&1"
step bash -c "cd /tmp/exp && cmake --preset default >/tmp/kg/cmake-exp.log 2>&1 && cmake --build build/default -j16 --target bench_gpu > /tmp/kg/build-exp.log 2>&1"
echo "exp warnings: $(grep -c 'warning:' /tmp/kg/build-exp.log)"
echo "warnings: $(grep -c 'warning:' /tmp/kg/build.log)"
grep -A5 'error' /tmp/kg/build.log | head -20
G=build/default/suites/bench_gpu
F='BM_gpu_msm_g1/log_n:24/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0|BM_gpu_ntt_forward/log_n:(20|21|22|24|26)/order:0'
step bash -c "$G --benchmark_filter='$F' --benchmark_out=/tmp/kg/bench.json --benchmark_out_format=json > /tmp/kg/bench.txt 2>&1"
grep BM_ /tmp/kg/bench.txt
FM='BM_gpu_msm_g1/log_n:24/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0|BM_gpu_msm_g1/log_n:22/pinned:1'
step bash -c "/tmp/exp/$G --benchmark_filter='$FM' --benchmark_repetitions=3 --benchmark_out=/tmp/kg/bench-exp.json --benchmark_out_format=json > /tmp/kg/bench-exp.txt 2>&1"
step bash -c "$G --benchmark_filter='$FM' --benchmark_repetitions=3 --benchmark_out=/tmp/kg/bench-base.json --benchmark_out_format=json > /tmp/kg/bench-base.txt 2>&1"
grep BM_ /tmp/kg/bench-exp.txt /tmp/kg/bench-base.txt | grep -v "_mean\|_median\|_stddev\|_cv" 
echo BENCHDONE
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
step timeout 240 $NCU --clock-control none -k regex:sum_chunks -c 1 --set full -o /tmp/kg/msm $G --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1' > /tmp/kg/ncu-msm.log 2>&1
$NCU -i /tmp/kg/msm.ncu-rep --page details > /tmp/kg/msm-details.txt 2>&1
step timeout 240 $NCU --clock-control none -k regex:sum_chunks -c 1 --set full -o /tmp/kg/msm-exp /tmp/exp/$G --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1' > /tmp/kg/ncu-msm-exp.log 2>&1
$NCU -i /tmp/kg/msm-exp.ncu-rep --page details > /tmp/kg/msm-exp-details.txt 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Compute \(SM\) Throughput|Memory Throughput" /tmp/kg/msm-details.txt /tmp/kg/msm-exp-details.txt
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
step timeout 120 $NSYS profile -t cuda -o /tmp/kg/msm24 $G --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1' > /tmp/kg/nsys.log 2>&1
$NSYS stats --report cuda_gpu_kern_sum /tmp/kg/msm24.nsys-rep > /tmp/kg/msm24-kern.txt 2>&1
head -40 /tmp/kg/msm24-kern.txt
echo PROFDONE
step bash -c "CUZK_BENCH=$PWD/build/default/harness/cuzk-bench timeout 420 build/default/tests/test_gpu > /tmp/kg/test-gpu-all.txt 2>&1"
tail -5 /tmp/kg/test-gpu-all.txt
rm -f /tmp/kg/*.nsys-rep.tmp
echo DONE
