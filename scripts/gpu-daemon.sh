#!/usr/bin/env bash
# cuzkd on the GPU machine (docs/daemon.md), in steps that each fit one device call:
#
#   scripts/gpu-daemon.sh OUT_DIR build PRESET...   configure each preset and build its cuzkd and
#                                                   cuzk-bench (CUDA backend), side by side
#   scripts/gpu-daemon.sh OUT_DIR load ARGS...      cuzk-bench load ARGS (the first built preset's
#                                                   cuzk-bench), its output in OUT_DIR/load-N.txt
#
# That machine has no gRPC, protobuf or SQLite: the Debian packages carried in .device/
# (docs/gpu-machine.md) are unpacked by scripts/device-deps.sh and found through pkg-config, and
# the daemons load them through LD_LIBRARY_PATH. Exit status: that of the failed step.
set -uo pipefail
out=${1:?usage: scripts/gpu-daemon.sh OUT_DIR build PRESET... | load ARGS...}
step=${2:-}
shift 2 || true
mkdir -p "$out"
source scripts/device-deps.sh
export CMAKE_PREFIX_PATH=$DEPS_PREFIX

case $step in
  build)
    [[ $# -gt 0 ]] || { echo "build: name at least one preset" >&2; exit 2; }
    jobs=$(( $(nproc) / $# ))
    pids=()
    for p in "$@"; do
      (cmake --preset "$p" && cmake --build "build/$p" -j"$jobs" --target cuzkd cuzk-bench) >"$out/build-$p.log" 2>&1 &
      pids+=($!)
    done
    rc=0
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    grep -n 'warning:\|cuzkd: not built' "$out"/build-*.log | head -20
    [[ $rc == 0 ]] || { tail -30 "$out"/build-*.log; exit 1; }
    echo "$1" >"$out/.first-preset" ;;
  load)
    preset=$(cat "$out/.first-preset" 2>/dev/null)
    [[ -n $preset && -x build/$preset/harness/cuzk-bench ]] || { echo "load: run the build step first" >&2; exit 2; }
    n=$(ls "$out"/load-*.txt 2>/dev/null | wc -l)
    "build/$preset/harness/cuzk-bench" load "$@" >"$out/load-$n.txt" 2>"$out/load-$n.err"
    rc=$?
    cat "$out/load-$n.txt"; tail -5 "$out/load-$n.err"
    exit $rc ;;
  *)
    echo "unknown step '$step' (build, load)" >&2; exit 2 ;;
esac
