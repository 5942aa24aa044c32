#!/usr/bin/env python3
#===- zoo_report.py - Markdown tables and an SVG plot of a zoo run -------===#
#
#   python3 zoo_report.py OUT [--svg PLOT.svg]
#
# Reads OUT/kcc-bB.json (kcc bench entries) and OUT/SYSTEM-bB.json
# (keras_zoo.py) and prints, per batch size: ms per step of every system,
# the ratio of each Keras configuration to kcc compiled (> 1: kcc is
# faster), compile times and peak RSS. With --svg, a bar plot of those
# ratios on a log scale (one group per model, one bar per system).
#
#===----------------------------------------------------------------------===#

import argparse
import glob
import json
import math
import os
import re
import statistics

KERAS = ["jax-jit", "tf-graph", "tf-jit", "torch-graph", "torch-jit"]
LABEL = {"jax-jit": "JAX jit", "tf-graph": "TF graph", "tf-jit": "TF XLA",
         "torch-graph": "PyTorch eager", "torch-jit": "torch.compile"}
COLOR = {"jax-jit": "#4c72b0", "tf-graph": "#dd8452", "tf-jit": "#c44e52",
         "torch-graph": "#55a868", "torch-jit": "#8172b3"}


def load(out):
    runs = {}  # batch -> system -> model -> entry
    for path in glob.glob(os.path.join(out, "*-b*.json")):
        m = re.match(r"(.+)-b(\d+)\.json$", os.path.basename(path))
        system, batch = m.group(1), int(m.group(2))
        doc = json.load(open(path))
        entries = doc if isinstance(doc, list) else doc["results"].values()
        runs.setdefault(batch, {})[system] = {e["model"]: e for e in entries}
    return runs


def fmt(v, digits=3):
    """`digits` significant digits; 0: a whole number."""
    if v is None:
        return "n/a"
    return f"{v:.0f}" if digits == 0 else f"{v:.{digits}g}"


def ms(entry, key):
    return entry.get(key) if entry and "error" not in entry else None


def report(runs):
    lines = []
    for batch in sorted(runs):
        sys_ = runs[batch]
        kcc = sys_.get("kcc", {})
        keras = [s for s in KERAS if s in sys_]
        models = sorted(kcc)
        lines += [f"### Batch {batch}: ms per training step", "",
                  "| model | kcc compiled | kcc interp. | interp. / compiled | " +
                  " | ".join(LABEL[s] for s in keras) + " |",
                  "|---|" + "---:|" * (3 + len(keras))]
        ratios = {s: [] for s in keras}
        worst = []
        for m in models:
            c = ms(kcc.get(m), "compiled_ms")
            i = ms(kcc.get(m), "interpreted_ms")
            row = [m, fmt(c), fmt(i), fmt(i / c if c and i else None)]
            for s in keras:
                k = ms(sys_[s].get(m), "median_ms")
                row.append(fmt(k))
                if k and c:
                    ratios[s].append(k / c)
            lines.append("| " + " | ".join(row) + " |")
            if c and i:
                worst.append((i / c, m))
        lines += ["", f"Keras configuration / kcc compiled at batch {batch} "
                  "(> 1: kcc is faster), over the models both ran:", "",
                  "| | " + " | ".join(LABEL[s] for s in keras) + " |",
                  "|---|" + "---:|" * len(keras)]
        for name, f in [("median", statistics.median), ("min", min),
                        ("max", max)]:
            lines.append(f"| {name} | " + " | ".join(
                fmt(f(ratios[s]), 3) if ratios[s] else "n/a"
                for s in keras) + " |")
        slower = {s: sum(r < 1 for r in ratios[s]) for s in keras}
        lines.append("| models where kcc is slower | " + " | ".join(
            f"{slower[s]} of {len(ratios[s])}" for s in keras) + " |")
        below = sorted(w for w in worst if w[0] < 1.5)
        lines += ["", f"kcc compiled < 1.5x interpreted at batch {batch}: " +
                  (", ".join(f"{m} ({r:.2f}x)" for r, m in below)
                   if below else "none"), ""]
        lines += [f"Compile time (ms; Keras: the first fit call minus a "
                  f"step) and peak RSS (MB; Keras: the process's, growing "
                  f"over the models it ran) at batch {batch}:", "",
                  "| model | kcc compile | kcc RSS | " + " | ".join(
                      f"{LABEL[s]} compile | {LABEL[s]} RSS" for s in keras)
                  + " |", "|---|" + "---:|" * (2 + 2 * len(keras))]
        for m in models:
            e = kcc.get(m) or {}
            row = [m, fmt(ms(e, "compile_ms"), 0), fmt(e.get("peak_rss_mb"), 0)]
            for s in keras:
                k = sys_[s].get(m) or {}
                row += [fmt(ms(k, "compile_ms"), 0),
                        fmt(k.get("peak_rss_mb"), 0)]
            lines.append("| " + " | ".join(row) + " |")
        errors = [(s, m, e["error"].splitlines()[0][:120])
                  for s in sys_ for m, e in sys_[s].items() if "error" in e]
        if errors:
            lines += ["", "Failed:", ""] + [f"- {s} {m}: {msg}"
                                             for s, m, msg in errors]
        lines.append("")
    return "\n".join(lines)


def svg(runs, batch):
    sys_ = runs[batch]
    kcc = sys_.get("kcc", {})
    keras = [s for s in KERAS if s in sys_]
    models = sorted(m for m in kcc if ms(kcc[m], "compiled_ms"))
    bar, gap, left, top, height = 6, 10, 150, 30, 300
    width = left + len(models) * (len(keras) * bar + gap) + 20
    lo, hi = math.log10(0.25), math.log10(100)

    def y(r):
        return top + height * (hi - math.log10(min(max(r, 0.25), 100))) / \
            (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{top + height + 120}" font-family="sans-serif" '
           f'font-size="10">',
           f'<text x="{left}" y="15">Keras 3 time / kcc compiled time, '
           f'batch {batch} (log scale; above 1: kcc is faster)</text>']
    for r in [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100]:
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(r):.1f}" '
                   f'y2="{y(r):.1f}" stroke="{"#000" if r == 1 else "#ddd"}"/>'
                   f'<text x="{left - 5}" y="{y(r) + 3:.1f}" '
                   f'text-anchor="end">{r}</text>')
    x = left + gap / 2
    for m in models:
        c = kcc[m]["compiled_ms"]
        for s in keras:
            k = ms(sys_[s].get(m), "median_ms")
            if k:
                r = k / c
                y0, y1 = sorted([y(1), y(r)])
                out.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{bar}" '
                           f'height="{max(y1 - y0, 0.5):.1f}" '
                           f'fill="{COLOR[s]}"/>')
            x += bar
        out.append(f'<text transform="translate({x - len(keras) * bar / 2:.1f},'
                   f'{top + height + 8}) rotate(60)">{m}</text>')
        x += gap
    for j, s in enumerate(keras):
        out.append(f'<rect x="{10}" y="{top + 14 * j}" width="10" height="10" '
                   f'fill="{COLOR[s]}"/><text x="24" y="{top + 14 * j + 9}">'
                   f'{LABEL[s]}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--svg", help="write the plot of the first batch size here")
    args = p.parse_args()
    runs = load(args.out)
    print(report(runs))
    if args.svg and runs:
        with open(args.svg, "w") as f:
            f.write(svg(runs, min(runs)) + "\n")


if __name__ == "__main__":
    main()
