#!/usr/bin/env python3
"""Writes kcc's autoencoder and accuracy fixtures (new files in
tests/fixtures/keras/metrics, next to make_metric_fixtures.py's).

With make_metric_fixtures.py's `record` (Adam at 1e-2, saved as .keras with
its initial weights and compile_config, then 5 `train_on_batch` steps on the
batch make_fixtures.py uses, the first 32 Fashion-MNIST training images, and
model.evaluate in batches of 10), Keras itself records three more cases:

  autoencoder           784-64-16-64-784 Dense (relu, sigmoid) between
                        Flatten and Reshape((28, 28, 1)); the target is the
                        input; loss "mse", metrics ["mae"]
  categorical_accuracy  the 784-8-10 model on one-hot labels;
                        categorical_crossentropy, ["categorical_accuracy"]
  binary_accuracy       784-8-1 (relu, sigmoid) on "label >= 5" as float32
                        [32, 1]; binary_crossentropy, ["binary_accuracy"]

accuracy.json records, per case, each step's logs (before its update) and
evaluate()'s logs after the 5 steps.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_accuracy_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, STEPS, batch  # noqa: E402
from make_metric_fixtures import EVAL_BATCH, METRIC_OUT, record  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402


def autoencoder():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(784, activation="sigmoid"),
        keras.layers.Reshape((28, 28, 1)),
    ], name="autoencoder")


def binary_mlp():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ], name="binary_mlp")


def main():
    os.makedirs(METRIC_OUT, exist_ok=True)
    _, x, y = batch()
    one_hot = np.eye(10, dtype=np.float32)[y]
    upper = (y >= 5).astype(np.float32).reshape(BATCH, 1)
    cases = {
        "autoencoder": record("autoencoder", "mse", ["mae"], x, x,
                              build=autoencoder),
        "categorical_accuracy": record("categorical_accuracy",
                                       "categorical_crossentropy",
                                       ["categorical_accuracy"], x, one_hot),
        "binary_accuracy": record("binary_accuracy", "binary_crossentropy",
                                  ["binary_accuracy"], x, upper,
                                  build=binary_mlp),
    }
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": "training.json's: the first %d Fashion-MNIST training "
                 "images, pixels / 255, the same batch each step; targets: "
                 "the images (autoencoder), one-hot labels "
                 "(categorical_accuracy), label >= 5 as float32 [%d, 1] "
                 "(binary_accuracy)" % (BATCH, BATCH),
        "models": {
            "autoencoder": "Flatten, Dense 64-16-64 (relu), Dense 784 "
                           "(sigmoid), Reshape (28, 28, 1)",
            "categorical_accuracy": "784-8-10 Dense (relu, softmax)",
            "binary_accuracy": "784-8-1 Dense (relu, sigmoid)",
        },
        "optimizer": "Adam(1e-2)",
        "steps": STEPS,
        "evaluate_batch": EVAL_BATCH,
        "cases": cases,
    }
    for name, case in cases.items():
        print(name, case)
    with open(os.path.join(METRIC_OUT, "accuracy.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
