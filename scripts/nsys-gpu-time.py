#!/usr/bin/env python3
"""Checks the harness's GPU times against Nsight Systems, phase by phase (docs/noise.md).

    scripts/nsys-gpu-time.py --sqlite RUN.sqlite --results RUN.jsonl [--kernel-results K.jsonl]
                             [--tolerance 2] [--kernels PHASE]...

RUN.sqlite is the `nsys export --type sqlite` of a capture of one cuzk-bench run, and RUN.jsonl
that run's results file (scripts/nsys-capture.sh leaves both side by side). For each phase with
GPU time in the results, the trace gives the GPU work launched inside the phase's NVTX ranges
(the CUDA runtime calls made on the range's thread between its push and pop, joined by
correlation id to the kernels, copies and memsets they started): the sum of kernel durations,
and the busy time (the union of kernel, copy and memset intervals). The harness's gpu_ns is the
time between two CUDA events around the same work, summed over the same ranges (warm-ups
included, as the trace has them).

Kernel time: where the results (or K.jsonl, a run of the same workload with --gpu-activity: two
CUPTI clients in one process are not needed) have gpu_kernel_ns, its median over the measured
samples is set against the trace's: per repetition (a range of the phase's first path component,
e.g. "proof"), the union of the phase's kernel and memset intervals summed over its ranges inside
it; the median over the repetitions.

Where a phase's time spreads between repetitions, --kernels PHASE says which of its kernels carry
the spread: per measured repetition of RUN.jsonl (its warm-ups, the first repetitions in the
trace, left out), each kernel's summed duration inside the phase's ranges, by kernel name; then
their median, standard deviation and range, and the same for the phase's kernels and memsets as a
union. It does not change the exit status.

Prints one table per check; exit 0 when every phase is within the tolerance (percent) in both,
1 when not, 2 on bad input.
"""
import argparse
import bisect
import json
import sqlite3
import statistics
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


def samples(path):
    """The "sample" records of a results file."""
    out = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    fail(f"{path}:{n}: not JSON ({e})")
                if isinstance(rec, dict) and rec.get("type") == "sample":
                    out.append(rec)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return out


