#!/usr/bin/env python3
"""Writes the Keras fixtures of kcc's mixed_bfloat16 dtype policy
(tests/fixtures/keras):

  mixed_mlp.keras  Flatten, Dense(128, relu), Dropout(0), Dense(64, relu),
                   Dense(10) and a float32 Activation("softmax"): the
                   pattern Keras's mixed precision guide recommends;
  mixed_cnn.keras  Conv2D(8, 3, relu), MaxPooling2D, Conv2D(16, 3, relu,
                   strides 2), Flatten, Dense(10, softmax) computed in
                   bfloat16 throughout (its softmax too);

each built under keras.mixed_precision.set_global_policy("mixed_bfloat16"),
and mixed.json: per model, the loss of each of 5 Adam(1e-3)
train_on_batch steps on make_fixtures.py's batch (the first 32
Fashion-MNIST training examples) and Keras's predict on the first 4
examples from the initial weights. Run as make_fixtures.py
(KERAS_BACKEND=jax); it leaves the other generators' outputs alone.
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


def mlp():
    x = keras.Input((28, 28, 1))
    h = L.Flatten()(x)
    h = L.Dense(128, activation="relu")(h)
    h = L.Dropout(0.0)(h)
    h = L.Dense(64, activation="relu")(h)
    h = L.Dense(10)(h)
    y = L.Activation("softmax", dtype="float32")(h)
    return keras.Model(x, y, name="mixed_mlp")


def cnn():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, activation="relu")(x)
    h = L.MaxPooling2D()(h)
    h = L.Conv2D(16, 3, strides=2, activation="relu")(h)
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="mixed_cnn")


def train_record(model, x, y):
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy())
    losses = []
    for _ in range(mf.STEPS):
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    return {"optimizer": {"name": "adam", "learning_rate": 1e-3,
                          "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7},
            "loss": "sparse_categorical_crossentropy", "from_logits": False,
            "step_losses": losses}


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build in (("mixed_mlp", mlp), ("mixed_cnn", cnn)):
        mf.fresh_session()
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        model = build()
        keras.mixed_precision.set_global_policy("float32")
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        rec = {"output_dtype": str(initial.dtype)}
        rec.update(train_record(model, x, y))
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        result[name] = rec
        print(name, rec["output_dtype"], "losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "mixed.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
