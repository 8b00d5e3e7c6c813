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
#   scripts/gpu-matrix.sh OUT_DIR gpu_tests    build and run the GPU tests (label gpu) in build/baseline
#
# Logs and the matrix folder land in OUT_DIR. Needs the Debian packages of docs/gpu-machine.md in
# .device/. Exit status: that of the first failed step.
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
      --rounds 5 --warmup 1 --no-build --allow-dirty --seed 2026 --out-dir "$out/matrix" >"$out/matrix.txt" 2>"$out/matrix.err" ||
      { tail -20 "$out/matrix.err"; exit 1; } ;;
  factorial)
    "$bench" matrix --factorial pinned,smallvec,presize --suite e2e --case gpu-medium --backend cuda \
      --rounds 5 --warmup 1 --allow-dirty --seed 2027 --out-dir "$out/factorial" >"$out/factorial.txt" 2>"$out/factorial.err" ||
      { tail -20 "$out/factorial.err"; exit 1; } ;;
  report) "$bench" report "$out/matrix" >"$out/report.txt" 2>&1 || { cat "$out/report.txt"; exit 1; } ;;
  gpu_tests)
    cmake --build build/baseline -j16 --target test_gpu >>"$out/build.log" 2>&1 &&
      (cd build/baseline && ctest -L gpu --output-on-failure) >"$out/gpu_tests.txt" 2>&1 || { tail -40 "$out/gpu_tests.txt"; exit 1; } ;;
  *) echo "unknown step '${1:-}'"; exit 2 ;;
esac
echo "== done $(date -u +%T)"
