#!/usr/bin/env python3
"""Regenerates kcc's multi-input/multi-output fixtures (tests/fixtures/keras/multi).

Keras itself builds, compiles and saves (initial weights and compile_config)
two functional models, then trains 5 `train_on_batch` steps with Adam(1e-2)
on the batch make_fixtures.py uses (the first 32 Fashion-MNIST training
images, the same batch each step):

  multi_output.keras  one input, a shared Dense trunk and two heads (the
                      model's outputs, a list in this order):
                      "class" (Dense 10, softmax; sparse_categorical_crossentropy,
                      metrics ["accuracy"]) and "value" (Dense 1, linear; mse
                      against label / 9); loss_weights {"class": 1.0,
                      "value": 0.5}. The compile config gives loss,
                      loss_weights and metrics as dicts by output name.
  two_inputs_adam.keras  two inputs, "image" [28, 28, 1] and "pixels" [784]
                      (the same examples flattened), through their own Dense
                      layers, joined by Concatenate into a softmax head;
                      sparse_categorical_crossentropy and accuracy.

multi.json records, per model, every log Keras returns at each step (before
its update): Keras's total loss (the sum of weighted per-output losses),
Keras 3's per-output names ("class_loss", "value_loss", "class_accuracy"),
and Keras's predict on the first 4 examples from the initial weights and
after the 5 steps.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_multi_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, STEPS, batch, fresh_session  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
MULTI_OUT = os.path.join(OUT, "multi")
PREDICT = 4


def multi_output():
    x = keras.Input((28, 28, 1), name="image")
    trunk = L.Dense(16, activation="relu", name="trunk")(L.Flatten()(x))
    label = L.Dense(10, activation="softmax", name="class")(trunk)
    value = L.Dense(1, name="value")(trunk)
    model = keras.Model(x, [label, value], name="multi_output")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss={"class": "sparse_categorical_crossentropy",
                        "value": "mse"},
                  loss_weights={"class": 1.0, "value": 0.5},
                  metrics={"class": ["accuracy"]})
    return model


def two_inputs():
    image = keras.Input((28, 28, 1), name="image")
    pixels = keras.Input((784,), name="pixels")
    a = L.Dense(16, activation="relu", name="from_image")(L.Flatten()(image))
    b = L.Dense(8, activation="tanh", name="from_pixels")(pixels)
    y = L.Dense(10, activation="softmax", name="label")(
        L.Concatenate()([a, b]))
    model = keras.Model([image, pixels], y, name="two_inputs_adam")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def as_list(a):
    return np.asarray(a).astype(np.float64).tolist()


def record(model, name, inputs, targets):
    model.save(os.path.join(MULTI_OUT, name + ".keras"))
    first = {k: v[:PREDICT] for k, v in inputs.items()}

    def predict():
        p = model.predict(first, verbose=0)
        return ([as_list(v) for v in p] if isinstance(p, (list, tuple))
                else as_list(p))

    rec = {"initial_predict": predict(), "steps": [],
           "output_names": list(model.output_names)}
    for _ in range(STEPS):
        model.reset_metrics()
        logs = model.train_on_batch(inputs, targets, return_dict=True)
        rec["steps"].append({k: float(v) for k, v in logs.items()})
    rec["final_predict"] = predict()
    return rec


def main():
    os.makedirs(MULTI_OUT, exist_ok=True)
    _, x, y = batch()
    value = (y.astype(np.float32) / 9.0).reshape(BATCH, 1)
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": "make_fixtures.py's: the first %d Fashion-MNIST training "
                 "images, pixels / 255, the same batch each step" % BATCH,
        "steps": STEPS,
        "predict_examples": PREDICT,
    }
    fresh_session()
    out["multi_output"] = dict(
        record(multi_output(), "multi_output", {"image": x},
               [y, value]),
        targets="class = the labels, value = label / 9 as [n, 1] float32")
    fresh_session()
    out["two_inputs_adam"] = dict(
        record(two_inputs(), "two_inputs_adam",
               {"image": x, "pixels": x.reshape(BATCH, 784)}, y),
        inputs="image = the examples [n, 28, 28, 1], pixels = the same "
               "examples flattened [n, 784]")
    for name in ("multi_output", "two_inputs_adam"):
        print(name, out[name]["steps"])
    with open(os.path.join(MULTI_OUT, "multi.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
