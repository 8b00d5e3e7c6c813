#!/usr/bin/env bash
# Fuzzes the input readers with libFuzzer (docs/fuzzing.md).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     (default: all, 20 s per target)
#
# Configures and builds the preset `fuzz` (clang-14, ASan + UBSan) in build/fuzz, then runs each
# target for SECONDS on a temporary copy of its committed corpus (tests/fuzz/corpus/<target>/, never
# modified) with its dictionary. A crash, leak, timeout or sanitizer report stops the run: the
# reproducer is copied to tests/fixtures/fuzz/<target>/crash-<sha1> (replayed by the ctest
# test fuzz_regressions) and the script exits 1 naming the target and the file.
#
# For a long campaign (docs/fuzzing.md):
#   CUZK_FUZZ_WORK=DIR  keep each target's working corpus, log and artifacts in DIR/<target>/
#                       (created from the committed corpus; a later run resumes from it)
#   CUZK_FUZZ_BIN=DIR   run the fuzz_<target> binaries found in DIR and build nothing (a
#                       snapshot that a rebuild of build/fuzz cannot change mid-campaign)
#   CUZK_FUZZ_PARALLEL=N  targets fuzzed at once (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(r1cs wtns zkey params proof_json public_json vk_json results suite gate gbench g1 g2 manifest gpu_counters)
want="${1:-all}"
secs="${2:-20}"
case "$secs" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; exit 2 ;; esac
parallel="${CUZK_FUZZ_PARALLEL:-$(nproc)}"
case "$parallel" in ''|*[!0-9]*|0) echo "fuzz.sh: CUZK_FUZZ_PARALLEL must be a positive whole number, not '$parallel'" >&2; exit 2 ;; esac
if [ "$want" != all ]; then
  found=0
  for t in "${TARGETS[@]}"; do [ "$t" = "$want" ] && found=1; done
  [ $found = 1 ] || { echo "fuzz.sh: unknown target '$want' (one of: all ${TARGETS[*]})" >&2; exit 2; }
  TARGETS=("$want")
fi
command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 not found (scripts/setup.sh installs it)" >&2; exit 2; }

bin="${CUZK_FUZZ_BIN:-}"
if [ -n "$bin" ]; then
  for t in "${TARGETS[@]}"; do
    [ -x "$bin/fuzz_$t" ] || { echo "fuzz.sh: CUZK_FUZZ_BIN: no executable $bin/fuzz_$t" >&2; exit 2; }
  done
else
  bin=build/fuzz/tests/fuzz
  jobs="${CUZK_FUZZ_JOBS:-$(nproc)}"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake --preset fuzz "${launcher[@]}" >/dev/null
  build_targets=()
  for t in "${TARGETS[@]}"; do build_targets+=(--target "fuzz_$t"); done
  cmake --build build/fuzz -j"$jobs" "${build_targets[@]}"
fi

if [ -n "${CUZK_FUZZ_WORK:-}" ]; then
  work="$CUZK_FUZZ_WORK"
  mkdir -p "$work" || { echo "fuzz.sh: CUZK_FUZZ_WORK: cannot create '$work'" >&2; exit 2; }
else
  work="$(mktemp -d /tmp/cuzk-fuzz.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
fi
# CPU seconds beside wall seconds, where GNU time is installed: a campaign sharing its cores
# with other work says how much fuzzing it really got.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "cpu_seconds %U user %S system, wall %e")
# -malloc_limit_mb=256: one allocation of more than 256 MiB from an input of a few kilobytes is
# a finding (a size taken from a header before the bytes behind it were checked), not only one
# that exhausts memory (-rss_limit_mb).
# One thread for the readers that use the thread pool (.zkey): the fuzzer runs one input at a
# time, and a pool as wide as the machine only adds noise on a shared runner.
export CUZK_THREADS="${CUZK_THREADS:-1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# One target: its corpus, a bounded libFuzzer run, the exit status in $work/<target>/rc.
fuzz_one() {
  local t=$1
  local corpus="$work/$t/corpus" artifacts="$work/$t/artifacts"
  mkdir -p "$corpus" "$artifacts"
  for f in tests/fuzz/corpus/"$t"/*; do  # a kept corpus (CUZK_FUZZ_WORK) resumes as it was
    [ -e "$corpus/$(basename "$f")" ] || cp "$f" "$corpus"/
  done
  local dict=()
  [ -e "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
  local rc=0
  "${timer[@]}" "$bin/fuzz_$t" "$corpus" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$work/$t/log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t/rc"
}

# The statistics of a finished target; on a failure, its reproducers kept and exit 1.
report_one() {
  local t=$1 rc artifacts="$work/$1/artifacts"
  rc=$(cat "$work/$t/rc")
  echo "fuzz.sh: $t for ${secs} s"
  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|cpu_seconds)' "$work/$t/log" |
    sed "s/^/  /" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$work/$t/log" >&2
    mkdir -p tests/fixtures/fuzz/"$t"
    local kept=() f dest
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      dest="tests/fixtures/fuzz/$t/crash-$(sha1sum "$f" | cut -c1-40)"
      cp "$f" "$dest"
      kept+=("$dest")
    done
    echo "fuzz.sh: target $t failed (exit $rc); reproducer: ${kept[*]:-none written (see the log above)}" >&2
    echo "fuzz.sh: replay with $bin/fuzz_$t ${kept[0]:-FILE}" >&2
    exit 1
  fi
}

# Targets run CUZK_FUZZ_PARALLEL at a time (default: one per core; each fuzzer is one thread),
# so every target still gets its full SECONDS while the whole run takes a fraction of the sum.
for ((i = 0; i < ${#TARGETS[@]}; i += parallel)); do
  batch=("${TARGETS[@]:i:parallel}")
  for t in "${batch[@]}"; do fuzz_one "$t" & done
  wait
  for t in "${batch[@]}"; do report_one "$t"; done
done
echo "fuzz.sh: ${#TARGETS[@]} target(s), ${secs} s each: no crash"
