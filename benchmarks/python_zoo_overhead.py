#!/usr/bin/env python3
"""kcc.fit against `kcc train` and Keras's model.fit, per step, on the zoo.

For each Keras fixture of the zoo (benchmarks/zoo/zoo_cases.py), compiled
as the zoo compiles it, on the zoo's data (its own .npz tiled, else
synthetic) of --steps batches of --batch: kcc.fit (verbose=0, no
callbacks), `kcc train` (a process) and the backend's model.fit (Keras's
default jit), each run for 1 epoch and for as many as fill --window
seconds; a side's time per step is the difference over the steps
between, which takes compiles, imports and data loading out of all
three; each time the least over --rounds rounds in which the sides
alternate.

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

def timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


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
    parser.add_argument("--rounds", type=int, default=4,
                        help="alternated rounds; a side's time of each "
                             "epoch count is its least over them")
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
                fit = dict(batch_size=args.batch, shuffle=False, verbose=0)

                def train(epochs):
                    subprocess.run(
                        [args.kcc, "train", archive, "--data", data,
                         "--batch", str(args.batch), "--epochs", str(epochs),
                         "--shuffle=false", "--verbose", "0"],
                        check=True, capture_output=True)
                sides = {
                    "fit": lambda e: kcc.fit(model, x, y, epochs=e, **fit),
                    "train": train,
                    "keras": lambda e: model.fit(x, y, epochs=e, **fit),
                }
                # Compiles (kcc's session, kcc train's compile cache,
                # Keras's jit) before the timing, then each side's epoch
                # count: enough epochs to fill the window (a short window
                # is lost in a process's start-up noise).
                epochs = {}
                for side, run in sides.items():
                    run(1)
                    one = timed(lambda: run(1))
                    three = timed(lambda: run(3))
                    per_epoch = max((three - one) / 2, 1e-4)
                    epochs[side] = min(max(
                        1 + math.ceil(args.window / per_epoch), 3), 500)
                epochs["train"] = epochs["fit"]  # one count for kcc's two
                rounds = []
                for _ in range(args.rounds):
                    times = {}
                    for side, run in sides.items():
                        for e in (1, epochs[side]):
                            model.set_weights(initial)
                            times[side, e] = timed(lambda: run(e))
                    rounds.append(times)
        except Exception as e:  # a fixture one side cannot run
            print(f"| {name} | {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:80]} | | | | |", flush=True)
            continue
        def per_step(side):
            # The least of each time: the noise of a shared machine (and
            # of starting a process) only ever adds.
            steps = (epochs[side] - 1) * args.steps
            least = {e: min(times[side, e] for times in rounds)
                     for e in (1, epochs[side])}
            if os.environ.get("KCC_ZOO_DEBUG"):
                print(side, epochs[side], [(round(t[side, 1], 3), round(t[side, epochs[side]], 3)) for t in rounds], file=sys.stderr)
            return (least[epochs[side]] - least[1]) / steps * 1e3

        a, b, c = per_step("fit"), per_step("train"), per_step("keras")
        overhead.append(a / b)
        speedup.append(c / a)
        print(f"| {name} | {a:.3f} | {b:.3f} | {a / b:.2f} | {c:.3f} | "
              f"{c / a:.1f}x |", flush=True)
    if overhead:
        print(f"\nkcc.fit / kcc train over {len(overhead)} models: median "
              f"{np.median(overhead):.3f}, min {min(overhead):.2f}, max "
              f"{max(overhead):.2f}; model.fit / kcc.fit: median "
              f"{np.median(speedup):.1f}x, min {min(speedup):.1f}x")


if __name__ == "__main__":
    main()
