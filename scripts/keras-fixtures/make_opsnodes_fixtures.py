#!/usr/bin/env python3
"""Writes the Keras fixture of arithmetic with numbers on symbolic tensors
(tests/fixtures/keras), which Keras 3 saves as keras.src.ops nodes with a
number argument (MobileNetV3's hard sigmoid, x + 3.0 and x * (1 / 6)):

  opsnodes.keras  a CNN through x + 3.0, 3.0 - x, x * (1 / 6), 0.5 * x,
                  x / 4.0, 2.0 / (x + 3.0) and x - 1.0;

and opsnodes.json in layers.json's format (make_layer_fixtures.py): the loss
of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's batch
and Keras's predict on the
first 4 examples before and after them. Run as make_fixtures.py
(KERAS_BACKEND=jax); it leaves the other fixtures alone.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_vocabulary_fixtures as mv  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
PREDICT = 4


def opsnodes():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(4, 3, strides=2)(x)                      # 13 x 13 x 4
    hard = L.ReLU(6.0)(h + 3.0) * (1.0 / 6.0)            # hard sigmoid
    h = L.Multiply()([h, hard])
    h = L.Conv2D(4, 3, activation="tanh")(h)              # 11 x 11 x 4
    h = (3.0 - h) / 4.0 + 0.5 * h
    h = 2.0 / (h + 3.0) - 1.0
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="opsnodes")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    mf.fresh_session()
    model = opsnodes()
    model.save(os.path.join(mf.OUT, "opsnodes.keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = mv.train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result["opsnodes"] = rec
    print("opsnodes losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "opsnodes.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
