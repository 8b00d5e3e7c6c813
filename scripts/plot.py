#!/usr/bin/python3
"""Plots of an A/B comparison for `cuzk-bench report` (docs/reports.md).

Run with Debian's interpreter, which has python3-matplotlib:

    /usr/bin/python3 scripts/plot.py --a A.jsonl --b B.jsonl --out DIR [--label-a A] [--label-b B]

Reads the two cuzk results files (JSON Lines, docs/results-format.md): the measured samples
(warm-ups left out), each phase's wall_ns. Writes into DIR:

    stacked.png   per-phase stacked bars, A against B: median of each direct child of `proof`,
                  and of each direct child of `proof/prove` (one panel each)
    dist.png      per-phase sample distributions, A against B: box plot with every sample
                  drawn over it (strip plot), one panel per phase
    counters.png  (only when some phase has numeric counters) median B/A ratio of each counter
                  per phase

Prints "wrote PATH" per file. Exit status: 0 ok, 2 bad input, 3 matplotlib missing.
"""
import argparse
import json
import math
import os
import sys


def load(path):
    samples = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                sys.exit(f"plot.py: {path}:{n}: not JSON ({e})")
            if obj.get("type") == "sample" and not obj.get("warmup", False):
                samples.append(obj)
    if not samples:
        sys.exit(f"plot.py: {path}: no measured sample")
    return samples


def phase_values(samples):
    out = {}
    for s in samples:
        for path, rec in s.get("phases", {}).items():
            if rec.get("wall_ns") is not None:
                out.setdefault(path, []).append(rec["wall_ns"] / 1e6)
    return out


def counter_values(samples):
    out = {}
    for s in samples:
        for path, rec in s.get("phases", {}).items():
            for name, v in (rec.get("counters") or {}).items():
                if isinstance(v, (int, float)):
                    out.setdefault((path, name), []).append(float(v))
    return out


def median(v):
    v = sorted(v)
    n = len(v)
    if n == 0:
        return float("nan")
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def children(paths, parent):
    depth = parent.count("/") + 1
    return sorted(p for p in paths if p.startswith(parent + "/") and p.count("/") == depth)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    args = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - any import failure means no plots
        print(f"plot.py: matplotlib unavailable: {e}", file=sys.stderr)
        return 3
    for p in (args.a, args.b):
        if not os.path.isfile(p):
            print(f"plot.py: {p}: no such file", file=sys.stderr)
            return 2
    sa, sb = load(args.a), load(args.b)
    va, vb = phase_values(sa), phase_values(sb)
    os.makedirs(args.out, exist_ok=True)
    labels = [args.label_a, args.label_b]
    written = []

    # ---- stacked bars ----
    panels = [p for p in ("proof", "proof/prove") if children(set(va) | set(vb), p)]
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.5), squeeze=False)
        for ax, parent in zip(axes[0], panels):
            kids = children(set(va) | set(vb), parent)
            bottoms = [0.0, 0.0]
            cmap = plt.get_cmap("tab20")
            for i, k in enumerate(kids):
                h = [median(va.get(k, [])) if k in va else 0.0, median(vb.get(k, [])) if k in vb else 0.0]
                h = [0.0 if math.isnan(x) else x for x in h]
                ax.bar(labels, h, bottom=bottoms, color=cmap(i % 20), label=k[len(parent) + 1:])
                bottoms = [bottoms[0] + h[0], bottoms[1] + h[1]]
            for j, side in enumerate((va, vb)):
                if parent in side:
                    ax.plot([j - 0.4, j + 0.4], [median(side[parent])] * 2, "k--", lw=1)
            ax.set_title(f"{parent}: median of each child\n(dashed: {parent} itself; concurrent children can stack above it)", fontsize=8)
            ax.set_ylabel("ms")
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        path = os.path.join(args.out, "stacked.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    # ---- distributions ----
    phases = sorted(set(va) | set(vb))
    if phases:
        cols = min(4, len(phases))
        rows = math.ceil(len(phases) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.8 * rows), squeeze=False)
        for i, ph in enumerate(phases):
            ax = axes[i // cols][i % cols]
            data = [va.get(ph, []), vb.get(ph, [])]
            ax.boxplot([d if d else [float("nan")] for d in data], showfliers=False)
            for j, d in enumerate(data):
                xs = [j + 1 + 0.15 * ((k % 5) - 2) / 2 for k in range(len(d))]
                ax.plot(xs, d, "o", ms=3, alpha=0.6, color="C0" if j == 0 else "C3")
            ax.set_xticks([1, 2])
            ax.set_xticklabels(labels, fontsize=7)
            ax.set_title(ph, fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_ylabel("ms", fontsize=7)
        for i in range(len(phases), rows * cols):
            axes[i // cols][i % cols].axis("off")
        fig.tight_layout()
        path = os.path.join(args.out, "dist.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)

    # ---- counters ----
    ca, cb = counter_values(sa), counter_values(sb)
    keys = sorted(k for k in set(ca) & set(cb) if median(ca[k]) != 0)
    if keys:
        names = sorted({k[1] for k in keys})
        fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 0.35 * len(keys) + 2), squeeze=False)
        for ax, name in zip(axes[0], names):
            ks = [k for k in keys if k[1] == name]
            ratios = [median(cb[k]) / median(ca[k]) for k in ks]
            ax.barh([k[0] for k in ks], ratios, color=["C3" if r > 1 else "C2" for r in ratios])
            ax.axvline(1.0, color="k", lw=1)
            ax.set_title(f"{name}: median B/A", fontsize=9)
            ax.tick_params(labelsize=7)
        fig.tight_layout()
        path = os.path.join(args.out, "counters.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)

    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
