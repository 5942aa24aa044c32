#!/usr/bin/env python3
"""kcc.fit's time per step against `kcc train`'s on the same model and data.

Each case is a Keras-built model with 6400 random examples, batch 32,
Adam. The time per step is (wall time of --epochs 6) minus (wall time of
--epochs 1), over the 5 x 200 steps between them, median of --rounds. That
takes the compile, the import and the data loading out of both sides.
kcc.fit and `kcc train` are alternated.

    KCC_BUILD_DIR=build build/python-venv/bin/python \\
        benchmarks/python_overhead.py --kcc build/bin/kcc [--rounds 3]

The venv is the one scripts/python-tests.sh makes (keras, jax, kcc).
"""

import argparse
import os
import subprocess
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras  # noqa: E402
import numpy as np  # noqa: E402

import kcc  # noqa: E402

EXAMPLES, BATCH, EPOCHS = 6400, 32, 6
L = keras.layers


def build(kind):
    keras.utils.set_random_seed(0)
    if kind == "mlp":
        layers = [keras.Input((784,)), L.Dense(128, activation="relu"),
                  L.Dense(10, activation="softmax")]
        shape = (EXAMPLES, 784)
    else:
        layers = [keras.Input((28, 28, 1)),
                  L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(),
                  L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(),
                  L.Flatten(), L.Dense(10, activation="softmax")]
        shape = (EXAMPLES, 28, 28, 1)
    model = keras.Sequential(layers)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 10, EXAMPLES).astype(np.int32)
    return model, x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kcc", default="build/bin/kcc")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    steps = (EPOCHS - 1) * EXAMPLES // BATCH
    print("| model | kcc.fit ms/step | kcc train ms/step | ratio |")
    print("|---|---:|---:|---:|")
    for kind in ("mlp", "cnn"):
        model, x, y = build(kind)
        initial = model.get_weights()
        with tempfile.TemporaryDirectory() as work:
            archive = os.path.join(work, "model.keras")
            data = os.path.join(work, "data.npz")
            model.save(archive)
            np.savez(data, x=x, y=y)
            times = {}
            for _ in range(args.rounds):
                for epochs in (1, EPOCHS):
                    model.set_weights(initial)
                    start = time.perf_counter()
                    kcc.fit(model, x, y, batch_size=BATCH, epochs=epochs,
                            verbose=0, shuffle=False)
                    times.setdefault(("fit", epochs), []).append(
                        time.perf_counter() - start)
                    start = time.perf_counter()
                    subprocess.run(
                        [args.kcc, "train", archive, "--data", data,
                         "--batch", str(BATCH), "--epochs", str(epochs),
                         "--shuffle=false", "--verbose", "0"],
                        check=True, capture_output=True)
                    times.setdefault(("train", epochs), []).append(
                        time.perf_counter() - start)

        def per_step(side):
            return (np.median(times[(side, EPOCHS)]) -
                    np.median(times[(side, 1)])) / steps * 1e3

        fit, train = per_step("fit"), per_step("train")
        print(f"| {kind} | {fit:.3f} | {train:.3f} | {fit / train:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
