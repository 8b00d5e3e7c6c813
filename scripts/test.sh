#!/usr/bin/env bash
# Sets everything up and runs all tests: the README's test command, and what CI runs.
#   scripts/test.sh            setup, build the default preset, run ctest
# Environment: CUZK_TEST_JOBS (parallel ctest jobs, default: cores), CUZK_SKIP_FUZZ=1,
# CUZK_FUZZ_SECONDS (per fuzz target, default 6), CUZK_SANITIZE_SUBSET=1 (also the ASan subset).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs="${CUZK_TEST_JOBS:-$(nproc)}"

echo "== build: default preset (build/default)"
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"

echo "== tests: default preset"
ctest --preset default -j"$jobs" --output-on-failure --label-exclude sanitize-only

if [ "${CUZK_SKIP_FUZZ:-0}" != 1 ]; then
  # Every input reader under libFuzzer with ASan + UBSan (clang-14, preset fuzz), for a bounded
  # time each on its committed corpus plus fresh inputs; a crash fails the run and leaves its
  # reproducer in tests/fixtures/fuzz/<target>/ (docs/fuzzing.md).
  echo "== fuzz: every reader for ${CUZK_FUZZ_SECONDS:-6} s (preset fuzz, ASan + UBSan)"
  scripts/fuzz.sh all "${CUZK_FUZZ_SECONDS:-6}"

  echo "== provenance across presets: different flags, the same source hash"
  cmake --build build/fuzz -j"$(nproc)" --target cuzk_provenance_print >/dev/null
  python3 - <<'PY'
import json, subprocess
a = json.loads(subprocess.run(["build/default/harness/cuzk-bench", "info", "--json"], check=True,
                              capture_output=True, text=True).stdout)["provenance"]
b = json.loads(subprocess.run(["build/fuzz/tests/fuzz/cuzk_provenance_print"], check=True,
                              capture_output=True, text=True).stdout)
assert a["source_hash"] == b["source_hash"], f"source hash differs: {a['source_hash']} vs {b['source_hash']}"
assert a["flags"] != b["flags"], "the two presets report the same flags"
diff = {k: (a["flags"][k], b["flags"].get(k)) for k in a["flags"] if a["flags"][k] != b["flags"].get(k)}
print(f"same source hash {a['source_hash'][:16]}..., flags differ: {diff}")
PY
fi

# The ASan + UBSan run of the CPU tests and the ThreadSanitizer run do not fit in CI's time
# budget next to the fuzzers: scripts/sanitize.sh runs them (docs/sanitizers.md).
if [ "${CUZK_SANITIZE_SUBSET:-0}" = 1 ]; then
  echo "== build + tests: sanitize preset (ASan + UBSan), tests labelled 'sanitize'"
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize -j"$(nproc)" --target cuzk_sanitize_tests
  ctest --preset sanitize -j"$jobs" --output-on-failure -L sanitize
fi
