#!/usr/bin/env python3
"""Regenerates kcc's custom-loss fixture (tests/fixtures/keras/custom_loss).

Keras itself compiles a small Dense model (784-8-10, tanh then linear outputs, Adam
at 1e-3) with a loss and a metric that are Python functions registered as
custom objects (Keras's custom_objects), plus the built-in "mae":

  fixtures>huber          Huber (delta 1) per element, mean over the last
                          axis: one value per example
  fixtures>max_abs_error  max |y_true - y_pred| over the last axis

and saves it as .keras (initial weights and compile_config naming both).
It then trains 5 `train_on_batch` steps on make_fixtures.py's batch with
the one-hot labels as float targets, once unweighted and once with the
per-example weights of make_weighting_fixtures.py, and records each step's
logs (before its update), `evaluate` and `predict` on the trained weights.
kcc supplies the same functions in C++ (kcc::CompileOptions::customObjects)
and must reproduce these numbers (tests/e2e/CustomLossParityTest.cpp).

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_custom_loss_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, batch, fresh_session, record_header  # noqa: E402
from make_weighting_fixtures import SAMPLE_WEIGHT  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

CUSTOM_OUT = os.path.join(OUT, "custom_loss")
PREDICT_EXAMPLES = 4


@keras.saving.register_keras_serializable(package="fixtures")
def huber(y_true, y_pred):
    d = keras.ops.abs(y_pred - y_true)
    quadratic = 0.5 * keras.ops.square(d)
    linear = d - 0.5
    return keras.ops.mean(keras.ops.where(d <= 1.0, quadratic, linear),
                          axis=-1)


@keras.saving.register_keras_serializable(package="fixtures")
def max_abs_error(y_true, y_pred):
    return keras.ops.max(keras.ops.abs(y_true - y_pred), axis=-1)


def model():
    fresh_session()
    m = keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(8, activation="tanh"),
        keras.layers.Dense(10),
    ], name="custom_loss_mlp")
    m.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
              loss=huber, metrics=[max_abs_error, "mae"])
    return m


def record(x, y, **weighting):
    m = model()
    steps = []
    for _ in range(STEPS):
        m.reset_metrics()
        logs = m.train_on_batch(x, y, return_dict=True, **weighting)
        steps.append({k: float(v) for k, v in logs.items()})
    evaluate = m.evaluate(x, y, batch_size=12, return_dict=True, verbose=0,
                          **weighting)
    predict = m.predict(x[:PREDICT_EXAMPLES], verbose=0)
    return {"steps": steps,
            "evaluate": {k: float(v) for k, v in evaluate.items()},
            "predict": predict.astype(np.float64).tolist()}


def main():
    os.makedirs(CUSTOM_OUT, exist_ok=True)
    _, x, labels = batch()
    y = keras.utils.to_categorical(labels, 10).astype(np.float32)
    model().save(os.path.join(CUSTOM_OUT, "custom_loss.keras"))
    out = record_header(PREDICT_EXAMPLES)
    out["targets"] = "the batch's labels one-hot, float32"
    out["evaluate_batch_size"] = 12
    out["cases"] = {
        "unweighted": record(x, y),
        "sample_weight": dict(record(x, y, sample_weight=SAMPLE_WEIGHT),
                              sample_weight=[float(w) for w in
                                             SAMPLE_WEIGHT]),
    }
    with open(os.path.join(CUSTOM_OUT, "custom_loss.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
