#!/usr/bin/env bash
# The README's main command: set up, build, and run the main job.
# Until the prover's A/B lands, the main job is the harness's own self-measurement:
# a phased synthetic workload recorded through the full measurement path.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
bench=build/default/harness/cuzk-bench
"$bench" info
mkdir -p results/local
out="results/local/selfmeasure-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
"$bench" selfmeasure --reps 5 --out "$out"
"$bench" trace "$out" -o "${out%.jsonl}.trace.json"
echo "results: $out"
echo "trace (open in https://ui.perfetto.dev): ${out%.jsonl}.trace.json"
