#!/usr/bin/env python3
"""kcc.fit against `kcc train` and Keras's model.fit, per step, on the zoo.

For each Keras fixture of the zoo (benchmarks/zoo/zoo_cases.py), compiled
as the zoo compiles it, on the zoo's data (its own .npz tiled, else
synthetic) of --steps batches of --batch: three epochs with kcc.fit
(verbose=0, one epoch-timing callback: no Python per step), with `kcc
train` (its --verbose 2 line's time per step) and with the backend's
model.fit (Keras's default jit). A side's time per step is the median of
epochs 2 and 3 (the first holds the compile). Sides alternate per model.

    KERAS_BACKEND=jax KCC_BUILD_DIR=build build/python-venv-jax/bin/python \\
        benchmarks/python_zoo_overhead.py --kcc build/bin/kcc [--only a,b]

Prints a markdown table and, last, the median and range of kcc.fit / kcc
train and of model.fit / kcc.fit over the models.
"""

import argparse
import os
import re
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

EPOCHS = 3


class EpochTimer(keras.callbacks.Callback):
    """Wall seconds of each epoch (epoch hooks only: batch hooks would put
    Python in every step)."""

    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def per_step(seconds, steps):
    return float(np.median(seconds[1:])) / steps * 1e3


def train_ms(line):
    """ms per step from `kcc train --verbose 2`'s epoch line."""
    m = re.search(r" - ([0-9.]+)(us|ms|s)/step", line)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return float(m.group(1)) * scale


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
                fit = dict(batch_size=args.batch, epochs=EPOCHS, shuffle=False,
                           verbose=0)
                ours = EpochTimer()
                kcc.fit(model, x, y, callbacks=[ours], **fit)
                run = subprocess.run(
                    [args.kcc, "train", archive, "--data", data, "--batch",
                     str(args.batch), "--epochs", str(EPOCHS),
                     "--shuffle=false", "--verbose", "2"],
                    check=True, capture_output=True, text=True)
                lines = [l for l in run.stdout.splitlines() if "/step" in l]
                model.set_weights(initial)
                theirs = EpochTimer()
                model.fit(x, y, callbacks=[theirs], **fit)
        except Exception as e:  # a fixture one side cannot run
            print(f"| {name} | {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:80]} | | | | |", flush=True)
            continue
        a = per_step(ours.seconds, args.steps)
        b = float(np.median([train_ms(l) for l in lines[1:]]))
        c = per_step(theirs.seconds, args.steps)
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
