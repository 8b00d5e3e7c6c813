#!/usr/bin/env bash
# The variant matrix on the GPU machine (docs/matrix.md), in steps that each fit one
# device call:
#
#   scripts/gpu-matrix.sh OUT_DIR build P...   configure and build the presets P... (cuzk-bench)
#   scripts/gpu-matrix.sh OUT_DIR matrix       matrix --variants baseline,pinned,smallvec,presize,all,
#                                              e2e/gpu-medium on the GPU, 5 rounds (builds already made)
#   scripts/gpu-matrix.sh OUT_DIR factorial    matrix --factorial pinned,smallvec,presize, the same case
#                                              (builds the combinations of flags it lacks)
#   scripts/gpu-matrix.sh OUT_DIR report       report.md/report.html of the matrix folder
#   scripts/gpu-matrix.sh OUT_DIR sector_start the same five variants on e2e/porep-32g-c16-serial (a 10-partition
#                                              sector a process, synthesis one thread a partition), 4 rounds (3
#                                              can call no change: docs/matrix.md), in the background: longer
#                                              than one device call (builds already made)
#   scripts/gpu-matrix.sh OUT_DIR sector_wait SECONDS
#                                              wait at most SECONDS for it; exit 3 while it still runs
#   scripts/gpu-matrix.sh OUT_DIR gpu_tests    build and run the GPU tests (label gpu) in build/baseline
#
# Logs and the matrix folder land in OUT_DIR. Needs the Debian packages of docs/gpu-machine.md in
# .device/. The binaries are checked against this tree (--source-dir), also where they were built in
# another folder or on another machine. Exit status: that of the first failed step.
set -uo pipefail
out=${1:?usage: scripts/gpu-matrix.sh OUT_DIR STEP [ARGS]...}
shift
mkdir -p "$out"
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX
bench=$PWD/build/baseline/harness/cuzk-bench

build() {
  local p
  for p in "$@"; do
    echo "building $p $(date -u +%T)"
    cmake --preset "$p" >>"$out/build.log" 2>&1 && cmake --build "build/$p" -j16 --target cuzk-bench >>"$out/build.log" 2>&1 ||
      return 1
  done
  grep -n 'warning:' "$out/build.log" | head -20 || true
}
case ${1:-} in
  build) shift; build "$@" || { echo "build failed"; tail -30 "$out/build.log"; exit 1; } ;;
  matrix)
    "$bench" matrix --variants baseline,pinned,smallvec,presize,all --suite e2e --case gpu-medium --backend cuda \
      --rounds 5 --warmup 1 --no-build --allow-dirty --source-dir "$PWD" --seed 2026 --out-dir "$out/matrix" >"$out/matrix.txt" 2>"$out/matrix.err" ||
      { tail -20 "$out/matrix.err"; exit 1; } ;;
  factorial)
    "$bench" matrix --factorial pinned,smallvec,presize --suite e2e --case gpu-medium --backend cuda \
      --rounds 5 --warmup 1 --allow-dirty --seed 2027 --out-dir "$out/factorial" >"$out/factorial.txt" 2>"$out/factorial.err" ||
      { tail -20 "$out/factorial.err"; exit 1; } ;;
  sector_start)
    rm -f "$out/sector-matrix.status"
    setsid nohup bash -c '"$@"; echo $? >"$0"' "$out/sector-matrix.status" \
      "$bench" matrix --variants baseline,pinned,smallvec,presize,all --suite e2e --case porep-32g-c16-serial \
      --backend cuda --rounds 4 --warmup 0 --no-build --allow-dirty --source-dir "$PWD" --seed 2028 \
      --out-dir "$out/sector-matrix" \
      >"$out/sector-matrix.txt" 2>"$out/sector-matrix.err" </dev/null &
    echo "started; follow with: scripts/gpu-matrix.sh $out sector_wait 540" ;;
  sector_wait)
    secs=${2:?sector_wait: the most seconds to wait}
    for ((i = 0; i < secs; i += 5)); do [[ -f $out/sector-matrix.status ]] && break; sleep 5; done
    tail -5 "$out/sector-matrix.err"
    [[ -f $out/sector-matrix.status ]] || { echo "still running"; exit 3; }
    cat "$out/sector-matrix.txt"
    exit "$(cat "$out/sector-matrix.status")" ;;
  report) "$bench" report "$out/matrix" >"$out/report.txt" 2>&1 || { cat "$out/report.txt"; exit 1; } ;;
  gpu_tests)
    cmake --build build/baseline -j16 --target test_gpu >>"$out/build.log" 2>&1 &&
      (cd build/baseline && ctest -L gpu --output-on-failure) >"$out/gpu_tests.txt" 2>&1 || { tail -40 "$out/gpu_tests.txt"; exit 1; } ;;
  *) echo "unknown step '${1:-}'"; exit 2 ;;
esac
echo "== done $(date -u +%T)"
