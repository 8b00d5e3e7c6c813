#!/usr/bin/env python3
"""Per variant of the sector matrix: medians over its rounds of the sector's figures (run log)."""
import glob, json, os, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "sector-matrix"
rows = {}
for f in sorted(glob.glob(os.path.join(d, "rounds", "*.jsonl"))):
    v = os.path.basename(f)[:-6].rsplit("-", 1)[0]
    for line in open(f):
        r = json.loads(line)
        if r.get("type") != "sample":
            continue
        ph = r["phases"]
        def total(suffix):
            return sum(p["wall_ns"] for k, p in ph.items() if k.endswith(suffix) and k.startswith("proof/prove/")) / 1e9
        parts = [p["wall_ns"] / 1e9 for k, p in ph.items() if k.startswith("proof/synth/partition_") and k.count("/") == 2]
        c = ph["proof"]["counters"]
        rows.setdefault(v, []).append({
            "proof s": ph["proof"]["wall_ns"] / 1e9,
            "synth a partition s": st.mean(parts),
            "prove s": ph["proof/prove"]["wall_ns"] / 1e9,
            "h2d s": total("/h2d"),
            "pin_abc s": total("/pin_abc"),
            "msm_b_g2 s": total("/msm_b_g2"),
            "key load s": ph["proof/srs_load"]["wall_ns"] / 1e9,
            "user CPU s": c["os::utime_ns"] / 1e9,
            "system CPU s": c["os::stime_ns"] / 1e9,
            "minor faults M": c["os::minflt"] / 1e6,
            "peak RSS GiB": c["os::maxrss_kib"] / 2**20,
        })
order = ["baseline", "pinned", "smallvec", "presize", "all"]
keys = list(next(iter(rows.values()))[0].keys())
n = min(len(r) for r in rows.values())
print(f"| figure (median of {n} rounds; min-max) | " + " | ".join(v for v in order if v in rows) + " |")
print("| --- |" + " ---: |" * len([v for v in order if v in rows]))
for k in keys:
    cells = []
    for v in order:
        if v not in rows:
            continue
        x = [r[k] for r in rows[v]]
        cells.append(f"{st.median(x):.2f} ({min(x):.2f}-{max(x):.2f})")
    print(f"| {k} | " + " | ".join(cells) + " |")
