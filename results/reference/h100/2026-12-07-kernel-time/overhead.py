#!/usr/bin/python3
# The collector's overhead: per process, the median of each phase's wall_ns and gpu_ns over its
# measured repetitions; then the mean over the processes of each side, and Welch's t test on
# those per-process medians (4 a side for the prove rounds; 2 a side for the stage, no test).
# Run in a folder holding overhead.tgz's files: /usr/bin/python3 overhead.py > overhead.txt
import json, statistics as st
from scipy import stats

def med(f, p, key):
    x = []
    for l in open(f):
        v = json.loads(l)
        if v.get('type') != 'sample' or v.get('warmup'): continue
        r = v['phases'].get(p)
        if r and isinstance(r.get(key), (int, float)): x.append(r[key])
    return st.median(x) / 1e6 if x else None

for pre, n in [('ovh', 4), ('stovh', 2)]:
    for p in ['proof', 'proof/prove/ntt_h', 'proof/prove/msm_h', 'proof/prove/msm_l', 'proof/prove/msm_a',
              'proof/prove/msm_b_g1']:
        for key in ['wall_ns', 'gpu_ns']:
            w = [med(f'{pre}-with-{r}.jsonl', p, key) for r in range(1, n + 1)]
            o = [med(f'{pre}-without-{r}.jsonl', p, key) for r in range(1, n + 1)]
            if None in w or None in o: continue
            t = stats.ttest_ind(w, o, equal_var=False) if n > 2 else None
            print(f"{pre:5s} {p:22s} {key:7s} with {st.mean(w):9.3f} without {st.mean(o):9.3f} "
                  f"diff {100 * (st.mean(w) / st.mean(o) - 1):+6.2f}% abs {st.mean(w) - st.mean(o):+.3f} ms "
                  f"p {t.pvalue if t else float('nan'):.3g}")
