#!/usr/bin/env python3
"""One line per gate-merge run: exit code, whether an alarm was re-measured, and each case's
`proof` ratio B/A with its CI, read from the run's gate.json (and confirm/ when present)."""
import glob, json, os, sys

for run in sorted(glob.glob(os.path.join(sys.argv[1], "*/gate.json"))):
    d = os.path.dirname(run)
    g = json.load(open(run))
    parts = []
    for r in g["comparison"]["rows"]:
        if r.get("phase") == "proof":
            parts.append(f"{r['case']} proof {r['ratio']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] {r.get('verdict','')}")
    confirmed = os.path.isdir(os.path.join(d, "confirm"))
    print(f"{os.path.basename(d)}: {g['result']} (exit {g['exit_code']}){' after re-measuring' if confirmed else ''}; " + "; ".join(parts))
