#!/usr/bin/env bash
# Prebuilt bench_gpu (default preset, 8287fef) and the same with the G1 adding kernels at 3
# blocks an SM (exp.patch), alternated; then the MSM GPU tests and a profile of the patched kernel.
set -u
mkdir -p /tmp/kg
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date +%H:%M:%S) exit $rc"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
export LD_LIBRARY_PATH=$PWD/.device/k2/lib
B=$PWD/.device/k2/bin
FM='BM_gpu_msm_g1/log_n:2[24]/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0|BM_gpu_msm_chunk/log_n:24/chunk:32/mix:1'
for r in 1 2; do for t in base e3; do
  step bash -c "$B/bench_gpu_$t --benchmark_filter='$FM' --benchmark_repetitions=2 --benchmark_out=/tmp/kg/bench-$t-$r.json --benchmark_out_format=json > /tmp/kg/bench-$t-$r.txt 2>&1"
  grep BM_ /tmp/kg/bench-$t-$r.txt | grep -v "_mean\|_median\|_stddev\|_cv" | cut -c1-60,90-200
done; done
echo BENCHDONE
step bash -c "timeout 60 $B/test_gpu_e3 'GPU MSM*' > /tmp/kg/test-e3-msm.txt 2>&1"
tail -3 /tmp/kg/test-e3-msm.txt
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
step timeout 45 $NCU --clock-control none -k regex:sum_chunks -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis -o /tmp/kg/msm-e3 $B/bench_gpu_e3 --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1' > /tmp/kg/ncu-e3.log 2>&1
$NCU -i /tmp/kg/msm-e3.ncu-rep --page details > /tmp/kg/msm-e3-details.txt 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Issue Slots Busy|No Eligible|spill" /tmp/kg/msm-e3-details.txt
echo DONE
