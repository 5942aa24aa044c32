#!/usr/bin/env python3
"""Writes the Keras fixture of the 1-D convolution variants
(tests/fixtures/keras):

  conv1d.keras  a sequence model through DepthwiseConv1D (strided, same
                padding, depth multiplier 2), SeparableConv1D (dilated) and
                Conv1DTranspose (strided, same and valid padding);

and conv1d.json in layers.json's format (make_layer_fixtures.py): the loss
of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's batch
(its images read as 28 steps of 28 features), and Keras's predict on the
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


def conv1d():
    x = keras.Input((28, 28, 1))
    h = L.Reshape((28, 28))(x)
    h = L.DepthwiseConv1D(3, strides=2, padding="same", depth_multiplier=2,
                          activation="relu")(h)                # 14 x 56
    h = L.SeparableConv1D(12, 3, dilation_rate=2, activation="tanh")(h)
    h = L.Conv1DTranspose(8, 3, strides=2, padding="same")(h)  # 20 x 8
    h = L.Conv1DTranspose(4, 2, activation="relu")(h)          # 21 x 4
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="conv1d")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    mf.fresh_session()
    model = conv1d()
    model.save(os.path.join(mf.OUT, "conv1d.keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = mv.train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result["conv1d"] = rec
    print("conv1d losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "conv1d.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
