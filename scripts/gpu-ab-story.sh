#!/usr/bin/env bash
# The A/B of the pinning story (docs/ab.md) on the GPU machine, in steps that each fit
# one device call:
#
#   scripts/gpu-ab-story.sh OUT_DIR build       configure and build the baseline and pinned presets
#   scripts/gpu-ab-story.sh OUT_DIR ab          ab --a baseline --b pinned, e2e/gpu-medium, 5 rounds
#   scripts/gpu-ab-story.sh OUT_DIR ab_stable   the same with --stable and 3 repetitions per round (blocks)
#   scripts/gpu-ab-story.sh OUT_DIR report      report.md/report.html of each A/B folder
#   scripts/gpu-ab-story.sh OUT_DIR overhead    the phase scope's cost with and without OS counters
#   scripts/gpu-ab-story.sh OUT_DIR counters    gpu-medium's proof with GPU counters, baseline and pinned
#   scripts/gpu-ab-story.sh OUT_DIR counters_cost  the same proof with and without --gpu-counters (baseline)
#   scripts/gpu-ab-story.sh OUT_DIR build_baseline  configure and build the baseline preset only
#
# Steps may be chained. Logs and the A/B folders land in OUT_DIR. Needs the Debian packages of
# docs/gpu-machine.md in .device/. Exit status: that of the first failed step.
set -uo pipefail
out=${1:?usage: scripts/gpu-ab-story.sh OUT_DIR STEP...}
shift
mkdir -p "$out"
source scripts/device-deps.sh
bench=$PWD/build/baseline/harness/cuzk-bench

step_build() {
  local p
  for p in baseline pinned; do
    cmake --preset $p -DCMAKE_PREFIX_PATH="$DEPS_PREFIX" >>"$out/build.log" 2>&1 &&
      cmake --build build/$p -j16 --target cuzk-bench >>"$out/build.log" 2>&1 || return 1
  done
}
step_build_baseline() {
  cmake --preset baseline -DCMAKE_PREFIX_PATH="$DEPS_PREFIX" >>"$out/build.log" 2>&1 &&
    cmake --build build/baseline -j16 --target cuzk-bench >>"$out/build.log" 2>&1
}
step_ab() {
  "$bench" ab --a baseline --b pinned --suite e2e --case gpu-medium --backend cuda --rounds 5 --no-build \
    --out-dir "$out/ab" >"$out/ab.txt" 2>&1
}
step_ab_stable() {
  "$bench" ab --a baseline --b pinned --suite e2e --case gpu-medium --backend cuda --rounds 6 --reps 3 --stable \
    --no-build --out-dir "$out/ab-stable" >"$out/ab_stable.txt" 2>&1
}
step_report() {
  local d
  for d in ab ab-stable; do
    [[ -f $out/$d/b.jsonl ]] || continue
    "$bench" report "$out/$d" --python "$(command -v python3)" >"$out/report-$d.txt" 2>&1 || return 1
  done
}
step_overhead() {
  cmake --build build/baseline -j16 --target bench_phase_overhead >>"$out/build.log" 2>&1 &&
    build/baseline/suites/bench_phase_overhead --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
      --benchmark_min_time=0.2s >"$out/overhead.txt" 2>&1
}
step_counters() {
  local p
  for p in baseline pinned; do
    build/$p/harness/cuzk-bench prove --backend cuda --partitions 4 --challenges 4 --layers 1 --parents 2 --depth 6 \
      --reps 3 --warmup 1 --gpu-counters default --out "$out/counters-$p.jsonl" --force >"$out/counters-$p.txt" 2>&1 || return 1
  done
}
step_counters_cost() {
  local mode sector="--backend cuda --partitions 4 --challenges 4 --layers 1 --parents 2 --depth 6 --reps 5 --warmup 1"
  for mode in off on; do
    /usr/bin/time -f "%e s elapsed" build/baseline/harness/cuzk-bench prove $sector \
      $([[ $mode == on ]] && echo --gpu-counters default) --out "$out/cost-$mode.jsonl" --force >"$out/cost-$mode.txt" 2>&1 || return 1
  done
}
for s in "$@"; do
  echo "== $s $(date -u +%T)"
  "step_$s" || { echo "step $s failed (see $out)"; tail -20 "$out/$s"*.txt "$out/$s"*.log 2>/dev/null; exit 1; }
done
echo "== done $(date -u +%T)"
