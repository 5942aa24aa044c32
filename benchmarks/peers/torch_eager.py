#!/usr/bin/env python3
#===- torch_eager.py - PyTorch eager peer of kcc-bench-eager --------------===#
#
# Times in PyTorch (eager, CPU, torch.no_grad) the cases kcc-bench-eager
# times in kcc, with the same shapes:
#
#   add_4          torch.add on two f32[4]
#   relu_32x128    torch.relu on f32[32, 128]
#   mlp/B          784-128-64-10 (relu, relu, softmax), batch B = 32, 64, 256
#   cnn/64         Conv(32,3x3,relu)-MaxPool2-Conv(64,3x3,relu)-MaxPool2-
#                  Dense(128,relu)-Dense(10), batch 64 (NCHW: torch's layout)
#   sgemm/N        torch.mm on N x N f32, N = 512, 2048 (reports GFLOP/s)
#
# Each case is timed like Google Benchmark: the iteration count is grown
# until one repetition lasts --min-time seconds, then --repetitions are run,
# interleaved across cases (so slow drifts of a shared machine hit every case
# alike), and the median of the per-iteration means is reported.
#
# Usage: torch_eager.py [--threads 2] [--repetitions 7] [--min-time 0.2]
#                       [--json out.json]
#
#===----------------------------------------------------------------------===#

import argparse
import json
import platform
import statistics
import sys
import time

import torch
from torch import nn


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                         nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10),
                         nn.Softmax(dim=1))


def cnn():
    # 28 -> 26 -> 13 -> 11 -> 5: 5 * 5 * 64 = 1600 features, as in kcc's CNN.
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def cases():
    """name -> (zero-argument callable, flops per call or None)."""
    out = {}
    a, b = torch.rand(4), torch.rand(4)
    out["add_4"] = (lambda: torch.add(a, b), None)
    r = torch.rand(32, 128)
    out["relu_32x128"] = (lambda: torch.relu(r), None)
    m = mlp().eval()
    for batch in (32, 64, 256):
        x = torch.rand(batch, 1, 28, 28)
        out[f"mlp/{batch}"] = ((lambda x=x: m(x)), None)
    c = cnn().eval()
    xc = torch.rand(64, 1, 28, 28)
    out["cnn/64"] = (lambda: c(xc), None)
    for n in (512, 2048):
        ga, gb = torch.rand(n, n), torch.rand(n, n)
        out[f"sgemm/{n}"] = ((lambda ga=ga, gb=gb: torch.mm(ga, gb)),
                             2.0 * n ** 3)
    return out


def time_iters(fn, iters):
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return time.perf_counter() - start


def calibrate(fn, min_time):
    """Iterations per repetition so that one lasts about min_time."""
    iters = 1
    while True:
        elapsed = time_iters(fn, iters)
        if elapsed >= min_time:
            return iters
        # Grow like Google Benchmark: towards the target, at most 10x a step.
        grow = min_time * 1.4 / max(elapsed, 1e-9)
        iters = max(iters + 1, int(iters * min(grow, 10.0)))


def main():
    p = argparse.ArgumentParser(description="PyTorch eager peer of kcc-bench-eager")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repetitions", type=int, default=7)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--json", help="write the results here as JSON")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    runs = cases()
    with torch.no_grad():
        plan = {}
        for name, (fn, _) in runs.items():
            for _ in range(3):  # warm-up: allocator, oneDNN/MKL primitives
                fn()
            plan[name] = calibrate(fn, args.min_time)
        samples = {name: [] for name in runs}
        for _ in range(args.repetitions):
            for name, (fn, _) in runs.items():
                iters = plan[name]
                samples[name].append(time_iters(fn, iters) / iters)

    results = {}
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"{'case':<14}{'median us':>12}{'min us':>12}{'cv %':>8}")
    for name, (_, flops) in runs.items():
        s = samples[name]
        med = statistics.median(s)
        cv = statistics.pstdev(s) / statistics.mean(s) * 100
        entry = {"median_us": med * 1e6, "min_us": min(s) * 1e6,
                 "cv_percent": cv, "iterations": plan[name],
                 "repetitions": len(s)}
        if flops:
            entry["gflops"] = flops / med * 1e-9
        results[name] = entry
        extra = f"  {entry['gflops']:.1f} GFLOP/s" if flops else ""
        print(f"{name:<14}{med * 1e6:>12.2f}{min(s) * 1e6:>12.2f}"
              f"{cv:>8.1f}{extra}")

    if args.json:
        context = {"torch": torch.__version__, "python": platform.python_version(),
                   "threads": torch.get_num_threads(),
                   "mkldnn": torch.backends.mkldnn.is_available(),
                   "mkl": torch.backends.mkl.is_available(),
                   "config": torch.__config__.show()}
        with open(args.json, "w") as f:
            json.dump({"context": context, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
