#===- harness.py - Timing loop shared by the peer training benchmarks -----===#
#
# Every peer times its training step the same way:
#
#   first call     timed alone and reported as `first_step_ms`; for the
#                  compiling systems (torch.compile, jax.jit, tf.function,
#                  XLA) `compile_ms` = first_step_ms - median step: tracing
#                  and compilation, excluded from the step time
#   warm-up        `warmup` more untimed steps
#   repetitions    `repetitions` runs of `steps` steps each; the reported
#                  time is the median over repetitions of (run time / steps)
#
# `steps` is chosen so that one repetition lasts about --min-time seconds
# (at least 1 step). The step callable must return only once the step is
# done (JAX dispatches asynchronously: its step blocks on the loss).
#
#===----------------------------------------------------------------------===#

import argparse
import json
import os
import platform
import statistics
import sys
import time

import models


def common_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--cases", default="",
                   help="model:batch,... (default: all of models.CASES)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repetitions", type=int, default=7)
    p.add_argument("--heavy-repetitions", type=int, default=3,
                   help="repetitions for the GEMM-bound model")
    p.add_argument("--min-time", type=float, default=0.3,
                   help="seconds per repetition")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json", help="also write the JSON here")
    return p


def time_case(step, model, args):
    """Times `step()`; returns the result entry (times in ms). A step with a
    `run_n` attribute runs n steps per call (Keras's fit over n batches):
    that is timed instead, once per repetition."""
    run_n = getattr(step, "run_n", None)
    if run_n is not None:
        def loop(n):
            run_n(n)
    else:
        def loop(n):
            for _ in range(n):
                step()
    heavy = model in models.HEAVY
    reps = args.heavy_repetitions if heavy else args.repetitions
    t0 = time.perf_counter()
    loop(1)
    first = time.perf_counter() - t0
    loop(1 if heavy else args.warmup)
    # Calibrate: grow until one run of `steps` lasts min_time.
    steps = 1
    if not heavy:
        while True:
            t0 = time.perf_counter()
            loop(steps)
            elapsed = time.perf_counter() - t0
            if elapsed >= args.min_time:
                break
            grow = args.min_time * 1.2 / max(elapsed, 1e-9)
            steps = max(steps + 1, int(steps * min(grow, 10.0)))
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        loop(steps)
        samples.append((time.perf_counter() - t0) / steps * 1e3)
    med = statistics.median(samples)
    return {"median_ms": med, "min_ms": min(samples), "max_ms": max(samples),
            "samples_ms": samples, "steps": steps, "repetitions": reps,
            "first_step_ms": first * 1e3,
            "compile_ms": max(0.0, first * 1e3 - med)}


def run(system, versions, make_step, args, notes=""):
    """make_step(model, batch) -> zero-argument step callable, or raises.
    Prints one JSON object (and writes it to --json)."""
    results = {}
    text = dump(system, versions, notes, results, args)
    for model, batch in models.parse_cases(args.cases):
        name = models.case_name(model, batch)
        try:
            step = make_step(model, batch)
            entry = time_case(step, model, args)
            del step
        except Exception as e:  # report, keep going with the other cases
            entry = {"error": f"{type(e).__name__}: {e}"[:2000]}
        entry.update(model=model, batch=batch)
        results[name] = entry
        msg = (f"{entry['median_ms']:.3f} ms/step (compile "
               f"{entry['compile_ms']:.0f} ms)" if "median_ms" in entry
               else entry["error"].splitlines()[0])
        print(f"[{system}] {name}: {msg}", file=sys.stderr, flush=True)
        text = dump(system, versions, notes, results, args)
    print(text)
    return 0


def dump(system, versions, notes, results, args):
    """The JSON so far; rewritten to --json after every case, so a run cut
    short by a timeout keeps the cases it finished."""
    out = {"system": system, "versions": versions,
           "python": platform.python_version(), "threads": args.threads,
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
           "loadavg_end": open("/proc/loadavg").read().split()[:3],
           "notes": notes, "results": results}
    text = json.dumps(out, indent=1)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(args.json + ".tmp", args.json)
    return text


def synthetic_batch(model, batch, seed=0):
    """Deterministic images/features in [0, 1) and labels in [0, 10), numpy."""
    import numpy as np
    rng = np.random.default_rng(seed)
    shape = (batch,) + tuple(models.MODELS[model]["input"])
    x = rng.random(shape, dtype=np.float32)
    y = (np.arange(batch) * 7 % 10).astype(np.int32)
    return x, y
