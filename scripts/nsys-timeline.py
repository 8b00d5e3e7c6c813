#!/usr/bin/env python3
"""Where one repetition's time goes on the GPU, stream by stream, from an Nsight Systems trace.

    scripts/nsys-timeline.py --sqlite RUN.sqlite [--marker h_pointwise_kernel] [--rep -1]
                             [--min-ms 0.3]

RUN.sqlite is the `nsys export --type sqlite` of a capture that repeats the same work (a
benchmark's iterations: scripts/gpu-stage.sh's `trace` step). The marker is a kernel launched
once per repetition; a repetition is cut at the longest stretch with no kernel and no copy
between two markers, so each repetition starts with its first upload. For the repetition chosen
(--rep, Python indexing: -1 the last) it prints the span of each repetition, then per stream its
first and last activity and busy time, and the stream's activity merged into blocks: consecutive
kernels (or copies) of one name less than 0.5 ms apart, with their count and summed duration.
Blocks shorter than --min-ms are left out. Milliseconds from the repetition's first activity.
Exit 0; 2 on bad input (no such file, not an nsys export, no marker, no such repetition).

Bench benchmarks do not open the harness's NVTX phase ranges, so this reads kernels and copies
only; scripts/nsys-gpu-time.py joins a cuzk-bench capture's ranges to its GPU work.
"""
import argparse
import bisect
import collections
import os
import sqlite3
import sys

COPY_KINDS = {1: "HtoD", 2: "DtoH", 8: "DtoD", 10: "PtoP"}  # CUPTI_ACTIVITY_MEMCPY_KIND


def fail(msg):
    print(f"nsys-timeline: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    if not os.path.isfile(path):
        fail(f"no such file: {path}")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        kernels = db.execute(
            "SELECT k.start, k.end, k.streamId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.shortName").fetchall()
        copies = db.execute("SELECT start, end, streamId, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchall()
    except sqlite3.DatabaseError as e:
        fail(f"{path} is not an nsys sqlite export with CUDA kernels and copies ({e})")
    events = [(s, e, st, name) for s, e, st, name in kernels]
    events += [(s, e, st, "memcpy " + COPY_KINDS.get(kind, str(kind))) for s, e, st, kind in copies]
    return sorted(events)


def repetitions(events, marker):
    marks = [s for s, _, _, name in events if name == marker]
    if not marks:
        fail(f"no kernel named '{marker}' in the trace (--marker)")
    starts_at = [ev[0] for ev in events]
    cuts = []
    for a, b in zip(marks, marks[1:]):
        # The events strictly between two markers; with none (markers back to back) the cut is
        # at the second marker.
        lo, hi = bisect.bisect_right(starts_at, a), bisect.bisect_left(starts_at, b)
        best_gap, best_at, end = -1, b, a
        for s, e, _, _ in events[lo:hi]:
            if s - end > best_gap:
                best_gap, best_at = s - end, s
            end = max(end, e)
        cuts.append(best_at)
    bounds = [events[0][0]] + cuts + [events[-1][1] + 1]
    return [events[bisect.bisect_left(starts_at, lo):bisect.bisect_left(starts_at, hi)]
            for lo, hi in zip(bounds, bounds[1:])]


def blocks(stream_events):
    out = []
    for s, e, _, name in stream_events:
        if out and out[-1][2] == name and s - out[-1][1] < 0.5e6:
            out[-1][1] = max(out[-1][1], e)
            out[-1][3] += 1
            out[-1][4] += e - s
        else:
            out.append([s, e, name, 1, e - s])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sqlite", required=True)
    ap.add_argument("--marker", default="h_pointwise_kernel")
    ap.add_argument("--rep", type=int, default=-1)
    ap.add_argument("--min-ms", type=float, default=0.3)
    a = ap.parse_args()
    if a.min_ms < 0:
        fail(f"--min-ms must be >= 0, got {a.min_ms}")
    events = load(a.sqlite)
    if not events:
        fail(f"{a.sqlite} has no kernels or copies")
    reps = repetitions(events, a.marker)
    if not -len(reps) <= a.rep < len(reps):
        fail(f"--rep {a.rep}: the trace has {len(reps)} repetitions")
    for i, r in enumerate(reps):
        print(f"repetition {i}: {(max(e for _, e, _, _ in r) - r[0][0]) / 1e6:.1f} ms, {len(r)} kernels and copies")
    rep = reps[a.rep]
    t0 = rep[0][0]
    by_stream = collections.defaultdict(list)
    for ev in rep:
        by_stream[ev[2]].append(ev)
    for stream, evs in sorted(by_stream.items(), key=lambda kv: kv[1][0][0]):
        busy = sum(e - s for s, e, _, _ in evs)
        last = max(e for _, e, _, _ in evs)
        print(f"\nstream {stream}: {(evs[0][0] - t0) / 1e6:.1f}-{(last - t0) / 1e6:.1f} ms, busy {busy / 1e6:.1f} ms")
        for s, e, name, count, dur in blocks(evs):
            if (e - s) / 1e6 >= a.min_ms:
                print(f"  {(s - t0) / 1e6:8.1f} {(e - t0) / 1e6:8.1f}  {name} x{count}, busy {dur / 1e6:.1f}")


if __name__ == "__main__":
    main()
