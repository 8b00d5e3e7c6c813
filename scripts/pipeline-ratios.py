#!/usr/bin/env python3
"""Throughput table of a pipeline-suite results file: the median proofs per minute of each case
over its measured runs, and the ratios the engine is about (overlap on / off at the same batch
size, batch 2 / batch 1 with the same overlap), all from the one file, so from one run.

    scripts/pipeline-ratios.py results/reference/h200/pipeline.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    runs = defaultdict(dict)  # case -> run -> proofs per minute
    params = {}
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    d = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"pipeline-ratios: {path}:{n}: not JSON ({e})")
                p = d.get("pipeline")
                if not p or d.get("warmup"):
                    continue
                runs[d["case"]][p["run"]] = p["proofs_per_minute"]
                params[d["case"]] = d.get("parameters", {})
    except OSError as e:
        sys.exit(f"pipeline-ratios: {e}")
    if not runs:
        sys.exit(f"pipeline-ratios: {path}: no pipeline samples (is it a `run --suite pipeline` file?)")
    med = {c: statistics.median(r.values()) for c, r in runs.items()}
    print("| case | runs | proofs/min (median) |")
    print("| --- | ---: | ---: |")
    for c in runs:
        print(f"| {c} | {len(runs[c])} | {med[c]:.1f} |")
    print()
    print("| ratio | value |")
    print("| --- | ---: |")
    for prefix in ("", "gpu-"):
        for b in ("b1", "b2"):
            on, off = f"{prefix}{b}-overlap", f"{prefix}{b}-serial"
            if on in med and off in med:
                print(f"| {on} / {off} | {med[on] / med[off]:.2f} |")
        for mode in ("overlap", "serial"):
            two, one = f"{prefix}b2-{mode}", f"{prefix}b1-{mode}"
            if two in med and one in med:
                print(f"| {two} / {one} | {med[two] / med[one]:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/pipeline-ratios.py PIPELINE_RESULTS.jsonl")
    main(sys.argv[1])
