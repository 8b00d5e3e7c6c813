#!/usr/bin/env python3
"""scripts/nsys-gpu-time.py on a small nsys-shaped sqlite export built here: two repetitions of
`proof`, each with an MSM phase whose kernels leave a gap and whose memset and copy count as
busy time, a phase opened twice in a repetition, and a phase whose kernel "sum" takes 3 ms in one
repetition and 5 ms in the other; the CUDA-event check and the kernel-time check pass on matching
results, fail on results 10% off, --kernels names the kernel that spreads and leaves warm-ups
out, and each bad input is refused with exit 2 and one line on stderr.

    test_nsys_gpu_time.py PATH/TO/nsys-gpu-time.py
"""
import json
import os
import sqlite3
import sys
import tempfile

import script_checks
from script_checks import check

script = sys.argv[1]
MS = 1_000_000
TID = 77


def run(*args):
    return script_checks.run(script, *args)


# Per repetition (offset t): proof [t, t+40]; msm_h [t+1, t+20] launches kernel A 2-6, kernel B
# 8-12 (a 2 ms gap), memset 12-13 and a copy 14-16; ntt_h opened twice, [t+21, t+25] and
# [t+26, t+30], each launching one 2 ms kernel. So msm_h: kernels+memsets 9 ms, busy 11 ms; ntt_h:
# 4 ms a repetition over its two openings. msm_l [t+31, t+39] launches "sort" 32-33 and "sum" 34-37
# in the first repetition, 34-39 in the second.
def make_trace(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE NVTX_EVENTS (start INT, end INT, globalTid INT, text TEXT, textId INT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, globalTid INT, correlationId INT)")
    for t in ("MEMSET", "MEMCPY"):
        db.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_{t} (start INT, end INT, correlationId INT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, correlationId INT, shortName INT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "proof/prove/msm_h"), (2, "proof/prove/ntt_h"),
                                                          (3, "proof/prove/msm_l"), (10, "sort"), (11, "sum")])
    corr = 0

    def launch(at, table, start, end, name=None):
        nonlocal corr
        corr += 1
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?)", (at, TID, corr))
        if table == "KERNEL":
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?)", (start, end, corr, name))
        else:
            db.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_{table} VALUES (?, ?, ?)", (start, end, corr))

    for t in (0, 100 * MS):
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, 'proof', NULL)", (t, t + 40 * MS, TID))
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, 1)", (t + MS, t + 20 * MS, TID))
        launch(t + MS + 10, "KERNEL", t + 2 * MS, t + 6 * MS)
        launch(t + MS + 20, "KERNEL", t + 8 * MS, t + 12 * MS)
        launch(t + MS + 30, "MEMSET", t + 12 * MS, t + 13 * MS)
        launch(t + MS + 40, "MEMCPY", t + 14 * MS, t + 16 * MS)
        for s in (21, 26):
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, 2)", (t + s * MS, t + (s + 4) * MS, TID))
            launch(t + s * MS + 10, "KERNEL", t + (s + 1) * MS, t + (s + 3) * MS)
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, 3)", (t + 31 * MS, t + 39 * MS, TID))
        launch(t + 31 * MS + 10, "KERNEL", t + 32 * MS, t + 33 * MS, 10)
        launch(t + 31 * MS + 20, "KERNEL", t + 34 * MS, t + (37 if t == 0 else 39) * MS, 11)
    # Work launched on another thread inside the range is not the phase's.
    corr += 1
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?)", (5 * MS, TID + 1, corr))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 10)", (5 * MS, 19 * MS, corr))
    db.commit()
    db.close()


def write_results(path, msm_gpu, ntt_gpu, msm_kernel=None, ntt_kernel=None, warmup_kernel=None):
    lines = [{"schema": "cuzk.results", "type": "header"}]
    for rep in range(2):
        msm = {"wall_ns": 20 * MS, "gpu_ns": msm_gpu}
        ntt = {"wall_ns": 8 * MS, "gpu_ns": ntt_gpu}
        if msm_kernel is not None:
            msm["gpu_kernel_ns"] = msm_kernel
            ntt["gpu_kernel_ns"] = ntt_kernel
        lines.append({"type": "sample", "repetition": rep,
                      "phases": {"proof": {"wall_ns": 40 * MS}, "proof/prove/msm_h": msm, "proof/prove/ntt_h": ntt}})
    if warmup_kernel is not None:  # a warm-up sample far off: left out of the median
        lines.append({"type": "sample", "warmup": True, "phases": {
            "proof/prove/msm_h": {"wall_ns": 1, "gpu_ns": 1, "gpu_kernel_ns": warmup_kernel},
            "proof/prove/ntt_h": {"wall_ns": 1, "gpu_ns": 1, "gpu_kernel_ns": warmup_kernel}}})
    with open(path, "w") as f:
        for x in lines:
            f.write(json.dumps(x) + "\n")


