#!/usr/bin/env bash
# The sanitizer runs that do not fit in CI's time budget (docs/sanitizers.md has the latest
# clean run of each):
#   scripts/sanitize.sh asan   every CPU test under AddressSanitizer + UBSan (preset sanitize)
#   scripts/sanitize.sh tsan   ThreadSanitizer over the threaded code: engine, thread pool,
#                              recorder and phase scopes (preset tsan)
#   scripts/sanitize.sh all    both (the default)
# CI (scripts/test.sh) runs only the sanitize-labelled subset under ASan + UBSan.
# Environment: CUZK_TEST_JOBS (parallel ctest jobs, default: cores). Logs: build/<preset>/sanitize.log.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "$what" in
  asan | tsan | all) ;;
  *) echo "scripts/sanitize.sh: unknown run '$what' (expected asan, tsan or all)" >&2; exit 2 ;;
esac
jobs="${CUZK_TEST_JOBS:-$(nproc)}"

# Tests left out, and why: gpu needs a GPU (CUDA is off in both presets); network-labelled
# interop tests fetch npm packages, which CI's test run already covers.
exclude='gpu|network'

run_asan() {
  echo "== ASan + UBSan: every CPU test (preset sanitize)"
  cmake --preset sanitize >/dev/null || return 1
  cmake --build --preset sanitize -j"$(nproc)" || return 1
  # halt_on_error: the first report fails the test; detect_leaks: LeakSanitizer too.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset sanitize -j"$jobs" --output-on-failure -LE "$exclude" --timeout 3600 2>&1 |
    tee build/sanitize/sanitize.log
  return "${PIPESTATUS[0]}"
}

run_tsan() {
  echo "== ThreadSanitizer: engine, thread pool, recorder, phases (preset tsan)"
  local tests=(engine thread_pool results phases)
  local targets=(cuzk-bench)
  for t in "${tests[@]}"; do targets+=("test_$t"); done
  cmake --preset tsan >/dev/null || return 1
  cmake --build build/tsan -j"$(nproc)" --target "${targets[@]}" || return 1
  local regex
  regex="^($(IFS='|'; echo "${tests[*]}"))\$"
  # second_deadlock_stack: both stacks of a lock-order inversion; halt_on_error: fail the test.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build/tsan -j"$jobs" --output-on-failure -R "$regex" --timeout 3600 2>&1 |
    tee build/tsan/sanitize.log
  return "${PIPESTATUS[0]}"
}

# (set -e does not stop a function called as `f || rc=1`: each step returns 1 by hand.)
rc=0
if [ "$what" = asan ] || [ "$what" = all ]; then run_asan || rc=1; fi
if [ "$what" = tsan ] || [ "$what" = all ]; then run_tsan || rc=1; fi
exit "$rc"
