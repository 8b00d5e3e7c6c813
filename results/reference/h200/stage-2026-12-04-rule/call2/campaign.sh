#!/usr/bin/env bash
# Seventh session, call 2: the equal-chunk rule and the slices' own buckets. Build `all` from
# head.tar, GPU tests, then benchmarks in order of importance. Results in /root/res.
set -x
O=/root/res; mkdir -p $O
exec > >(tee -a $O/campaign.log) 2>&1
date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,utilization.gpu,memory.used --format=csv
rm -rf /tmp/head && mkdir -p /tmp/head && tar -xf .device/head.tar -C /tmp/head
cp -r .device /tmp/head/
cd /tmp/head
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX
t0=$(date +%s)
cmake --preset all > $O/build-all.log 2>&1
cmake --build build/all -j16 --target test_gpu bench_gpu >> $O/build-all.log 2>&1; echo "build rc=$?"
t1=$(date +%s); echo "build_s=$((t1-t0))"
grep -c 'warning:' $O/build-all.log; grep -n 'warning:\|error' $O/build-all.log | head
(cd build/all && ctest -L gpu --output-on-failure) > $O/tests-all.txt 2>&1; echo "tests rc=$?"
t2=$(date +%s); echo "tests_s=$((t2-t1))"
grep -E "FAILED|failed|passed|Passed" $O/tests-all.txt | tail -8
B=build/all/suites/bench_gpu
bench() { local name=$1; shift; $B --benchmark_filter="$1" --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2> $O/$name.err; echo "$name rc=$?"; grep '^BM_' $O/$name.txt | awk '{print $1, $2, $3}'; }
bench g1 'BM_gpu_msm_g1_overlap/log_n:24/slices:0/|BM_gpu_msm_g1_overlap_equal/log_n:24/|BM_gpu_msm_g1/log_n:24/|BM_gpu_msm_g1_staged/log_n:24/slices:0/'
bench stage24 'BM_prove_stage_cuda_overlap/log_n:24/pinned:[01]/zc:0/|BM_prove_stage_cuda_overlap_equal/log_n:24/pinned:0/hc:0/eq:0/'
bench g2 'BM_gpu_msm_g2/log_n:24/mix:0/c:(0|16)/'
bench stage27 'BM_prove_stage_cuda_overlap/log_n:27/pinned:0/table:20/iter'
date -u; echo CAMPAIGN-DONE
