#!/usr/bin/python3
# Spread within one process of each GPU phase: median and cv (1.4826 MAD / median, and sd / mean)
# of gpu_kernel_ns and of the CUDA-event gpu_ns over the measured repetitions, and the median
# gpu_idle_ns. Usage: /usr/bin/python3 kernel_cv.py stage-default.jsonl
import json, statistics as st, sys

def cv(x):
    m = st.median(x)
    return 1.4826 * st.median([abs(a - m) for a in x]) / m * 100

def sd(x): return st.pstdev(x) / st.mean(x) * 100

d = {}
for l in open(sys.argv[1]):
    v = json.loads(l)
    if v.get('type') != 'sample' or v.get('warmup'): continue
    for p, r in v['phases'].items():
        for k in ('gpu_ns', 'gpu_kernel_ns', 'gpu_idle_ns'):
            if isinstance(r.get(k), (int, float)): d.setdefault(p, {}).setdefault(k, []).append(r[k])
print(f"{'phase':26s} {'n':>3s} {'kernel ms':>10s} {'cv':>7s} {'sd':>7s} {'event ms':>10s} {'cv':>7s} {'sd':>7s} {'idle ms':>8s}")
for p in sorted(d):
    k, g = d[p].get('gpu_kernel_ns'), d[p].get('gpu_ns')
    if not k or not g or st.median(k) == 0: continue
    print(f"{p:26s} {len(k):3d} {st.median(k) / 1e6:10.3f} {cv(k):6.3f}% {sd(k):6.3f}% {st.median(g) / 1e6:10.3f} "
          f"{cv(g):6.3f}% {sd(g):6.3f}% {st.median(d[p]['gpu_idle_ns']) / 1e6:8.3f}")
