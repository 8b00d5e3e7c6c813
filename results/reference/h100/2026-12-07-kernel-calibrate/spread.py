#!/usr/bin/python3
# Within / between the calibration pool's plain processes: sd of ln(gpu_kernel_ns) within each
# process (pooled) and of ln(the process medians), per GPU phase.
# Usage: tar -xzf raw.tgz && /usr/bin/python3 spread.py study/calibrate_kernel/pool
import glob, json, math, statistics as st, sys

phases = ['proof/prove/msm_h', 'proof/prove/msm_l', 'proof/prove/msm_a', 'proof/prove/msm_b_g1',
          'proof/prove/ntt_h', 'proof/prove/msm_l/digits']
procs = {p: [] for p in phases}
for f in sorted(glob.glob(sys.argv[1] + '/a-*.jsonl')):
    per = {p: [] for p in phases}
    for line in open(f):
        v = json.loads(line)
        if v.get('type') != 'sample' or v.get('warmup'): continue
        for p in phases:
            r = v['phases'].get(p)
            if r and isinstance(r.get('gpu_kernel_ns'), (int, float)): per[p].append(r['gpu_kernel_ns'])
    for p in phases:
        if per[p]: procs[p].append(per[p])
for p in phases:
    x = procs[p]
    within = math.sqrt(st.mean([st.pvariance([math.log(a) for a in s]) for s in x])) * 100
    meds = [st.median(s) for s in x]
    between = st.pstdev([math.log(m) for m in meds]) * 100
    print(f"{p:26s} processes {len(x)}  within {within:.3f}%  between {between:.3f}%  "
          f"median {st.median(meds) / 1e6:.4f} ms (process medians {min(meds) / 1e6:.4f}-{max(meds) / 1e6:.4f})")
