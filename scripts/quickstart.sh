#!/usr/bin/env bash
# The README's main command: set up, build two variants, and run a quick A/B of the prover on
# the CPU (baseline against smallvec, the suite suites/quick.toml), ending in the comparison
# table and the path of the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)" --target cuzk-bench
bench=build/default/harness/cuzk-bench
"$bench" info
out="results/local/$(date -u +%Y%m%dT%H%M%SZ)-baseline-vs-smallvec"
# ab builds build/baseline and build/smallvec, checks their provenance against this tree,
# runs the suite interleaved (A, B, A, B, ...) and prints the comparison.
"$bench" ab --a baseline --b smallvec --suite quick --quick --rounds "${CUZK_AB_ROUNDS:-5}" --warmup 1 --out-dir "$out"
"$bench" report "$out"
