#!/usr/bin/python3
"""Reference values for tests/test_factorial.cpp, computed with numpy/scipy.

Reads a JSON data set {"flags": [...], "observations": [{"levels", "block", "value"}, ...],
"level": 0.95, "blocks": true} from argv[1] and prints one JSON object with the least-squares
estimates of the 2^k r factorial model on ln(value): ±1 columns for every non-empty subset of
flags, plus sum-to-zero round columns, fitted with numpy.linalg.lstsq; the Bonferroni intervals
(scipy.stats.t), p-values, the allocation of variation and the 90%-power minimum detectable
effects (scipy.stats.nct, scipy.optimize.brentq).
"""
import itertools
import json
import sys

import numpy as np
from scipy import optimize, stats

POWER = 0.90


def main():
    data = json.load(open(sys.argv[1]))
    flags = data["flags"]
    k = len(flags)
    level = data.get("level", 0.95)
    obs = data["observations"]
    rounds = sorted({o["block"] for o in obs})
    use_blocks = data.get("blocks", True) and len(rounds) > 1

    on = np.array([[1.0 if o["levels"] >> i & 1 else -1.0 for i in range(k)] for o in obs])
    y = np.log(np.array([o["value"] for o in obs], dtype=float))
    n = len(y)

    subsets = [s for order in range(1, k + 1) for s in itertools.combinations(range(k), order)]
    cols = [np.ones(n)] + [np.prod(on[:, list(s)], axis=1) for s in subsets]
    n_effect_cols = len(cols)
    if use_blocks:
        last = rounds[-1]
        for r in rounds[:-1]:
            cols.append(np.array([1.0 if o["block"] == r else (-1.0 if o["block"] == last else 0.0) for o in obs]))
    X = np.column_stack(cols)
    p = X.shape[1]

    beta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    assert rank == p
    resid = y - X @ beta
    sse = float(resid @ resid)
    df = n - p
    s2 = sse / df
    cov = s2 * np.linalg.inv(X.T @ X)
    sst = float(((y - y.mean()) ** 2).sum())

    m = k + k * (k - 1) // 2
    tcrit = stats.t.ppf(1 - (1 - level) / (2 * m), df)

    effects = []
    higher = 0.0
    se_by_order = {1: [], 2: []}
    for j, s in enumerate(subsets, start=1):
        q = beta[j]
        share = q * q * float(X[:, j] @ X[:, j]) / sst
        if len(s) >= 3:
            higher += share
            continue
        se = float(np.sqrt(cov[j, j]))
        c = 2.0 if len(s) == 1 else 4.0
        effects.append({
            "flags": list(s),
            "q": q,
            "se": se,
            "ratio": np.exp(c * q),
            "low": np.exp(c * (q - tcrit * se)),
            "high": np.exp(c * (q + tcrit * se)),
            "p": 2 * stats.t.sf(abs(q) / se, df),
            "significant": bool(abs(q) > tcrit * se),
            "share": share,
        })
        se_by_order[len(s)].append(se)

    if use_blocks:
        X0 = X[:, :n_effect_cols]
        b0 = np.linalg.lstsq(X0, y, rcond=None)[0]
        r0 = y - X0 @ b0
        share_blocks = (float(r0 @ r0) - sse) / sst
    else:
        share_blocks = 0.0

    def power_gap(nc):
        return stats.nct.sf(tcrit, df, nc) + stats.nct.cdf(-tcrit, df, nc) - POWER

    # Bracket: the power is the test's size at nc = 0; widen the top until it passes POWER (a
    # top far beyond it makes the noncentral t underflow).
    top = tcrit + 2
    while power_gap(top) < 0:
        top *= 2
    nc = optimize.brentq(power_gap, 0.0, top, xtol=1e-14, rtol=1e-13)

    out = {
        "n": n,
        "df": df,
        "rounds": len(rounds),
        "s_e": np.sqrt(s2),
        "t_crit": tcrit,
        "effects": effects,
        "share_higher_order": higher,
        "share_blocks": share_blocks,
        "share_noise": sse / sst,
        "mde_main_ratio": np.exp(2 * max(se_by_order[1]) * nc),
        "mde_interaction_ratio": np.exp(4 * max(se_by_order[2]) * nc) if k >= 2 else None,
    }
    print(json.dumps(out, default=float))


if __name__ == "__main__":
    main()
