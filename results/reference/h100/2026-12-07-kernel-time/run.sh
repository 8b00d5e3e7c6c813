#!/usr/bin/env bash
# Item 4 on the GPU machine: calibrate on kernel time, the 2^24 stage's spread, the collector's
# overhead in alternating processes, and noise on kernel time. Logs in /tmp/kg.
set -u
mkdir -p /tmp/kg /tmp/head
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; date -u
tar -xzf .device/head.tar.gz -C /tmp/head
cp -r .device /tmp/head/.device
cd /tmp/head
step scripts/gpu-noise-study.sh /tmp/kg/study build_default
echo "warnings: $(grep -c 'warning:' /tmp/kg/study/build.log)"
grep -B2 -A5 ' error' /tmp/kg/study/build.log | head -30
echo BUILDDONE
step scripts/gpu-noise-study.sh /tmp/kg/study calibrate_kernel
head -40 /tmp/kg/study/calibrate_kernel.txt
echo CALDONE
step scripts/gpu-noise-study.sh /tmp/kg/study stage_kernel
tail -30 /tmp/kg/study/stage_kernel.txt
echo STAGEDONE
B=$PWD/build/default/harness/cuzk-bench
cd /tmp/kg
for r in 1 2 3 4; do
  for side in with without; do
    a=""; [ $side = with ] && a=--gpu-activity
    step bash -c "timeout 60 $B prove --backend cuda --stable --reps 10 $a --out ovh-$side-$r.jsonl > /dev/null 2> ovh-$side-$r.err"
  done
done
echo OVHDONE
step bash -c "timeout 240 $B noise --processes 10 --reps 10 --workload prove --stable --workload-arg=--backend --workload-arg=cuda --workload-arg=--gpu-activity --out-dir /tmp/kg/noise --markdown > noise.md 2> noise.err"
head -30 noise.md
echo NOISEDONE
echo DONE
