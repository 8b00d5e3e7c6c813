#!/usr/bin/env bash
# The GPU tests of the head, then which kernel of msm_l carries its two per-process levels: six
# processes of `prove --stable --reps 10`, each under Nsight Systems, msm_l's and msm_a's kernels.
# On an H200 also the G1 MSM and NTT anchors. Binaries built on the development VM.
set -u
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
nvidia-smi --query-gpu=name,driver_version,memory.used,clocks.sm,clocks.max.sm --format=csv; nproc; date -u
CUZK_DEVICE_DEBS=.device/h source scripts/device-deps.sh
tar -xJf .device/h/bins.tar.xz
B=$PWD/build/default/harness/cuzk-bench
ldd $B build/default/tests/test_gpu | grep 'not found'
$B info --json | python3 -c "import json,sys; p=json.load(sys.stdin)['provenance']; print(p['source_hash'][:12], p['git_commit'][:7], p['preset'])"
step bash -c "CUZK_BENCH=$B timeout 300 build/default/tests/test_gpu --durations yes > $OUT/test-gpu.txt 2>&1"
grep -E "^[0-9.]+ s:" $OUT/test-gpu.txt | sort -rn | head -5; tail -3 $OUT/test-gpu.txt
if [[ $gpu == *H200* ]]; then
  step bash -c "timeout 120 build/default/suites/bench_gpu --benchmark_filter='BM_gpu_msm_g1/log_n:24/pinned:1|BM_gpu_msm_g1_overlap/log_n:24/slices:0|BM_gpu_ntt_forward/log_n:2[0246]/order:0/early:1' --benchmark_out=$OUT/anchors.json --benchmark_out_format=json > $OUT/anchors.txt 2>&1"
  grep BM_ $OUT/anchors.txt
fi
nsys=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1); echo "nsys: $nsys"
mkdir -p /tmp/kg
for i in 1 2 3 4 5 6; do
  echo "== $(date -u +%T) capture $i"
  "$nsys" profile --trace=cuda,nvtx -o /tmp/kg/cap-$i "$B" prove --backend cuda --stable --reps 10 --out $OUT/cap-$i.jsonl > $OUT/cap-$i.log 2>&1 &&
    "$nsys" export --type sqlite -o /tmp/kg/cap-$i.sqlite /tmp/kg/cap-$i.nsys-rep >> $OUT/cap-$i.log 2>&1 &&
    python3 scripts/nsys-gpu-time.py --sqlite /tmp/kg/cap-$i.sqlite --results $OUT/cap-$i.jsonl --kernels proof/prove/msm_l --kernels proof/prove/msm_a > $OUT/cap-$i-kernels.txt 2>&1
  echo "rc $?"; rm -f /tmp/kg/cap-$i.sqlite /tmp/kg/cap-$i.nsys-rep
  grep -A14 "msm_l" $OUT/cap-$i-kernels.txt | head -16
done
echo DONE
