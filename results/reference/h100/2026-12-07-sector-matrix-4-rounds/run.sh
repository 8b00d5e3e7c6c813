#!/usr/bin/env bash
# The variant matrix at sector size, 4 rounds, with binaries built on the development VM.
# Runs detached (setsid); logs in /tmp/kg; poll.sh follows it.
set -u
root=$PWD
mkdir -p /tmp/kg /tmp/src /tmp/deps
exec > /tmp/kg/pipeline.log 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; "$@"; local rc=$?; echo "== $(date -u +%H:%M:%S) exit $rc"; return $rc; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,utilization.gpu,clocks.sm,clocks.max.sm --format=csv
nproc; free -g; df -h /tmp; date -u
tar -xJf $root/.device/m4/src-5ce.tar.xz -C /tmp/src; cmake -DSRC_DIR=/tmp/src -DPRINT_HASH=1 -P /tmp/src/cmake/provenance_gen.cmake
for f in .device/m4/*.deb; do dpkg -x "$f" /tmp/deps; done
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
c=$(find /usr/local/cuda/ /usr/local/cuda-13*/ -name 'libcupti.so.13*' 2>/dev/null | head -1); echo "cupti: $c"
[ -n "$c" ] && cp -L "$c" /tmp/deps/usr/lib/x86_64-linux-gnu/libcupti.so.13
cd /tmp/src
tar -xJf "$root/.device/m4/bins.tar.xz"
bad=""
for p in baseline pinned smallvec presize all; do
  ldd build/$p/harness/cuzk-bench | grep 'not found'
  build/$p/harness/cuzk-bench info --json > /tmp/kg/info-$p.json || bad="$bad $p"
done
echo "binaries that do not run:${bad:- none}"
[ -n "$bad" ] && { echo DONE; exit 1; }
echo SETUPDONE
mkdir -p results/local/params
step build/all/harness/cuzk-bench srs generate --challenges 16 --layers 11 --parents 14 --depth 30 --params-seed 1 --backend cuda \
  -o results/local/params/porep-c16-l11-p14-d30-seed1.params > /tmp/kg/srs-generate.txt 2>&1
tail -5 /tmp/kg/srs-generate.txt
ls -la results/local/params
echo KEYDONE
mx=/tmp/kg/mx; mkdir -p $mx
step build/baseline/harness/cuzk-bench matrix --variants baseline,pinned,smallvec,presize --suite e2e \
  --case porep-32g-c16-serial --backend cuda --rounds 4 --warmup 0 --no-build --allow-dirty --source-dir /tmp/src \
  --seed 2030 --out-dir $mx/sector-matrix > $mx/sector-matrix.txt 2> $mx/sector-matrix.err
echo "== matrix exit"
cat $mx/sector-matrix.txt
step bash -c "build/baseline/harness/cuzk-bench report $mx/sector-matrix > $mx/report.txt 2>&1"
echo MATRIXDONE
tar -czf /tmp/kg/raw.tgz -C /tmp/kg mx srs-generate.txt info-baseline.json info-all.json
echo DONE
