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
fi