def print_kernel_spread(phase, reps, warmups):
    """The table of --kernels: reps holds, per measured repetition, the phase's kernels and memsets."""
    print(f"\nkernels of {phase}: {len(reps)} measured repetitions ({warmups} warm-ups left out), "
          "each kernel's summed duration in a repetition")
    if not reps:
        print("  none: the phase has no range inside a measured repetition")
        return
    by_name, launches = {}, {}
    for i, work in enumerate(reps):
        for s, e, _, name in work:
            by_name.setdefault(name, [0] * len(reps))[i] += e - s
            launches.setdefault(name, [0] * len(reps))[i] += 1
    rows = sorted(by_name.items(), key=lambda kv: -statistics.median(kv[1]))
    rows.append(("(all, as a union)", [union_length([(s, e) for s, e, _, _ in w]) for w in reps]))
    print(f"  {'kernel':<40} {'launches':>8} {'median ms':>10} {'sd ms':>9} {'sd %':>7} {'min ms':>9} {'max ms':>9}")
    for name, v in rows:
        n = f"{statistics.median(launches[name]):g}" if name in launches else "-"
        med = statistics.median(v)
        sd = statistics.stdev(v) if len(v) > 1 else None
        sd_ms = f"{sd / 1e6:9.4f}" if sd is not None else f"{'-':>9}"
        sd_pct = f"{100 * sd / med:6.2f}%" if sd is not None and med else f"{'-':>7}"
        print(f"  {name[:40]:<40} {n:>8} {med / 1e6:10.4f} {sd_ms} {sd_pct} {min(v) / 1e6:9.4f} {max(v) / 1e6:9.4f}")


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sqlite", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--kernel-results",
                    help="results of the same workload run with --gpu-activity (default: --results)")
    ap.add_argument("--tolerance", type=float, default=2.0, help="percent (default 2)")
    ap.add_argument("--kernels", action="append", default=[], metavar="PHASE",
                    help="each kernel's time in PHASE per measured repetition, and its spread (repeatable)")
    a = ap.parse_args()
    if not a.tolerance >= 0:  # also refuses nan
        fail(f"--tolerance must be a percentage >= 0, not {a.tolerance:g}")

    gpu_ns = {}
    run_samples = samples(a.results)
    warmups = sum(1 for rec in run_samples if rec.get("warmup"))
    for rec in run_samples:
        for phase, p in rec.get("phases", {}).items():
            if isinstance(p.get("gpu_ns"), (int, float)):
                gpu_ns[phase] = gpu_ns.get(phase, 0) + p["gpu_ns"]
    if not gpu_ns:
        fail(f"{a.results}: no phase has GPU time (a run with --backend cuda?)")
    kernel_file = a.kernel_results or a.results
    kernel_ns = {}  # phase -> gpu_kernel_ns of each measured sample
    for rec in samples(kernel_file):
        if rec.get("warmup"):
            continue
        for phase, p in rec.get("phases", {}).items():
            if isinstance(p.get("gpu_kernel_ns"), (int, float)):
                kernel_ns.setdefault(phase, []).append(p["gpu_kernel_ns"])
    if a.kernel_results and not kernel_ns:
        fail(f"{a.kernel_results}: no phase has gpu_kernel_ns (a run with --gpu-activity?)")

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
    range_names = {r[3] for r in ranges}
    for phase in a.kernels:
        if phase not in range_names:
            fail(f"--kernels {phase}: no NVTX range of that name in {a.sqlite}")
    work = {}  # correlationId -> list of (start, end, kind, name)
    for table, kind in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "copy"),
                        ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table not in have:
            continue
        cols = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        name = "NULL"
        if kind == "kernel" and "StringIds" in have:  # nsys stores names as ids into StringIds
            for col in ("shortName", "demangledName"):
                if col in cols:
                    name = f"(SELECT value FROM StringIds WHERE id = {col})"
                    break
        for s, e, c, n in db.execute(f"SELECT start, end, correlationId, {name} FROM {table}"):
            work.setdefault(c, []).append((s, e, kind, n or kind))
    calls = db.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchall()
    calls.sort()
    call_starts = [c[0] for c in calls]

    def launched_in(rs, re_, tid):
        """The kernels, copies and memsets launched on thread tid between rs and re_."""
        intervals = []
        for i in range(bisect.bisect_left(call_starts, rs), len(calls)):
            cs, ctid, corr = calls[i]
            if cs > re_:
                break
            if ctid == tid:
                intervals += work.get(corr, [])
        return intervals

    rows, worst = [], 0.0
    for phase in sorted(gpu_ns):
        busy = kern = 0
        n_ranges = 0
        for rs, re_, tid, name in ranges:
            if name != phase:
                continue
            n_ranges += 1
            intervals = launched_in(rs, re_, tid)
            busy += union_length([(s, e) for s, e, _, _ in intervals])
            kern += sum(e - s for s, e, k, _ in intervals if k == "kernel")
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
    ok = worst <= a.tolerance and not missing
    print(f"\ntolerance {a.tolerance:g}%: {'met' if ok else 'NOT met'} (largest difference {worst:.2f}%)")

    # Per repetition: the ranges of each first path component ("proof") in start order.
    roots = {}
    for rs, re_, tid, name in ranges:
        if name:
            roots.setdefault(name, []).append((rs, re_))
    for r in roots.values():
        r.sort()

    def per_repetition(phase, keep):
        """For each repetition of phase's root that opened the phase: the phase's work that keep(kind)
        accepts, launched inside its ranges there, as a list of (start, end, kind, name)."""
        reps = roots.get(phase.split("/")[0], [])
        found = [None] * len(reps)
        for rs, re_, tid, name in ranges:
            if name != phase:
                continue
            i = bisect.bisect_right(reps, (rs, float("inf"))) - 1  # the latest repetition opened by rs
            if i < 0 or reps[i][1] < rs:
                continue
            found[i] = (found[i] or []) + [w for w in launched_in(rs, re_, tid) if keep(w[2])]
        return [f for f in found if f is not None]

    for phase in a.kernels:
        print_kernel_spread(phase, per_repetition(phase, lambda k: k != "copy")[warmups:], warmups)

    if not kernel_ns:
        print(f"\nkernel time not checked: no phase of {kernel_file} has gpu_kernel_ns (run with --gpu-activity)")
        sys.exit(0 if ok else 1)
    kworst, kmissing = 0.0, False
    print(f"\n{'phase':<28} {'gpu_kernel_ns':>14} {'kernels+memsets (nsys)':>23} {'difference':>11}   "
          f"(medians: {len(next(iter(kernel_ns.values())))} samples of {kernel_file})")
    for phase in sorted(kernel_ns):
        trace = [union_length([(s, e) for s, e, _, _ in w]) for w in per_repetition(phase, lambda k: k != "copy")]
        mine = statistics.median(kernel_ns[phase])
        if not trace:
            kmissing = True
            print(f"{phase:<28} {mine / 1e6:>11.3f} ms {'no NVTX range':>23}")
            continue
        theirs = statistics.median(trace)
        diff = 100.0 * (mine - theirs) / theirs if theirs else float("inf")
        kworst = max(kworst, abs(diff))
        print(f"{phase:<28} {mine / 1e6:>11.3f} ms {theirs / 1e6:>20.3f} ms {diff:>+10.2f}%")
    kok = kworst <= a.tolerance and not kmissing
    print(f"\nkernel time, tolerance {a.tolerance:g}%: {'met' if kok else 'NOT met'} (largest difference {kworst:.2f}%)")
    sys.exit(0 if ok and kok else 1)

if __name__ == "__main__":
    main()
