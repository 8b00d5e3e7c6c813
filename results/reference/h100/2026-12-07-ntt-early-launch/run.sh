#!/usr/bin/env bash
# NTT passes launched early (programmatic dependent launch) against plain launches: the GPU NTT
# tests, then BM_gpu_ntt_forward with both, interleaved. Binaries built on the development VM.
set -u
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g | head -2; date -u
CUZK_DEVICE_DEBS=.device/ntt/debs source scripts/device-deps.sh
B=.device/ntt/bin
ldd $B/test_gpu $B/bench_gpu | grep 'not found'
step bash -c "timeout 240 $B/test_gpu '*NTT*,GPU H *,the overlapped proving stage*,GPU proofs of the PoRep*' --durations yes > $OUT/test-ntt.txt 2>&1"
tail -4 $OUT/test-ntt.txt
step bash -c "timeout 200 $B/bench_gpu --benchmark_filter='BM_gpu_ntt_forward/log_n:2[0-4]/' --benchmark_repetitions=6 --benchmark_enable_random_interleaving=true --benchmark_out=$OUT/ntt-small.json --benchmark_out_format=json > $OUT/ntt-small.txt 2>&1"
grep -E "_median|_cv" $OUT/ntt-small.txt
step bash -c "timeout 150 $B/bench_gpu --benchmark_filter='BM_gpu_ntt_forward/log_n:26/' --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_out=$OUT/ntt-26.json --benchmark_out_format=json > $OUT/ntt-26.txt 2>&1"
grep -E "_median" $OUT/ntt-26.txt