with tempfile.TemporaryDirectory() as d:
    trace = os.path.join(d, "t.sqlite")
    make_trace(trace)
    # gpu_ns summed over both repetitions: msm_h busy 11 ms a repetition, ntt_h 4 ms.
    good = os.path.join(d, "good.jsonl")
    write_results(good, 11 * MS, 4 * MS, msm_kernel=9 * MS, ntt_kernel=4 * MS, warmup_kernel=1)
    rc, out, err = run("--sqlite", trace, "--results", good)
    check(rc == 0, f"matching results exit 0 (got {rc}: {out} {err})")
    check("tolerance 2%: met" in out, "the event check is met")
    check("kernel time, tolerance 2%: met" in out, "the kernel check is met")
    msm_line = [l for l in out.splitlines() if l.startswith("proof/prove/msm_h")]
    check(len(msm_line) == 2 and "22.000 ms" in msm_line[0] and "16.000 ms" in msm_line[0],
          f"msm_h: 22 ms of events against 22 ms busy, 16 ms of kernels ({msm_line})")
    check(len(msm_line) == 2 and "9.000 ms" in msm_line[1], f"msm_h: 9 ms of kernels and memsets ({msm_line})")
    ntt_line = [l for l in out.splitlines() if l.startswith("proof/prove/ntt_h")]
    check(len(ntt_line) == 2 and ntt_line[1].count("4.000 ms") == 2,
          f"ntt_h's two openings are summed per repetition ({ntt_line})")

    # Kernel times 10% off: the kernel check fails, the event check still holds.
    off = os.path.join(d, "off.jsonl")
    write_results(off, 11 * MS, 4 * MS, msm_kernel=9.9 * MS, ntt_kernel=4 * MS)
    rc, out, _ = run("--sqlite", trace, "--results", off)
    check(rc == 1, f"kernel time 10% off exits 1 (got {rc})")
    check("tolerance 2%: met" in out and "kernel time, tolerance 2%: NOT met (largest difference 10.00%)" in out,
          f"the kernel check names the difference ({out})")
    # Event times 10% off fail too.
    ev = os.path.join(d, "ev.jsonl")
    write_results(ev, 12.1 * MS, 4 * MS)
    rc, out, _ = run("--sqlite", trace, "--results", ev)
    check(rc == 1 and "tolerance 2%: NOT met" in out, f"event time 10% off exits 1 (got {rc})")
    check("kernel time not checked" in out, "results without gpu_kernel_ns say the kernel check did not run")

    # The kernel times from a second run (the trace's run without the collector).
    plain = os.path.join(d, "plain.jsonl")
    write_results(plain, 11 * MS, 4 * MS)
    rc, out, err = run("--sqlite", trace, "--results", plain, "--kernel-results", good)
    check(rc == 0 and "kernel time, tolerance 2%: met" in out, f"--kernel-results is read ({rc}: {out} {err})")

    # --kernels: "sum" spreads (3 and 5 ms), "sort" does not; the union is sort + sum.
    rc, out, err = run("--sqlite", trace, "--results", plain, "--kernels", "proof/prove/msm_l")
    lines = out.splitlines()
    row = {l.split()[0]: l.split()[1:] for l in lines if l.startswith("  ") and l.split()[0] in ("sum", "sort")}
    check(rc == 0 and "kernels of proof/prove/msm_l: 2 measured repetitions (0 warm-ups left out)" in out,
          f"--kernels prints its table ({rc}: {out} {err})")
    check(row.get("sum", [])[:4] == ["1", "4.0000", "1.4142", "35.36%"] and row["sum"][4:] == ["3.0000", "5.0000"],
          f"sum: median 4 ms, sd 1.41 ms (35.36%), 3-5 ms ({row.get('sum')})")
    check(row.get("sort", [])[:4] == ["1", "1.0000", "0.0000", "0.00%"], f"sort: 1 ms, no spread ({row.get('sort')})")
    union = [l for l in lines if "(all, as a union)" in l]
    check(len(union) == 1 and union[0].split()[4:6] == ["-", "5.0000"], f"the union's median is 5 ms ({union})")
    check(lines.index([l for l in lines if l.startswith("  sum")][0]) < lines.index(
        [l for l in lines if l.startswith("  sort")][0]), "kernels are listed longest first")
    # The run's warm-up (good.jsonl has one) is the trace's first repetition: left out.
    rc, out, _ = run("--sqlite", trace, "--results", good, "--kernels", "proof/prove/msm_l")
    sum_row = [l.split() for l in out.splitlines() if l.startswith("  sum")]
    check(rc == 0 and "1 measured repetitions (1 warm-ups left out)" in out and sum_row and
          sum_row[0][2:4] == ["5.0000", "-"], f"a warm-up is left out of --kernels ({out})")

    bad = os.path.join(d, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"type": "header"}\nnot json\n')
    for args, want in [
        (["--sqlite", trace, "--results", os.path.join(d, "missing.jsonl")], "missing.jsonl: No such file"),
        (["--sqlite", trace, "--results", bad], "bad.jsonl:2: not JSON"),
        (["--sqlite", trace, "--results", plain, "--kernel-results", plain], "no phase has gpu_kernel_ns"),
        (["--sqlite", trace, "--results", plain, "--kernel-results", bad], "bad.jsonl:2: not JSON"),
        (["--sqlite", trace, "--results", plain, "--tolerance", "-1"], "--tolerance must be a percentage >= 0"),
        (["--sqlite", os.path.join(d, "missing.sqlite"), "--results", plain], "missing.sqlite"),
        (["--sqlite", trace, "--results", plain, "--kernels", "proof/nope"], "--kernels proof/nope: no NVTX range"),
    ]:
        rc, out, err = run(*args)
        check(rc == 2, f"{want}: exit 2 (got {rc})")
        check(want in err and len(err.strip().splitlines()) == 1, f"{want}: one line on stderr (got {err!r})")

script_checks.finish()
