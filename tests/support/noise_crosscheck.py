#!/usr/bin/python3
"""Independent computation of `cuzk-bench noise`'s statistics with scipy, for tests/test_noise.cpp.

usage: /usr/bin/python3 noise_crosscheck.py RESULTS.jsonl [PHASE]

Reads a cuzk results file whose samples carry "process_id", takes one phase (default "proof")
on its primary metric (gpu_ns when every measured sample has one, else wall_ns), and prints
one JSON object:
  anova:    scipy.stats.f_oneway on ln(time) per process, first repetition of each left out;
            MSW by numpy, MSB = F * MSW, n0 = (N - sum n_i^2 / N) / (k - 1)
  trend:    scipy.stats.linregress of ln(time) on the repetition index after removing each
            process's means; linregress's stderr assumes N - 2 degrees of freedom, the pooled
            within-process model has N - k - 1 (k means and the slope), so it is rescaled
  first:    scipy.stats.ttest_1samp of ln(first) - mean(ln later) over processes
  spearman: scipy.stats.spearmanr of the time with each env reading over the later repetitions
Exit status 3 when scipy is missing (scripts/setup.sh installs python3-scipy).
"""
import json
import math
import sys
from collections import OrderedDict

try:
    import numpy as np
    from scipy import stats
except ImportError as e:  # the test turns this into a failure naming scripts/setup.sh
    print(f"noise_crosscheck.py: {e}: run scripts/setup.sh (it installs python3-scipy)", file=sys.stderr)
    sys.exit(3)


def main():
    path = sys.argv[1]
    phase = sys.argv[2] if len(sys.argv) > 2 else "proof"
    procs = OrderedDict()
    with open(path) as f:
        for line in f:
            s = json.loads(line)
            if s.get("type") != "sample" or s.get("warmup") or phase not in s["phases"]:
                continue
            procs.setdefault(s["process_id"], []).append(s)
    samples = [s for v in procs.values() for s in v]
    metric = "gpu_ns" if all(isinstance(s["phases"][phase].get("gpu_ns"), (int, float)) for s in samples) else "wall_ns"
    series = []
    for v in procs.values():
        v.sort(key=lambda s: s["repetition"])
        series.append([(float(s["phases"][phase][metric]), s.get("env", {}).get("values", {})) for s in v])

    # ANOVA on the later repetitions.
    groups = [np.log([t for t, _ in s[1:]]) for s in series if len(s) > 1]
    F, p = stats.f_oneway(*groups)
    k = len(groups)
    N = sum(len(g) for g in groups)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (N - k)
    msb = F * msw
    n0 = (N - sum(len(g) ** 2 for g in groups) / N) / (k - 1)
    var_b = max(0.0, (msb - msw) / n0)

    # Trend: demeaned pooled regression.
    xs, ys = [], []
    for s in series:
        x = np.arange(1, len(s), dtype=float)
        y = np.log([t for t, _ in s[1:]])
        xs.extend(x - x.mean())
        ys.extend(y - y.mean())
    lr = stats.linregress(xs, ys)
    df = N - k - 1
    se = lr.stderr * math.sqrt((N - 2) / df)
    q = stats.t.ppf(0.975, df)

    # First repetition.
    d = [math.log(s[0][0]) - np.mean(np.log([t for t, _ in s[1:]])) for s in series if len(s) > 1]
    effects = [s[0][0] / np.median([t for t, _ in s[1:]]) - 1 for s in series if len(s) > 1]
    tt = stats.ttest_1samp(d, 0.0)

    # Spearman with every env reading that varies.
    later = [(t, env) for s in series for t, env in s[1:]]
    names = sorted({n for _, env in later for n, v in env.items() if isinstance(v, (int, float))})
    sp = {}
    for n in names:
        pairs = [(env[n], t) for t, env in later if isinstance(env.get(n), (int, float))]
        xv = [a for a, _ in pairs]
        if len(pairs) < 3 or len(set(xv)) < 2:
            continue
        r = stats.spearmanr(xv, [b for _, b in pairs])
        sp[n] = {"rho": float(r.correlation), "p": float(r.pvalue), "n": len(pairs)}

    print(json.dumps({
        "metric": metric,
        "anova": {"f": float(F), "p": float(p), "ms_within": float(msw), "ms_between": float(msb), "n0": n0,
                  "sd_within": math.sqrt(msw), "sd_between": math.sqrt(var_b),
                  "between_share": var_b / (var_b + msw)},
        "trend": {"slope": float(lr.slope), "se": se, "df": df, "ci_low": lr.slope - q * se,
                  "ci_high": lr.slope + q * se},
        "first": {"t": float(tt.statistic), "p": float(tt.pvalue), "median_effect": float(np.median(effects))},
        "spearman": sp,
    }))


if __name__ == "__main__":
    main()
