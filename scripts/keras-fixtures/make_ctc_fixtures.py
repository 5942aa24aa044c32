#!/usr/bin/env python3
"""Regenerates kcc's CTC fixtures (tests/fixtures/keras/ctc).

Per case Keras compiles a small sequence model whose last layer gives
logits [batch, 10 steps, 5 classes] (class 0 the blank) with the ctc loss
(Adam at 1e-2), saves it as ctc/<case>.keras (initial weights and the
compile_config), fits it for 5 epochs on one batch of 16 examples (no
shuffle: each epoch is one step and logs the loss before its update) and
evaluates it afterwards in batches of 6 (a partial last batch).

The batch is data.npz (x [16, 10, 4] float32, y [16, 4] int32 label
sequences padded with 0, narrower than the steps) and weighted.npz (the
same with sample_weight [16]). Its labels have every length from 0 to 4,
repeated labels (which need a blank between them) and padding.

fit.json records per case Keras's history and evaluate()'s loss, and under
"values" a direct check of keras.losses.ctc: logits and labels of 6
examples (a repeated label, padding, an empty sequence, a zero inside the
sequence, which Keras reads as the blank, and an alignment that cannot fit
the steps), the per-example loss and the gradient of their sum with
respect to the logits (jax.grad), in float32 as Keras computes them.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_ctc_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, fresh_session  # noqa: E402

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

CTC_OUT = os.path.join(OUT, "ctc")
N, TIME, FEATURES, CLASSES, WIDTH = 16, 10, 4, 5, 4
EVAL_BATCH = 6

# Label sequences: lengths 0 to 4, repeats (2 2, 3 3 3), padding.
LABELS = [
    [1, 2, 3, 4], [2, 2, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0],
    [3, 3, 3, 0], [1, 3, 0, 0], [4, 4, 1, 1], [2, 0, 0, 0],
    [1, 1, 2, 0], [3, 1, 4, 2], [4, 3, 0, 0], [2, 4, 2, 0],
    [1, 0, 0, 0], [3, 3, 0, 0], [4, 1, 1, 3], [2, 3, 4, 0],
]


def batch():
    rng = np.random.default_rng(4242)
    return {
        "x": rng.uniform(-1, 1, (N, TIME, FEATURES)).astype(np.float32),
        "y": np.array(LABELS, dtype=np.int32),
        "sample_weight": rng.uniform(0, 2, N).astype(np.float32),
    }


def dense_model():
    return keras.Sequential([
        keras.Input((TIME, FEATURES)),
        keras.layers.Dense(16, activation="tanh"),
        keras.layers.Dense(CLASSES),
    ], name="ctc_dense")


def lstm_model():
    return keras.Sequential([
        keras.Input((TIME, FEATURES)),
        keras.layers.LSTM(8, return_sequences=True),
        keras.layers.Dense(CLASSES),
    ], name="ctc_lstm")


# name, model, loss as compile() takes it, weighted
CASES = [
    ("ctc", dense_model, "ctc", False),
    ("ctc_sum_weighted", dense_model, keras.losses.CTC(reduction="sum"), True),
    ("ctc_lstm", lstm_model, keras.losses.CTC(), False),
]


def values():
    """keras.losses.ctc and its gradient on a few hand-made examples."""
    rng = np.random.default_rng(7)
    steps = 6
    labels = np.array([
        [1, 2, 2, 0],   # a repeat: needs a blank between the 2s
        [3, 1, 0, 0],   # padding
        [0, 0, 0, 0],   # no labels: all blanks
        [2, 0, 1, 0],   # a zero inside: Keras takes the first 2 labels, 2 0
        [4, 4, 4, 4],   # needs 7 steps, has 6: no alignment
        [1, 2, 3, 4],   # full width
    ], dtype=np.int32)
    logits = rng.normal(0, 1.5, (len(labels), steps, CLASSES)).astype(
        np.float32)

    def total(z):
        return keras.losses.ctc(labels, z).sum()

    loss = np.asarray(keras.losses.ctc(labels, logits))
    grad = np.asarray(jax.grad(total)(logits))
    return {
        "shape": list(logits.shape),
        "logits": logits.ravel().tolist(),
        "labels": labels.ravel().tolist(),
        "label_width": labels.shape[1],
        "loss": loss.tolist(),
        "grad": grad.ravel().tolist(),
    }


def main():
    os.makedirs(CTC_OUT, exist_ok=True)
    data = batch()
    np.savez(os.path.join(CTC_OUT, "data.npz"), x=data["x"], y=data["y"])
    np.savez(os.path.join(CTC_OUT, "weighted.npz"), **data)
    cases = {}
    for name, build, loss, weighted in CASES:
        fresh_session()
        m = build()
        m.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss=loss)
        m.save(os.path.join(CTC_OUT, name + ".keras"))
        w = data["sample_weight"] if weighted else None
        history = m.fit(data["x"], data["y"], sample_weight=w, batch_size=N,
                        epochs=STEPS, shuffle=False, verbose=0)
        evaluated = m.evaluate(data["x"], data["y"], sample_weight=w,
                               batch_size=EVAL_BATCH, verbose=0,
                               return_dict=True)
        cases[name] = {
            "weighted": weighted,
            "loss": [float(v) for v in history.history["loss"]],
            "evaluate": float(evaluated["loss"]),
        }
        print(name, cases[name]["loss"][0], cases[name]["loss"][-1],
              cases[name]["evaluate"])
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "epochs": STEPS,
        "batch": N,
        "evaluate_batch": EVAL_BATCH,
        "cases": cases,
        "values": values(),
    }
    with open(os.path.join(CTC_OUT, "fit.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
