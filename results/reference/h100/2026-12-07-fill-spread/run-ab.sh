#!/usr/bin/env bash
# msm_l's spread between processes with the later rounds cut to fill (5ce8e74) and before
# (d354f32, chunks of 32): `noise` of the default preset's `prove --stable --gpu-activity`,
# 10 processes x 10 repetitions, alternating builds, two runs each. Logs in /tmp/kg.
set -u
mkdir -p /tmp/kg /tmp/deps /tmp/base
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; date -u
for f in .device/lean/*.deb; do dpkg -x "$f" /tmp/deps; done
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
c=$(find /usr/local/cuda/ /usr/local/cuda-13*/ -name 'libcupti.so.13*' 2>/dev/null | head -1); echo "cupti: $c"
[ -n "$c" ] && cp -L "$c" /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13
tar -xJf .device/lean/bins-h.tar.xz
tar -xJf .device/lean/bins-base.tar.xz -C /tmp/base
new=$PWD/build/default/harness/cuzk-bench; base=/tmp/base/build/default/harness/cuzk-bench
for b in $new $base; do $b info --json | python3 -c "import json,sys; p=json.load(sys.stdin)['provenance']; print(p['source_hash'][:12], p['git_commit'][:7], p['preset'])" || { echo DONE; exit 1; }; done
echo SETUPDONE
for r in 1 2; do
  for side in base new; do
    b=$new; [ $side = base ] && b=$base
    step bash -c "timeout 240 $b noise --processes 10 --reps 10 --workload prove --stable --workload-arg=--backend --workload-arg=cuda --workload-arg=--gpu-activity --out-dir /tmp/kg/noise-$side-$r --markdown > /tmp/kg/noise-$side-$r.md 2> /tmp/kg/noise-$side-$r.err"
    grep -E "msm_|ntt_h|^\| phase" /tmp/kg/noise-$side-$r.md | head -12
  done
done
tar -czf /tmp/kg/raw.tgz -C /tmp/kg $(cd /tmp/kg && ls -d noise-*)
echo DONE
