#!/usr/bin/python3
"""Reference values for tests/test_change_points.cpp, computed by brute force with numpy.

Reads a JSON list [{"y": [...], "min_segment": k}, ...] from argv[1] and prints one JSON list:
per series, the E-divisive energy statistic (Matteson & James 2014, alpha = 1) of every split
tau = k .. n - k, each from all pairwise distances afresh ("all_q", in tau order), the first tau
with the largest ("index", "q"), and the pooled two-sample t-test's two-sided p-value at that tau
(scipy.stats.ttest_ind, equal_var=True; null where scipy is missing).
"""
import json
import sys

import numpy as np

try:
    from scipy import stats
except ImportError:  # the caller then checks the statistic only
    stats = None


def energy(x, z):
    m, n = len(x), len(z)
    cross = np.abs(x[:, None] - z[None, :]).sum()
    # Each pair once: half the full matrix (its diagonal is 0).
    within_x = np.abs(x[:, None] - x[None, :]).sum() / 2
    within_z = np.abs(z[:, None] - z[None, :]).sum() / 2
    mean_x = within_x / (m * (m - 1) / 2) if m >= 2 else 0.0
    mean_z = within_z / (n * (n - 1) / 2) if n >= 2 else 0.0
    return m * n / (m + n) * (2 * cross / (m * n) - mean_x - mean_z)


def main():
    out = []
    for case in json.load(open(sys.argv[1])):
        y = np.array(case["y"], dtype=float)
        k = case["min_segment"]
        taus = list(range(k, len(y) - k + 1))
        qs = [float(energy(y[:t], y[t:])) for t in taus]
        best = int(np.argmax(qs))
        tau = taus[best]
        p = None
        if stats is not None:
            p = float(stats.ttest_ind(y[:tau], y[tau:], equal_var=True).pvalue)
        out.append({"index": tau, "q": qs[best], "all_q": qs, "p": p})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
