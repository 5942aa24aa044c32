#!/usr/bin/env python3
"""Writes the Keras fixture of a layer class of the user's own, registered
with keras.saving.register_keras_serializable (tests/fixtures/keras/custom):

  scaled_dense.keras  Flatten -> ScaledDense(32) -> Dense(10, softmax), where
                      ScaledDense (package "demo") computes
                      tanh(x @ kernel + bias) * scale;

and scaled_dense.json in layers.json's format (make_layer_fixtures.py): the
loss of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's
batch and Keras's predict on the first 4 examples before and after them.
kcc reads the archive with the C++ class examples/embed/ScaledDense.h
registers. Run as make_fixtures.py (KERAS_BACKEND=jax); it leaves the other
fixtures alone.
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


@keras.saving.register_keras_serializable(package="demo")
class ScaledDense(L.Layer):
    """tanh(x @ kernel + bias) * scale, with a learned scale per unit."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform",
                                      name="kernel")
        self.bias = self.add_weight(shape=(self.units,),
                                    initializer="zeros", name="bias")
        self.scale = self.add_weight(shape=(self.units,),
                                     initializer="ones", name="scale")

    def call(self, x):
        h = keras.ops.tanh(keras.ops.matmul(x, self.kernel) + self.bias)
        return h * self.scale

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def scaled_dense():
    x = keras.Input((28, 28, 1))
    h = ScaledDense(32)(L.Flatten()(x))
    return keras.Model(x, L.Dense(10, activation="softmax")(h),
                       name="custom_layer")


def main():
    out = os.path.join(mf.OUT, "custom")
    os.makedirs(out, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    mf.fresh_session()
    model = scaled_dense()
    model.save(os.path.join(out, "scaled_dense.keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = mv.train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result["scaled_dense"] = rec
    print("scaled_dense losses", rec["step_losses"])
    with open(os.path.join(out, "scaled_dense.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
