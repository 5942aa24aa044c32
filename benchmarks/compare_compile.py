#!/usr/bin/env python3
#===- compare_compile.py - Two kcc builds on every zoo fixture, alternated -===#
#
# Cold compile, its CPU time, the compiled and the interpreted step of every zoo
# fixture (zoo/zoo_cases.py, batch 32 or --batch) under two kcc binaries, or one
# binary with two sets of extra flags: per round, every fixture runs under A then B
# (`kcc bench --json`, KCC_CACHE_DIR=off, 2 OpenMP threads), so load on a
# shared machine hits both alike. Prints per-fixture medians, B / A, B's
# library_ms (the step's GEMMs and convolutions alone: kcc bench) and the worst
# compile of each; --json keeps every run.
#
#   compare_compile.py --a OLD/kcc --b build/bin/kcc --rounds 3
#   compare_compile.py --a build/bin/kcc --a-flags="--llvm-passes=default<O3>" \
#       --b build/bin/kcc --rounds 3 --only activations,mobilenet
#   compare_compile.py --a ... --b ... \
#       --also tests/fixtures/keras/*_keras[23].json     (those files only)
#   compare_compile.py --a ... --b ... --repetitions 1 --steps 1 --warmup 0 \
#       --also M.json          (two steps: CPU ms is nearly all the compile)
#
# CPU ms is the user + system time of the kcc process (os.wait4), its timed
# steps included: on a loaded machine it moves less than the wall time. The
# compiled step's own CPU time (kcc bench's compiled_cpu_ms) is printed under
# the table where both binaries report it: with OMP_WAIT_POLICY=passive it
# is the step time to read on a loaded machine.
#
#===----------------------------------------------------------------------===#

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cases(only):
    out = subprocess.run([sys.executable, os.path.join(HERE, "zoo", "zoo_cases.py"),
                          "--only", only], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        path, loss, logits, compiled = line.split("\t")
        flags = []
        if compiled == "0":
            flags = ["--loss", loss] + (["--from-logits"] if logits == "1" else [])
        rel = os.path.relpath(path, os.path.join(HERE, "..", "tests", "fixtures", "keras"))
        yield os.path.splitext(rel)[0], path, flags


def run(kcc, extra, path, flags, repetitions, batch, steps, warmup):
    cmd = [kcc, "bench", path, "--batch", str(batch), "--repetitions", str(repetitions),
           "--steps", str(steps), "--warmup", str(warmup), "--json"] + flags + extra
    env = dict(os.environ, KCC_CACHE_DIR="off", OMP_NUM_THREADS="2")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        return None
    d = json.loads(out)
    return {"compile_ms": d["compile_ms"], "step_ms": d["compiled_ms"],
            "step_cpu_ms": d.get("compiled_cpu_ms"),
            "interp_ms": d.get("interpreted_ms"),
            "library_ms": d.get("library_ms"),
            "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1e3}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="kcc binary A (before)")
    p.add_argument("--b", required=True, help="kcc binary B (after)")
    p.add_argument("--a-flags", default="", help="extra kcc bench flags for A")
    p.add_argument("--b-flags", default="", help="extra kcc bench flags for B")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repetitions", type=int, default=5,
                   help="kcc bench's timed repetitions per run")
    p.add_argument("--steps", type=int, default=20,
                   help="kcc bench's steps per repetition")
    p.add_argument("--warmup", type=int, default=3,
                   help="kcc bench's untimed steps (--steps 1 --warmup 0 "
                        "--repetitions 1: the CPU time is mostly the compile's)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--only", default="", help="fixture names, comma-separated")
    p.add_argument("--json", help="write every run here")
    p.add_argument("--also", nargs="*", default=[],
                   help="model files (.json/.h5 specs), kcc's default loss; "
                        "with --also, zoo fixtures run only if --only names them")
    args = p.parse_args()

    sides = {"A": (args.a, shlex.split(args.a_flags)),
             "B": (args.b, shlex.split(args.b_flags))}
    todo = list(cases(args.only)) if args.only or not args.also else []
    todo += [(os.path.basename(m), os.path.abspath(m), []) for m in args.also]
    runs = {}
    load = [open("/proc/loadavg").read().split()[0]]
    for r in range(args.rounds):
        for name, path, flags in todo:
            for side, (kcc, extra) in sides.items():
                res = run(kcc, extra, path, flags, args.repetitions,
                          args.batch, args.steps, args.warmup)
                runs.setdefault(name, {}).setdefault(side, []).append(res)
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    load.append(open("/proc/loadavg").read().split()[0])

    med = lambda xs, k: statistics.median(x[k] for x in xs)
    print(f"batch {args.batch}, {args.rounds} rounds, A then B per fixture, medians; load {load[0]} "
          f"at the start, {load[1]} at the end (finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print("| fixture | A compile ms | B compile ms | B / A | A CPU ms | B CPU ms "
          "| A step ms | B step ms | B / A | A interpreted ms | B interpreted ms "
          "| B / A | B library ms | B step / library |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = {"A": (0, ""), "B": (0, "")}
    step_ratios, interp_ratios = [], []
    for name, by in runs.items():
        a = [x for x in by["A"] if x]
        b = [x for x in by["B"] if x]
        if not b:
            print(f"| {name} | failed: A {len(a)}, B {len(b)} of {args.rounds} runs |")
            continue
        if not a:
            # A cannot run it (an older build's importer): B's numbers alone.
            sb, lb = med(b, "step_ms"), med(b, "library_ms") if all(
                x.get("library_ms") is not None for x in b) else None
            ib = med(b, "interp_ms") if all(x.get("interp_ms") for x in b) else None
            print(f"| {name} | - | {med(b, 'compile_ms'):.0f} | - | - "
                  f"| {med(b, 'cpu_ms'):.0f} | - | {sb:.4g} | - | - "
                  f"| {ib:.4g} | - | {lb:.4g} | {sb / lb if lb else float('nan'):.2f} |")
            continue
        ca, cb = med(a, "compile_ms"), med(b, "compile_ms")
        sa, sb = med(a, "step_ms"), med(b, "step_ms")
        step_ratios.append(sb / sa)
        ia = ib = lb = None
        if all(x.get("interp_ms") for x in a + b):
            ia, ib = med(a, "interp_ms"), med(b, "interp_ms")
            interp_ratios.append(ib / ia)
        if all(x.get("library_ms") is not None for x in b):
            lb = med(b, "library_ms")
        fmt = lambda v, f: format(v, f) if v is not None else "-"
        interp = (f"{fmt(ia, '.4g')} | {fmt(ib, '.4g')} | "
                  f"{fmt(ib / ia if ia and ib else None, '.2f')}")
        library = (f"{fmt(lb, '.4g')} | "
                   f"{fmt(sb / lb if lb else None, '.2f')}")
        for side, c in (("A", ca), ("B", cb)):
            worst[side] = max(worst[side], (c, name))
        print(f"| {name} | {ca:.0f} | {cb:.0f} | {cb / ca:.2f} | {med(a, 'cpu_ms'):.0f} "
              f"| {med(b, 'cpu_ms'):.0f} | {sa:.4g} | {sb:.4g} | {sb / sa:.2f} "
              f"| {interp} | {library} |")
    print(f"worst compile: A {worst['A'][0]:.0f} ms ({worst['A'][1]}), "
          f"B {worst['B'][0]:.0f} ms ({worst['B'][1]})")
    cpu_ratios = []
    for name, by in runs.items():
        a = [x for x in by["A"] if x and x.get("step_cpu_ms")]
        b = [x for x in by["B"] if x and x.get("step_cpu_ms")]
        if a and b:
            ca, cb = med(a, "step_cpu_ms"), med(b, "step_cpu_ms")
            cpu_ratios.append(cb / ca)
            print(f"{name}: compiled step CPU ms (user + sys, all threads) "
                  f"A {ca:.4g}, B {cb:.4g}, B / A {cb / ca:.3f}")
    if cpu_ratios:
        print(f"step CPU B / A over {len(cpu_ratios)} fixtures: median "
              f"{statistics.median(cpu_ratios):.3f}, min {min(cpu_ratios):.2f}, "
              f"max {max(cpu_ratios):.2f}")
    if step_ratios:
        print(f"step B / A over {len(step_ratios)} fixtures: median "
              f"{statistics.median(step_ratios):.3f}, min {min(step_ratios):.2f}, "
              f"max {max(step_ratios):.2f}")
    if interp_ratios:
        print(f"interpreted step B / A over {len(interp_ratios)} fixtures: "
              f"median {statistics.median(interp_ratios):.3f}, min "
              f"{min(interp_ratios):.2f}, max {max(interp_ratios):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
