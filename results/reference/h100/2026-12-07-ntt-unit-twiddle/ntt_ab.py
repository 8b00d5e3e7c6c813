#!/usr/bin/env python3
"""Medians of BM_gpu_ntt_forward over the processes of each side (ntt-<side>-<process>.json in
this folder): each process's median of 12 repetitions, the side's median over all 36, min-max."""
import collections, glob, json, os, statistics

here = os.path.dirname(os.path.abspath(__file__))
reps = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(here, "ntt-*-*.json"))):
    side, proc = os.path.basename(f)[:-5].split("-")[1:]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].split("/")
        reps[(name[1], name[2])][(side, proc)].append(b["real_time"])

print("| size, order | before: median (per process) | after | after/before | min-max before; after |")
print("| --- | ---: | ---: | ---: | --- |")
for key in sorted(reps):
    r = reps[key]
    med = {s: statistics.median([t for (side, _), ts in r.items() if side == s for t in ts]) for s in ("before", "after")}
    per = {s: " ".join("%.4f" % statistics.median(r[(s, p)]) for p in "123") for s in ("before", "after")}
    span = {s: [t for (side, _), ts in r.items() if side == s for t in ts] for s in ("before", "after")}
    print("| %s, %s | %.4f (%s) | %.4f (%s) | %+.1f%% | %.4f-%.4f; %.4f-%.4f |" % (
        key[0], key[1], med["before"], per["before"], med["after"], per["after"],
        100 * (med["after"] / med["before"] - 1), min(span["before"]), max(span["before"]),
        min(span["after"]), max(span["after"])))
