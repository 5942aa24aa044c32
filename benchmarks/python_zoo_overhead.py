#!/usr/bin/env python3
"""kcc.fit against `kcc train` and Keras's model.fit, per step, on the zoo.

For each Keras fixture of the zoo (benchmarks/zoo/zoo_cases.py), compiled
as the zoo compiles it, on the zoo's data (its own .npz tiled, else
synthetic) of --steps batches of --batch: kcc.fit (no callbacks), `kcc
train` (a process) and the backend's model.fit (Keras's default jit), each
at verbose=2 for as many epochs as fill --window seconds. A side's epoch
time is the interval between two of its "Epoch k/N" lines, stamped as they
are printed (kcc train's read from its pipe): that takes compiles, imports,
process start-up and data loading out of all three, and keeps each epoch's
own overhead (hooks, the History) in. The first interval of a run (a
process's first steps) is dropped; per step is the median interval of
--rounds runs, the sides alternating, over --steps.

    KERAS_BACKEND=jax KCC_BUILD_DIR=build build/python-venv-jax/bin/python \\
        benchmarks/python_zoo_overhead.py --kcc build/bin/kcc [--only a,b]

Prints a markdown table and, last, the median and range of kcc.fit / kcc
train and of model.fit / kcc.fit over the models.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "zoo"))

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras  # noqa: E402
import numpy as np  # noqa: E402

import kcc  # noqa: E402
import keras_zoo  # noqa: E402
import zoo_cases  # noqa: E402

class EpochStamps:
    """sys.stdout's stand-in while a fit prints: the time of each line
    starting "Epoch " (Keras's ProgbarLogger writes it at on_epoch_begin)."""

    def __init__(self):
        self.stamps = []

    def write(self, text):
        if text.startswith("Epoch "):
            self.stamps.append(time.perf_counter())
        return len(text)

    def flush(self):
        pass


def python_epochs(run, epochs):
    """The epoch intervals (s) of run(epochs), a fit printing to stdout."""
    stamps = EpochStamps()
    saved, sys.stdout = sys.stdout, stamps
    try:
        run(epochs)
    finally:
        sys.stdout = saved
    return np.diff(stamps.stamps).tolist()


def process_epochs(command):
    """The epoch intervals (s) of a `kcc train` process, from its pipe."""
    stamps = []
    with subprocess.Popen(command, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True,
                          bufsize=1) as process:
        for line in process.stdout:
            if line.startswith("Epoch "):
                stamps.append(time.perf_counter())
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}")
    return np.diff(stamps).tolist()


def npz_arrays(model, data, kind):
    """`data` (an array, a list or a dict) as npz keys kcc train reads."""
    if isinstance(data, dict):
        return dict(data)
    if not isinstance(data, (list, tuple)):
        return {kind: data}
    names = ([layer.name for layer in model.layers
              if layer.__class__.__name__ == "InputLayer"] if kind == "x"
             else list(model.output_names))
    return dict(zip(names, data))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kcc", default="build/bin/kcc")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--window", type=float, default=0.5,
                        help="seconds of steps each side is timed over: "
                             "its epoch count is chosen to fill them")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternated runs of each side")
    parser.add_argument("--no-train", action="store_true",
                        help="leave `kcc train` out (on a second backend: "
                             "its column does not depend on Keras's)")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    backend = keras.backend.backend()
    print(f"| model | kcc.fit ms | kcc train ms | kcc.fit / train | "
          f"model.fit ({backend}) ms | model.fit / kcc.fit |")
    print("|---|---:|---:|---:|---:|---:|")
    overhead, speedup = [], []
    for path, _, _, compiled in zoo_cases.cases():
        name = os.path.relpath(path, zoo_cases.FIXTURES)
        if only and os.path.splitext(os.path.basename(path))[0] not in only:
            continue
        try:
            model = keras.saving.load_model(path)
            if not compiled:
                model.compile(optimizer="adam",
                              loss=keras_zoo.record_loss(keras, path))
            x, y = keras_zoo.batch_for(keras, np, model, path,
                                       args.batch * args.steps)
            initial = model.get_weights()
            with tempfile.TemporaryDirectory() as work:
                archive = os.path.join(work, "model.keras")
                data = os.path.join(work, "data.npz")
                model.save(archive)
                arrays = npz_arrays(model, x, "x")
                arrays.update(npz_arrays(model, y, "y"))
                np.savez(data, **arrays)
                fit = dict(batch_size=args.batch, shuffle=False, verbose=2)

                def train(epochs):
                    return process_epochs(
                        [args.kcc, "train", archive, "--data", data,
                         "--batch", str(args.batch), "--epochs", str(epochs),
                         "--shuffle=false", "--verbose", "2"])
                sides = {
                    "fit": lambda e: python_epochs(
                        lambda n: kcc.fit(model, x, y, epochs=n, **fit), e),
                    "train": train,
                    "keras": lambda e: python_epochs(
                        lambda n: model.fit(x, y, epochs=n, **fit), e),
                }
                if args.no_train:
                    del sides["train"]
                # Compiles (kcc's session, kcc train's compile cache,
                # Keras's jit) before the timing, then each side's epoch
                # count: enough to fill the window.
                epochs = {}
                for side, run in sides.items():
                    per_epoch = max(np.median(run(3)), 1e-4)
                    epochs[side] = min(max(
                        2 + math.ceil(args.window / per_epoch), 4), 500)
                if "train" in sides:  # one count for kcc's two
                    epochs["train"] = epochs["fit"]
                intervals = {side: [] for side in sides}
                for _ in range(args.rounds):
                    for side, run in sides.items():
                        model.set_weights(initial)
                        intervals[side] += run(epochs[side])[1:]
        except Exception as e:  # a fixture one side cannot run
            print(f"| {name} | {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:80]} | | | | |", flush=True)
            continue
        def per_step(side):
            return float(np.median(intervals[side])) / args.steps * 1e3

        a, c = per_step("fit"), per_step("keras")
        speedup.append(c / a)
        if args.no_train:
            print(f"| {name} | {a:.3f} | | | {c:.3f} | {c / a:.1f}x |",
                  flush=True)
            continue
        b = per_step("train")
        overhead.append(a / b)
        print(f"| {name} | {a:.3f} | {b:.3f} | {a / b:.2f} | {c:.3f} | "
              f"{c / a:.1f}x |", flush=True)
    if overhead:
        print(f"\nkcc.fit / kcc train over {len(overhead)} models: median "
              f"{np.median(overhead):.3f}, min {min(overhead):.2f}, max "
              f"{max(overhead):.2f}")
    if speedup:
        print(f"model.fit ({backend}) / kcc.fit over {len(speedup)} models: "
              f"median {np.median(speedup):.1f}x, min {min(speedup):.1f}x, "
              f"max {max(speedup):.1f}x")


if __name__ == "__main__":
    main()
