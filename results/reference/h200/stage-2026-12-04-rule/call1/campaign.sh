#!/usr/bin/env bash
# Seventh session, call 1: build `all` from head.tar (a committed state) and run its GPU tests and
# the stage benchmarks at 2^24 and 2^27. Everything lands in /root/out.
set -x
REPO=$PWD
O=/root/out; mkdir -p $O
exec > >(tee -a $O/campaign.log) 2>&1
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu,memory.used --format=csv
rm -rf /tmp/head && mkdir -p /tmp/head && tar -xf .device/head.tar -C /tmp/head
cp -r .device /tmp/head/
cd /tmp/head
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX
EXTRA=${CUZK_EXTRA_CUDA_FLAGS:-}
t0=$(date +%s)
cmake --preset all ${EXTRA:+-DCMAKE_CUDA_FLAGS="$EXTRA"} > $O/build-all.log 2>&1
cmake --build build/all -j16 --target test_gpu bench_gpu cuzk-bench >> $O/build-all.log 2>&1; echo "build rc=$?"
t1=$(date +%s); echo "build_s=$((t1-t0))" | tee $O/build-time.txt
grep -c 'warning:' $O/build-all.log
grep -n 'warning:' $O/build-all.log | head
(cd build/all && ctest -L gpu --output-on-failure) > $O/tests-all.txt 2>&1; echo "tests rc=$?"
t2=$(date +%s); echo "tests_s=$((t2-t1))" | tee -a $O/build-time.txt
tail -15 $O/tests-all.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,utilization.gpu,memory.used --format=csv
build/all/suites/bench_gpu --benchmark_filter='BM_prove_stage_cuda_overlap/log_n:24/pinned:[01]/zc:0$' \
  --benchmark_out=$O/stage24.json --benchmark_out_format=json > $O/stage24.txt 2> $O/stage24.err; echo "stage24 rc=$?"
cat $O/stage24.txt | tail -5
build/all/suites/bench_gpu --benchmark_filter='BM_prove_stage_cuda_overlap/log_n:27/pinned:[01]/table:20$' \
  --benchmark_out=$O/stage27.json --benchmark_out_format=json > $O/stage27.txt 2> $O/stage27.err; echo "stage27 rc=$?"
cat $O/stage27.txt | tail -5
build/all/suites/bench_gpu --benchmark_filter='BM_gpu_msm_equal_chunks/log_n:2[2-6]/c:[0-9]+/mix:0/eq:[01]/chunk:0$|BM_gpu_msm_g1_overlap_equal/log_n:24' \
  --benchmark_out=$O/sweep.json --benchmark_out_format=json > $O/sweep.txt 2> $O/sweep.err; echo "sweep rc=$?"
cat $O/sweep.txt | grep BM_ | awk '{print $1, $2}'
date -u; echo CAMPAIGN-DONE
