#!/usr/bin/env bash
# The GPU tests of the head and the NTT's unit-twiddle skip against the build before it (bench_gpu,
# alternating processes), then the sector matrix baseline,all at 4 rounds with the binaries of
# 5ce8e74 (as the 4-variant run). Runs detached (setsid); logs in /tmp/kg; poll.sh follows it.
set -u
root=$PWD
mkdir -p /tmp/kg /tmp/src
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; df -h /tmp; date -u
CUZK_DEVICE_DEBS=.device/w3 source scripts/device-deps.sh
tar -xJf .device/w3/dbins.tar.xz
B=$PWD/build/default/harness/cuzk-bench
ldd $B build/default/tests/test_gpu build/default/suites/bench_gpu | grep 'not found'
$B info --json | python3 -c "import json,sys; p=json.load(sys.stdin)['provenance']; print(p['source_hash'][:12], p['git_commit'][:7], p['preset'], p.get('dirty'))"
step bash -c "CUZK_BENCH=$B timeout 300 build/default/tests/test_gpu --durations yes > /tmp/kg/test-gpu.txt 2>&1"
grep -E "^[0-9.]+ s:" /tmp/kg/test-gpu.txt | sort -rn | head -5; tail -3 /tmp/kg/test-gpu.txt
F='BM_gpu_ntt_forward/log_n:(20|21|22|24)/order:[01]/early:1'
for r in 1 2 3; do
  for v in before after; do
    bin=build/default/suites/bench_gpu; [ $v = before ] && bin=build/default/suites/bench_gpu.before
    step bash -c "timeout 120 $bin --benchmark_filter='$F' --benchmark_repetitions=12 --benchmark_enable_random_interleaving=true --benchmark_out=/tmp/kg/ntt-$v-$r.json --benchmark_out_format=json > /tmp/kg/ntt-$v-$r.txt 2>&1"
    grep -E "_median" /tmp/kg/ntt-$v-$r.txt
  done
done
echo NTTDONE
tar -xJf .device/w3/src-5ce.tar.xz -C /tmp/src; cmake -DSRC_DIR=/tmp/src -DPRINT_HASH=1 -P /tmp/src/cmake/provenance_gen.cmake
cd /tmp/src
tar -xJf "$root/.device/w3/mbins.tar.xz"
bad=""
for p in baseline all; do
  ldd build/$p/harness/cuzk-bench | grep 'not found'
  build/$p/harness/cuzk-bench info --json > /tmp/kg/info-$p.json || bad="$bad $p"
done
echo "binaries that do not run:${bad:- none}"
[ -n "$bad" ] && { echo DONE; exit 1; }
mkdir -p results/local/params
step build/all/harness/cuzk-bench srs generate --challenges 16 --layers 11 --parents 14 --depth 30 --params-seed 1 --backend cuda \
  -o results/local/params/porep-c16-l11-p14-d30-seed1.params > /tmp/kg/srs-generate.txt 2>&1
tail -5 /tmp/kg/srs-generate.txt
echo KEYDONE
mx=/tmp/kg/mx; mkdir -p $mx
step build/baseline/harness/cuzk-bench matrix --variants baseline,all --suite e2e \
  --case porep-32g-c16-serial --backend cuda --rounds 4 --warmup 0 --no-build --allow-dirty --source-dir /tmp/src \
  --seed 2031 --out-dir $mx/sector-matrix > $mx/sector-matrix.txt 2> $mx/sector-matrix.err
cat $mx/sector-matrix.txt
step bash -c "build/baseline/harness/cuzk-bench report $mx/sector-matrix > $mx/report.txt 2>&1"
echo MATRIXDONE
tar -czf /tmp/kg/raw.tgz -C /tmp/kg mx srs-generate.txt info-baseline.json info-all.json
echo DONE
