#!/usr/bin/python3
"""Independent computation of compare's block-design analysis (tests/test_compare_analysis.cpp).

    blocks_crosscheck.py A.jsonl B.jsonl PHASE METRIC

Groups each file's measured samples by process_id, takes each process's median of the phase's
metric with numpy, and runs scipy's two-sided Mann-Whitney U test on the two lists of medians
(exact distribution when there are no ties and both sides have at most 20 values, as compare;
else the normal approximation with continuity correction). Prints JSON.
"""
import json
import sys

import numpy as np
from scipy import stats


def process_medians(path, phase, metric):
    by = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("type") != "sample" or rec.get("warmup"):
                continue
            by.setdefault(rec["process_id"], []).append(rec["phases"][phase][metric])
    return [float(np.median(v)) for v in by.values()]


a = process_medians(sys.argv[1], sys.argv[3], sys.argv[4])
b = process_medians(sys.argv[2], sys.argv[3], sys.argv[4])
exact = len(set(a + b)) == len(a + b) and len(a) <= 20 and len(b) <= 20
r = stats.mannwhitneyu(a, b, alternative="two-sided", method="exact" if exact else "asymptotic", use_continuity=True)
print(json.dumps({"n_a": len(a), "n_b": len(b), "median_a": float(np.median(a)), "median_b": float(np.median(b)),
                  "p": float(r.pvalue), "exact": exact}))
