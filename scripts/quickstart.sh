#!/usr/bin/env bash
# The README's main command: set up, build two variants, and run a quick A/B of the prover on
# the CPU (baseline against smallvec, the suite suites/quick.toml), ending in the comparison
# table and the path of the report. On a machine with a usable GPU it then runs a GPU A/B too:
# baseline against pinned (pageable against pinned a/b/c uploads) on e2e's gpu-medium case
# with --backend cuda, and reports it the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)" --target cuzk-bench
bench=build/default/harness/cuzk-bench
"$bench" info
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="results/local/$stamp-baseline-vs-smallvec"
# ab builds build/baseline and build/smallvec, checks their provenance against this tree,
# runs the suite interleaved (A, B, A, B, ...) and prints the comparison.
"$bench" ab --a baseline --b smallvec --suite quick --quick --rounds "${CUZK_AB_ROUNDS:-5}" --warmup 1 --out-dir "$out"
"$bench" report "$out"

# The GPU case: only where the CUDA backend can run (info --json says so; no GPU, no case).
if "$bench" info --json | grep -q '"cuda_backend_usable": *true'; then
  gout="results/local/$stamp-baseline-vs-pinned-cuda"
  "$bench" ab --a baseline --b pinned --suite e2e --case gpu-medium --backend cuda \
    --rounds "${CUZK_AB_GPU_ROUNDS:-3}" --warmup 1 --out-dir "$gout"
  "$bench" report "$gout"
else
  echo "quickstart: no usable GPU here (cuzk-bench info says why); the GPU A/B was skipped"
fi
