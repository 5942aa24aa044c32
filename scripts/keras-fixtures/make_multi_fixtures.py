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
  attention_mask.keras  two inputs, "image" read as 28 steps of 28
                      features and "allowed" [28, 28] (float 0/1, each
                      example's key steps s < its length 5 + 7i mod 24):
                      Dense(16) -> MultiHeadAttention(2 heads, key_dim 8)
                      (h, h, attention_mask=allowed) -> GlobalAveragePooling1D
                      -> Dense(10, softmax); sparse_categorical_crossentropy.
  softmax_mask.keras  two inputs, "image" read as 28 steps of 28
                      features and "keys" [1, 28] (0.9 on example i's key
                      steps s < 5 + 7i mod 24, 0.1 elsewhere; example 3's
                      all 0.1): Dense(8) query, key and value -> Dot(axes=2)
                      scores -> Softmax()(scores, mask=keys) (kept where the
                      mask is over 0.5, broadcast over the queries; example
                      3's rows all zeros) -> Dropout(0) (hands the mask on)
                      -> Dot(axes=(2, 1)) with the values (drops it) ->
                      GlobalAveragePooling1D -> Dense(10, softmax);
                      sparse_categorical_crossentropy.

multi.json records, per model, every log Keras returns at each step (before
its update): Keras's total loss (the sum of weighted per-output losses),
Keras 3's per-output names ("class_loss", "value_loss", "class_accuracy"),
and Keras's predict on the first 4 examples from the initial weights and
after the 5 steps.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_multi_fixtures.py [CASE ...]

With CASE names, only those are rewritten (multi.json keeps the others).
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


def attention_mask():
    image = keras.Input((28, 28, 1), name="image")
    allowed = keras.Input((28, 28), name="allowed")
    h = L.Dense(16, name="embed")(L.Reshape((28, 28))(image))
    h = L.MultiHeadAttention(num_heads=2, key_dim=8, name="attend")(
        h, h, attention_mask=allowed)
    y = L.Dense(10, activation="softmax", name="label")(
        L.GlobalAveragePooling1D()(h))
    model = keras.Model([image, allowed], y, name="attention_mask")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss="sparse_categorical_crossentropy")
    return model


def softmax_mask():
    image = keras.Input((28, 28, 1), name="image")
    keys = keras.Input((1, 28), name="keys")
    h = L.Reshape((28, 28))(image)
    q = L.Dense(8, name="query")(h)
    k = L.Dense(8, name="key")(h)
    v = L.Dense(8, name="value")(h)
    scores = L.Dot(axes=2, name="scores")([q, k])
    weights = L.Softmax(name="weights")(scores, mask=keys)
    weights = L.Dropout(0.0, name="kept")(weights)
    context = L.Dot(axes=(2, 1), name="context")([weights, v])
    y = L.Dense(10, activation="softmax", name="label")(
        L.GlobalAveragePooling1D()(context))
    model = keras.Model([image, keys], y, name="softmax_mask")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss="sparse_categorical_crossentropy")
    return model


def key_lengths():
    """Example i's real key steps: 5 + 7i mod 24."""
    return 5 + (np.arange(BATCH) * 7) % 24


def key_weights():
    """[BATCH, 1, 28] float: 0.9 on example i's first 5 + 7i mod 24 key
    steps, 0.1 elsewhere (Softmax keeps what is over 0.5); example 3 has no
    key kept."""
    lengths = key_lengths()
    lengths[3] = 0
    keys = np.arange(28)[None, None, :] < lengths[:, None, None]
    return np.where(keys, 0.9, 0.1).astype(np.float32)


def allowed_keys():
    """[BATCH, 28, 28] float 0/1: example i's queries see its first
    5 + 7i mod 24 key steps (a key padding mask)."""
    keys = np.arange(28)[None, None, :] < key_lengths()[:, None, None]
    return np.broadcast_to(keys, (BATCH, 28, 28)).astype(np.float32)


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
    only = set(sys.argv[1:])
    known = {"multi_output", "two_inputs_adam", "attention_mask",
             "softmax_mask"}
    if only - known:
        sys.exit(f"unknown cases {sorted(only - known)}")
    path = os.path.join(MULTI_OUT, "multi.json")
    if only:
        with open(path) as f:
            out = json.load(f)
    else:
        only = known
    if "multi_output" in only:
        fresh_session()
        out["multi_output"] = dict(
            record(multi_output(), "multi_output", {"image": x},
                   [y, value]),
            targets="class = the labels, value = label / 9 as [n, 1] float32")
    if "two_inputs_adam" in only:
        fresh_session()
        out["two_inputs_adam"] = dict(
            record(two_inputs(), "two_inputs_adam",
                   {"image": x, "pixels": x.reshape(BATCH, 784)}, y),
            inputs="image = the examples [n, 28, 28, 1], pixels = the same "
                   "examples flattened [n, 784]")
    if "attention_mask" in only:
        fresh_session()
        out["attention_mask"] = dict(
            record(attention_mask(), "attention_mask",
                   {"image": x, "allowed": allowed_keys()}, y),
            inputs="image = the examples [n, 28, 28, 1], allowed = "
                   "example i's key steps s < 5 + 7i mod 24, [n, 28, 28] "
                   "float 0/1")
    if "softmax_mask" in only:
        fresh_session()
        out["softmax_mask"] = dict(
            record(softmax_mask(), "softmax_mask",
                   {"image": x, "keys": key_weights()}, y),
            inputs="image = the examples [n, 28, 28, 1], keys = 0.9 on "
                   "example i's key steps s < 5 + 7i mod 24 (none for "
                   "example 3), 0.1 elsewhere, [n, 1, 28] float")
    for name in sorted(only):
        print(name, out[name]["steps"])
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
