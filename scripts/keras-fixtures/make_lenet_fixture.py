#!/usr/bin/env python3
"""Writes tests/fixtures/keras/lenet/lenet.keras and lenet.json: LeNet-5 as
a Keras user writes it today (tanh convolutions, the first with
padding="same", AveragePooling2D, tanh Dense layers, softmax), compiled
with SGD(0.05, momentum=0.9), sparse categorical crossentropy and
accuracy. The archive carries that compile config, so kcc trains it with
Keras's optimizer. lenet.json, in conv.json's format: the loss of each of
5 train_on_batch steps on make_fixtures.py's batch and Keras's predict on
the first 4 examples before and after them.
Run as make_fixtures.py (KERAS_BACKEND=jax).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
PREDICT = 4
OUT = os.path.join(mf.OUT, "lenet")


def lenet():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        L.Conv2D(6, 5, padding="same", activation="tanh"),   # 28x28x6
        L.AveragePooling2D(2),                               # 14x14x6
        L.Conv2D(16, 5, activation="tanh"),                  # 10x10x16
        L.AveragePooling2D(2),                               # 5x5x16
        L.Flatten(),
        L.Dense(120, activation="tanh"),
        L.Dense(84, activation="tanh"),
        L.Dense(10, activation="softmax"),
    ], name="lenet")


def main():
    os.makedirs(OUT, exist_ok=True)
    _, x, y = mf.batch()
    mf.fresh_session()
    model = lenet()
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.save(os.path.join(OUT, "lenet.keras"))
    rec = {"loss": "sparse_categorical_crossentropy", "from_logits": False,
           "initial_predict": np.asarray(model.predict(
               x[:PREDICT], verbose=0)).astype(np.float64).tolist()}
    losses = []
    for _ in range(mf.STEPS):
        model.reset_metrics()
        losses.append(float(model.train_on_batch(x, y, return_dict=True)["loss"]))
    rec["step_losses"] = losses
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result = mf.record_header(PREDICT)
    result["lenet"] = rec
    print("lenet losses", losses)
    with open(os.path.join(OUT, "lenet.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
