#!/usr/bin/env python3
#===- report.py - kcc vs peers: merge the JSON, write a table and a plot --===#
#
# Usage: report.py RAW_DIR --json OUT.json --md OUT.md [--png OUT.png]
#
# RAW_DIR is what benchmarks/run_all.sh leaves: meta.json, kcc.MODEL.B.json
# (`kcc bench --json`), sgemm.json (kcc-bench-fusion's SgemmOfMlpGemm, the
# oneDNN rate on the GEMM-bound model's shapes), peer.NAME.json (the peer
# scripts in benchmarks/peers/). GFLOP/s come from models.step_flops (the
# GEMMs and convolutions of forward and backward: 6 x MACs per layer, 4 x
# for the first); "% SGEMM" divides by the SGEMM rate measured in the run.
# The plot needs matplotlib (run_all.sh uses the PyTorch venv's).
#
#===----------------------------------------------------------------------===#

import argparse
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "peers"))
import models  # noqa: E402

ORDER = ["kcc-compiled", "kcc-interpreted", "torch-eager", "torch-compile",
         "jax-jit", "tf-keras-graph", "tf-keras-eager", "tf-keras-xla"]
LABEL = {"kcc-compiled": "kcc compiled", "kcc-interpreted": "kcc interp.",
         "torch-eager": "PyTorch eager", "torch-compile": "torch.compile",
         "jax-jit": "JAX jit", "tf-keras-graph": "TF-Keras graph",
         "tf-keras-eager": "TF-Keras eager", "tf-keras-xla": "TF-Keras XLA"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def merge(raw):
    meta = load(os.path.join(raw, "meta.json")) or {}
    sgemm = None
    sg = load(os.path.join(raw, "sgemm.json"))
    if sg:
        runs = [b for b in sg.get("benchmarks", [])
                if "GFLOPS" in b and b.get("run_type") == "iteration"]
        rates = [b["GFLOPS"] for b in runs]
        if rates:
            name = runs[0].get("run_name", runs[0].get("name", ""))
            what = ("kernels::matmul (oneDNN) on mlp_gemm's GEMM shapes, "
                    "512x4096x4096, forward + both backward products"
                    if name.startswith("SgemmOfMlpGemm") else
                    f"kcc's oneDNN SGEMM, {name}")
            sgemm = {"gflops": statistics.median(rates), "samples": rates,
                     "benchmark": name, "what": what}
    version = None
    vpath = os.path.join(raw, "kcc-version.txt")
    if os.path.exists(vpath):
        version = open(vpath).read().strip().splitlines()[0]
        version = version.removeprefix("kcc ")
    systems = {}
    cases = {}
    for model, batch in models.CASES:
        name = models.case_name(model, batch)
        cases[name] = {"model": model, "batch": batch,
                       "params": models.params(model),
                       "gflop_per_step": models.step_flops(model, batch) / 1e9,
                       "systems": {}}

    def put(case, system, entry):
        if case not in cases:
            return
        c = cases[case]
        ms = entry.get("median_ms")
        if ms:
            entry["steps_per_s"] = 1e3 / ms
            entry["gflops"] = c["gflop_per_step"] / (ms / 1e3)
            if sgemm:
                entry["sgemm_fraction"] = entry["gflops"] / sgemm["gflops"]
        c["systems"][system] = entry

    for path in sorted(glob.glob(os.path.join(raw, "kcc.*.json"))):
        k = load(path)
        _, model, batch, _ = os.path.basename(path).split(".")
        case = models.case_name(model, int(batch))
        if not k:
            err = path[:-5] + ".err"
            msg = open(err).read().strip()[-500:] if os.path.exists(err) else ""
            put(case, "kcc-compiled", {"error": msg or "no output"})
            continue
        common = {"repetitions": k.get("repetitions"), "steps": k.get("steps")}
        put(case, "kcc-compiled", dict(
            common, median_ms=k["compiled_ms"], compile_ms=k.get("compile_ms"),
            kernels=k.get("kernels"), library_calls=k.get("library_calls"),
            arena_bytes=k.get("arena_bytes"),
            arena_lower_bound_bytes=k.get("arena_lower_bound_bytes"),
            unplanned_bytes=k.get("unplanned_bytes")))
        put(case, "kcc-interpreted", dict(
            common, median_ms=k["interpreted_ms"],
            ops=k.get("interpreted_ops"),
            peak_bytes=k.get("interpreted_peak_bytes")))
    systems["kcc-compiled"] = {"versions": {"kcc": version},
                               "notes": "kcc bench SPEC --json (Executable, "
                                        "compiled mode)"}
    systems["kcc-interpreted"] = {"versions": {"kcc": version},
                                  "notes": "kcc bench SPEC --json "
                                           "(Executable, interpreted mode)"}
    for path in sorted(glob.glob(os.path.join(raw, "peer.*.json"))):
        p = load(path)
        if not p:
            continue
        systems[p["system"]] = {k: p.get(k) for k in (
            "versions", "python", "threads", "omp_wait_policy", "loadavg_end",
            "notes")}
        for case, entry in p["results"].items():
            entry = dict(entry)
            entry.pop("model", None)
            entry.pop("batch", None)
            put(case, p["system"], entry)
    if not any(cases[c]["systems"].get("kcc-compiled") for c in cases):
        systems.pop("kcc-compiled", None)
        systems.pop("kcc-interpreted", None)
    return {"meta": meta, "sgemm": sgemm, "systems": systems,
            "cases": cases}


def fmt(v, f="{:.2f}"):
    return "-" if v is None else f.format(v)


def ms_cell(e):
    if not e:
        return "-"
    if "median_ms" not in e:
        return "error"
    ms = e["median_ms"]
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def markdown(data):
    cases = data["cases"]
    present = [s for s in ORDER if s in data["systems"]] + sorted(
        s for s in data["systems"] if s not in ORDER)
    meta = data["meta"]
    lines = []
    w = lines.append
    w("<!-- generated by benchmarks/report.py from docs/benchmarks-peers.json;"
      " rerun benchmarks/run_all.sh -->")
    w(f"Run {meta.get('date', '?')} on {meta.get('cpu', '?')}, "
      f"{meta.get('nproc', '?')} CPUs, {meta.get('threads', '?')} threads for "
      f"every system, OMP_WAIT_POLICY={meta.get('omp_wait_policy') or 'unset'}, load "
      f"average {' '.join(meta.get('loadavg_start', []))} at the start, "
      f"{' '.join(meta.get('loadavg_end', []))} at the end"
      + (" (**quick run**)" if meta.get("quick") else "") + ".")
    loads = meta.get("loadavg_by_system") or {}
    if loads:
        w("")
        w("Load average (1, 5, 15 min) when each system started: " + "; ".join(
            f"{'kcc' if k.startswith('kcc kcc') else k.split(' (')[0]}: {v}"
            for k, v in loads.items()
            if not k.startswith(("kcc bench", "oneDNN", "done"))) + ".")
    w("")
    w("**Milliseconds per training step** (median over repetitions; lower "
      "is better):")
    w("")
    w("| case | GFLOP/step | " + " | ".join(LABEL.get(s, s) for s in present)
      + " |")
    w("|---|---:|" + "---:|" * len(present))
    for name, c in cases.items():
        if not c["systems"]:
            continue
        w(f"| {name} | {c['gflop_per_step']:.3g} | "
          + " | ".join(ms_cell(c["systems"].get(s)) for s in present) + " |")
    w("")
    base = "kcc-compiled" if "kcc-compiled" in present else (
        "kcc-interpreted" if "kcc-interpreted" in present else None)
    if base:
        others = [s for s in present if s != base]
        w(f"**Peer time / {LABEL[base]} time** (> 1: kcc is faster; same "
          "run):")
        w("")
        w("| case | " + " | ".join(LABEL.get(s, s) for s in others) + " |")
        w("|---|" + "---:|" * len(others))
        for name, c in cases.items():
            b = c["systems"].get(base, {}).get("median_ms")
            if not b:
                continue
            cells = []
            for s in others:
                ms = c["systems"].get(s, {}).get("median_ms")
                cells.append(fmt(ms / b if ms else None))
            w(f"| {name} | " + " | ".join(cells) + " |")
        w("")
    kc = [(n, c["systems"].get("kcc-compiled"), c["systems"].get(
        "kcc-interpreted")) for n, c in cases.items()]
    kc = [(n, a, b) for n, a, b in kc if a and "median_ms" in a]
    if kc:
        w("**kcc per step** (`kcc bench`): compiled vs interpreted in one "
          "process; kernels launched by the compiled step vs kc ops the "
          "interpreter dispatches; the static arena vs its lower bound (the "
          "largest set of buffers live at once) and the interpreter's peak:")
        w("")
        w("| case | compiled ms | steps/s | interp. ms | interp./compiled | "
          "kernels | interp. ops | arena KiB | lower bound KiB | interp. "
          "peak KiB | compile ms |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n, a, b in kc:
            kib = lambda v: fmt(v / 1024 if v is not None else None, "{:.0f}")
            w(f"| {n} | {ms_cell(a)} | {a['steps_per_s']:.3g} | "
              f"{ms_cell(b)} | {b['median_ms'] / a['median_ms']:.2f} | "
              f"{fmt(a.get('kernels'), '{}')} | {fmt(b.get('ops'), '{}')} | "
              f"{kib(a.get('arena_bytes'))} | "
              f"{kib(a.get('arena_lower_bound_bytes'))} | "
              f"{kib(b.get('peak_bytes'))} | "
              f"{fmt(a.get('compile_ms'), '{:.0f}')} |")
        w("")
    sg = data.get("sgemm")
    w("**Achieved GFLOP/s** (GEMM and convolution FLOPs of the step, "
      "`models.step_flops`, / median step time)"
      + (f"; in brackets the fraction of oneDNN's SGEMM rate measured in this "
         f"run ({sg['what']}: {sg['gflops']:.0f} GFLOP/s)"
         if sg else "; no SGEMM reference rate in this run") + ":")
    w("")
    w("| case | " + " | ".join(LABEL.get(s, s) for s in present) + " |")
    w("|---|" + "---:|" * len(present))
    for name, c in cases.items():
        if not c["systems"]:
            continue
        cells = []
        for s in present:
            e = c["systems"].get(s, {})
            if "gflops" not in e:
                cells.append("-")
            elif "sgemm_fraction" in e:
                cells.append(f"{e['gflops']:.3g} ({e['sgemm_fraction']:.0%})")
            else:
                cells.append(f"{e['gflops']:.3g}")
        w(f"| {name} | " + " | ".join(cells) + " |")
    w("")
    comp = [s for s in present if s not in ("kcc-interpreted",)]
    w("**Compile / first-step time, ms** (excluded from the step times: kcc: "
      "the Executable's compile; peers: first step minus a median step, i.e. "
      "tracing and compilation):")
    w("")
    w("| case | " + " | ".join(LABEL.get(s, s) for s in comp) + " |")
    w("|---|" + "---:|" * len(comp))
    for name, c in cases.items():
        if not c["systems"]:
            continue
        w(f"| {name} | " + " | ".join(
            fmt(c["systems"].get(s, {}).get("compile_ms"), "{:.0f}")
            for s in comp) + " |")
    errors = [(n, s, e["error"]) for n, c in cases.items()
              for s, e in c["systems"].items() if "error" in e]
    if errors:
        w("")
        w("Errors:")
        w("")
        for n, s, e in errors:
            w(f"- {LABEL.get(s, s)}, {n}: `{e.splitlines()[0][:300]}`")
    w("")
    w("Versions: " + "; ".join(
        f"{LABEL.get(s, s)}: " + ", ".join(
            f"{k} {v}" for k, v in (data['systems'][s].get('versions') or {})
            .items() if k not in ("threads",) and v is not None)
        for s in present) + ".")
    return "\n".join(lines) + "\n"


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = [(n, c) for n, c in data["cases"].items() if c["systems"]]
    present = [s for s in ORDER if s in data["systems"]]
    fig, axes = plt.subplots(2, 1, figsize=(12, 8.5), sharex=True)
    width = 0.8 / max(1, len(present))
    xs = range(len(cases))
    base = next((b for b in ("kcc-compiled", "kcc-interpreted")
                 if b in present), None)
    for i, s in enumerate(present):
        ms = [c["systems"].get(s, {}).get("median_ms") for _, c in cases]
        off = [x + (i - (len(present) - 1) / 2) * width for x in xs]
        axes[0].bar([o for o, m in zip(off, ms) if m],
                    [m for m in ms if m], width, label=LABEL.get(s, s))
        if base:
            rel = [(m / c["systems"][base]["median_ms"]
                    if m and c["systems"].get(base, {}).get("median_ms")
                    else None) for m, (_, c) in zip(ms, cases)]
            axes[1].bar([o for o, r in zip(off, rel) if r],
                        [r for r in rel if r], width, label=LABEL.get(s, s))
    axes[0].set_yscale("log")
    axes[0].set_ylabel("ms per training step (log)")
    meta = data["meta"]
    axes[0].set_title(
        f"One Adam training step, f32, {meta.get('threads', 2)} threads, "
        f"{meta.get('cpu', '')} (load avg "
        f"{(meta.get('loadavg_start') or ['?'])[0]}); lower is better")
    axes[0].legend(ncol=4, fontsize=8)
    axes[0].grid(axis="y", which="both", alpha=0.3)
    if base:
        axes[1].set_yscale("log")
        axes[1].axhline(1.0, color="black", linewidth=0.8)
        axes[1].set_ylabel(f"time / {LABEL[base]} time (log)\n"
                           "> 1: kcc faster")
        axes[1].grid(axis="y", which="both", alpha=0.3)
    axes[1].set_xticks(list(xs))
    axes[1].set_xticklabels([n for n, _ in cases])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("raw")
    p.add_argument("--json", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--png")
    args = p.parse_args()
    data = merge(args.raw)
    with open(args.json, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    text = markdown(data)
    with open(args.md, "w") as f:
        f.write(text)
    print(text)
    if args.png:
        try:
            plot(data, args.png)
            print("wrote", args.png)
        except ImportError as e:
            print(f"no plot ({e})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
