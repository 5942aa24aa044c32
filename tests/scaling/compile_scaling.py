#!/usr/bin/env python3
"""Compile time and memory grow linearly with the depth of the model.

Compiles the model of N hidden Dense(64, relu) layers (benchmarks/deep_mlp.py,
its @forward in the kc dialect, so the Keras importer is not what is timed)
with kcc, one process per compile, and checks how its peak resident memory
or its time grows with N:

  memory KCC --emit=train at N and 2N: the N-layer peak RSS stays under
         BOUND_MB and the 2N-layer one under RATIO times the N-layer one
         (a quadratic pass gives about 4).
  time   KCC --emit=obj at N_SMALL and N_LARGE: the large compile takes at
         most RATIO times the median of REPEAT small ones, all measured in
         this run, so the speed of the machine cancels out (N_LARGE/N_SMALL
         = 8 gives 8 when linear and 64 when quadratic). The times compared
         are CPU times (user + system, every thread of the child): the work
         done, which other processes on a loaded machine barely move, where
         wall time moves with every build beside it (both are printed).

Peak RSS and CPU time are the child's own (os.wait4), never another
process's.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "..", "benchmarks", "deep_mlp.py")


def write_model(depth, folder):
    path = os.path.join(folder, f"deep_mlp_{depth}.mlir")
    subprocess.run([sys.executable, GENERATOR, str(depth), "--mlir", "-o",
                    path], check=True)
    return path


def compile_once(kcc, model, emit, folder):
    """Runs kcc; returns (wall seconds, peak RSS in MB, CPU seconds) of that
    process alone."""
    out = os.path.join(folder, "out." + emit)
    start = time.monotonic()
    # The spec's compile config: Adam and sparse categorical crossentropy
    # are kcc's defaults; the metric is not.
    proc = subprocess.Popen([kcc, model, f"--emit={emit}", "--metrics=accuracy",
                             "-o", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"FAIL: kcc {os.path.basename(model)} --emit={emit} exited "
                 f"with {proc.returncode}:\n{stderr.decode(errors='replace')}")
    # ru_maxrss is in KB on Linux.
    return (seconds, usage.ru_maxrss / 1024.0,
            usage.ru_utime + usage.ru_stime)


def check_memory(args, folder):
    n, big = args.depth, 2 * args.depth
    _, small_mb, _ = compile_once(args.kcc, write_model(n, folder), "train",
                                  folder)
    _, big_mb, _ = compile_once(args.kcc, write_model(big, folder), "train",
                                folder)
    print(f"--emit=train peak RSS: N={n}: {small_mb:.0f} MB, "
          f"N={big}: {big_mb:.0f} MB, ratio {big_mb / small_mb:.2f}")
    ok = True
    if small_mb > args.bound_mb:
        print(f"FAIL: N={n} takes {small_mb:.0f} MB, over the bound of "
              f"{args.bound_mb:.0f} MB")
        ok = False
    if big_mb > args.ratio * small_mb:
        print(f"FAIL: doubling the depth multiplies peak RSS by "
              f"{big_mb / small_mb:.2f}, over {args.ratio}")
        ok = False
    return ok


def check_time(args, folder):
    small = write_model(args.depth, folder)
    large = write_model(args.large, folder)
    # Interleaved, so a burst of load elsewhere hits both sizes alike.
    small_runs = []
    large_run = None
    for i in range(args.repeat):
        small_runs.append(compile_once(args.kcc, small, "obj", folder))
        if i == args.repeat // 2:
            large_run = compile_once(args.kcc, large, "obj", folder)
    small_wall = statistics.median(r[0] for r in small_runs)
    small_cpu = statistics.median(r[2] for r in small_runs)
    ratio = large_run[2] / small_cpu
    print(f"--emit=obj CPU time: N={args.depth}: median {small_cpu:.2f} s of "
          f"{', '.join(f'{r[2]:.2f}' for r in small_runs)}; N={args.large}: "
          f"{large_run[2]:.2f} s; ratio {ratio:.2f}")
    print(f"--emit=obj wall time: N={args.depth}: median {small_wall:.2f} s; "
          f"N={args.large}: {large_run[0]:.2f} s; ratio "
          f"{large_run[0] / small_wall:.2f} (load average "
          f"{os.getloadavg()[0]:.1f})")
    if ratio > args.ratio:
        print(f"FAIL: {args.large // args.depth}x the layers take {ratio:.1f}x "
              f"the CPU time, over {args.ratio}")
        return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("check", choices=["memory", "time"])
    p.add_argument("--kcc", required=True)
    p.add_argument("--depth", type=int, required=True,
                   help="N (memory) or N_SMALL (time)")
    p.add_argument("--large", type=int, help="N_LARGE (time)")
    p.add_argument("--bound-mb", type=float, help="bound on the N compile")
    p.add_argument("--ratio", type=float, required=True)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="kcc-scaling-") as folder:
        if args.check == "memory":
            if args.bound_mb is None:
                p.error("memory needs --bound-mb")
            ok = check_memory(args, folder)
        else:
            if args.large is None:
                p.error("time needs --large")
            ok = check_time(args, folder)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
