#!/usr/bin/env python3
"""scripts/nsys-timeline.py on a small nsys-shaped sqlite export built here: two repetitions of
an upload then a marker kernel on a second stream, cut at the idle gap between them; and each bad
input refused with exit 2 and one line on stderr.

    test_nsys_timeline.py PATH/TO/nsys-timeline.py
"""
import os
import sqlite3
import sys
import tempfile

import script_checks
from script_checks import check

script = sys.argv[1]
MS = 1_000_000


def run(*args):
    return script_checks.run(script, *args)


def make_trace(path, marker="h_pointwise_kernel"):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, streamId INT, shortName INT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, streamId INT, copyKind INT)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, marker), (2, "sum_points_kernel")])
    for rep, t in enumerate((0, 100 * MS)):  # repetition 1 starts after a 50 ms idle gap
        db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 7, 1)",
                       [(t + i * 8 * MS // 10, t + i * 8 * MS // 10 + MS // 2) for i in range(4)])  # 0.3 ms apart
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 9, 2)", (t + 5 * MS, t + (25 + rep * 5) * MS))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 9, 1)", (t + 30 * MS, t + 50 * MS))
    db.commit()
    db.close()


with tempfile.TemporaryDirectory() as d:
    trace = os.path.join(d, "t.sqlite")
    make_trace(trace)
    rc, out, err = run("--sqlite", trace)
    check(rc == 0, f"a good trace exits 0 (got {rc}: {err})")
    check("repetition 0: 50.0 ms, 6 kernels and copies" in out, "repetition 0 spans 0-50 ms")
    check("repetition 1: 50.0 ms, 6 kernels and copies" in out, "repetition 1 is cut at the idle gap")
    check("stream 7: 0.0-2.9 ms, busy 2.0 ms" in out, "the copy stream's span and busy time")
    check("memcpy HtoD x4, busy 2.0" in out, "four copies less than 0.5 ms apart merge into one block")
    check("sum_points_kernel x1, busy 25.0" in out, "the last repetition's kernel (25 ms in repetition 1)")
    rc, out, _ = run("--sqlite", trace, "--rep", "0")
    check(rc == 0 and "sum_points_kernel x1, busy 20.0" in out, "--rep 0 picks the first repetition")
    rc, out, _ = run("--sqlite", trace, "--min-ms", "10")
    check("memcpy" not in out.split("stream 7")[1].split("stream 9")[0], "--min-ms leaves out short blocks")

    # Two markers with nothing between them: the second starts the next repetition.
    back = os.path.join(d, "back.sqlite")
    make_trace(back)
    db = sqlite3.connect(back)
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 9, 1)", (160 * MS, 170 * MS))
    db.commit()
    db.close()
    rc, out, err = run("--sqlite", back)
    check(rc == 0 and "repetition 2: 10.0 ms, 1 kernels and copies" in out,
          f"markers back to back cut at the second (got {rc}: {out[:200]} {err})")

    bad = os.path.join(d, "not.sqlite")
    with open(bad, "w") as f:
        f.write("not a database\n")
    empty = os.path.join(d, "empty.sqlite")
    sqlite3.connect(empty).close()
    for args, want in [
        (["--sqlite", os.path.join(d, "missing.sqlite")], "no such file"),
        (["--sqlite", bad], "is not an nsys sqlite export"),
        (["--sqlite", empty], "is not an nsys sqlite export"),
        (["--sqlite", trace, "--marker", "nope"], "no kernel named 'nope'"),
        (["--sqlite", trace, "--rep", "2"], "the trace has 2 repetitions"),
        (["--sqlite", trace, "--min-ms", "-1"], "--min-ms must be >= 0"),
    ]:
        rc, out, err = run(*args)
        check(rc == 2, f"{args[-1]}: exit 2 (got {rc})")
        check(want in err and err.count("\n") == 1, f"{args[-1]}: one error line with '{want}' (got {err!r})")

script_checks.finish()
