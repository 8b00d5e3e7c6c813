#!/usr/bin/env python3
"""Checks the harness's GPU time against Nsight Systems, phase by phase (docs/noise.md).

    scripts/nsys-gpu-time.py --sqlite RUN.sqlite --results RUN.jsonl [--tolerance 2]

RUN.sqlite is the `nsys export --type sqlite` of a capture of one cuzk-bench run, and RUN.jsonl
that run's results file (scripts/nsys-capture.sh leaves both side by side). For each phase with
GPU time in the results, the trace gives the GPU work launched inside the phase's NVTX ranges
(the CUDA runtime calls made on the range's thread between its push and pop, joined by
correlation id to the kernels, copies and memsets they started): the sum of kernel durations,
and the busy time (the union of kernel, copy and memset intervals). The harness's gpu_ns is the
time between two CUDA events around the same work, summed over the same ranges (warm-ups
included, as the trace has them). Prints one row per phase; exit 0 when every phase's gpu_ns is
within the tolerance (percent) of the busy time, 1 when not, 2 on bad input.
"""
import argparse
import bisect
import json
import sqlite3
import sys


def fail(msg):
    print(f"nsys-gpu-time: error: {msg}", file=sys.stderr)
    sys.exit(2)


def union_length(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sqlite", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--tolerance", type=float, default=2.0, help="percent (default 2)")
    a = ap.parse_args()

    gpu_ns = {}
    try:
        with open(a.results) as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    fail(f"{a.results}:{n}: not JSON ({e})")
                if rec.get("type") != "sample":
                    continue
                for phase, p in rec.get("phases", {}).items():
                    if isinstance(p.get("gpu_ns"), (int, float)):
                        gpu_ns[phase] = gpu_ns.get(phase, 0) + p["gpu_ns"]
    except OSError as e:
        fail(f"{a.results}: {e.strerror}")
    if not gpu_ns:
        fail(f"{a.results}: no phase has GPU time (a run with --backend cuda?)")

    try:
        db = sqlite3.connect(f"file:{a.sqlite}?mode=ro", uri=True)
        have = tables(db)
    except sqlite3.Error as e:
        fail(f"{a.sqlite}: {e}")
    for t in ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"):
        if t not in have:
            fail(f"{a.sqlite}: no table {t} (capture with --trace=cuda,nvtx)")
    text = "COALESCE(n.text, s.value)" if "StringIds" in have else "n.text"
    join = "LEFT JOIN StringIds s ON n.textId = s.id" if "StringIds" in have else ""
    ranges = db.execute(f"SELECT n.start, n.end, n.globalTid, {text} FROM NVTX_EVENTS n {join} "
                        "WHERE n.end IS NOT NULL").fetchall()
    work = {}  # correlationId -> list of (start, end, kind)
    for table, kind in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "copy"),
                        ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table in have:
            for s, e, c in db.execute(f"SELECT start, end, correlationId FROM {table}"):
                work.setdefault(c, []).append((s, e, kind))
    calls = db.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchall()
    calls.sort()
    call_starts = [c[0] for c in calls]

    rows, worst = [], 0.0
    for phase in sorted(gpu_ns):
        busy = kern = 0
        n_ranges = 0
        for rs, re_, tid, name in ranges:
            if name != phase:
                continue
            n_ranges += 1
            intervals = []
            for i in range(bisect.bisect_left(call_starts, rs), len(calls)):
                cs, ctid, corr = calls[i]
                if cs > re_:
                    break
                if ctid == tid:
                    intervals += work.get(corr, [])
            busy += union_length([(s, e) for s, e, _ in intervals])
            kern += sum(e - s for s, e, k in intervals if k == "kernel")
        if n_ranges == 0:
            rows.append((phase, gpu_ns[phase], None, None, None))
            continue
        diff = 100.0 * (gpu_ns[phase] - busy) / busy if busy else float("inf")
        worst = max(worst, abs(diff))
        rows.append((phase, gpu_ns[phase], busy, kern, diff))

    print(f"{'phase':<28} {'gpu_ns (events)':>16} {'GPU busy (nsys)':>16} {'kernels (nsys)':>15} {'events vs busy':>15}")
    missing = False
    for phase, g, b, k, d in rows:
        if b is None:
            missing = True
            print(f"{phase:<28} {g / 1e6:>13.3f} ms {'no NVTX range':>16}")
            continue
        print(f"{phase:<28} {g / 1e6:>13.3f} ms {b / 1e6:>13.3f} ms {k / 1e6:>12.3f} ms {d:>+14.2f}%")
    print(f"\ntolerance {a.tolerance:g}%: {'met' if worst <= a.tolerance and not missing else 'NOT met'} "
          f"(largest difference {worst:.2f}%)")
    sys.exit(0 if worst <= a.tolerance and not missing else 1)


if __name__ == "__main__":
    main()
