#!/usr/bin/env bash
# Sets everything up and runs all tests: the README's test command, and what CI runs.
#   scripts/test.sh            setup, build the default preset, run ctest
# Environment: CUZK_TEST_JOBS (parallel ctest jobs, default: cores), CUZK_SKIP_SANITIZE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs="${CUZK_TEST_JOBS:-$(nproc)}"

echo "== build: default preset (build/default)"
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"

echo "== tests: default preset"
ctest --preset default -j"$jobs" --output-on-failure --label-exclude sanitize-only

if [ "${CUZK_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== build + tests: sanitize preset (ASan + UBSan), tests labelled 'sanitize'"
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize -j"$(nproc)" --target cuzk_sanitize_tests
  ctest --preset sanitize -j"$jobs" --output-on-failure -L sanitize

  echo "== provenance across presets: different flags, the same source hash"
  python3 - build/default/harness/cuzk-bench build/sanitize/harness/cuzk-bench <<'PY'
import json, subprocess, sys
a, b = (json.loads(subprocess.run([p, "info", "--json"], check=True, capture_output=True, text=True).stdout)["provenance"]
        for p in sys.argv[1:3])
assert a["source_hash"] == b["source_hash"], f"source hash differs: {a['source_hash']} vs {b['source_hash']}"
assert a["flags"] != b["flags"], "the two presets report the same flags"
diff = {k: (a["flags"][k], b["flags"].get(k)) for k in a["flags"] if a["flags"][k] != b["flags"].get(k)}
print(f"same source hash {a['source_hash'][:16]}..., flags differ: {diff}")
PY
fi
