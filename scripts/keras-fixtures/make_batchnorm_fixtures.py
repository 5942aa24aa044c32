#!/usr/bin/env python3
"""Writes the Keras fixtures of kcc's BatchNormalization and frozen layers
(tests/fixtures/keras):

  resnet.keras   a small ResNet on 28x28x1: a strided Conv2D stem, one
                 identity block and one downsampling block (strided 3x3 and
                 strided 1x1 shortcut), each Conv2D followed by
                 BatchNormalization, ReLU layers, Add, GlobalAveragePooling2D
                 and a Dense softmax;
  frozen.keras   an MLP with a frozen block (a trainable=False Dense and a
                 trainable=False BatchNormalization, which Keras 3 runs in
                 inference mode) under trainable BatchNormalization layers;

and batchnorm.json: per model, the loss of each of 5 Adam(1e-3)
train_on_batch steps on make_fixtures.py's batch (the first 32
Fashion-MNIST training examples), Keras's predict on the first 4 examples
from the initial weights (those in the archive) and after the 5 steps, and
every BatchNormalization's moving mean and variance after the steps.

The BatchNormalization weights are drawn away from Keras's initial values
(gamma 1, beta 0, mean 0, variance 1) before saving, so that inference on
the moving statistics and the frozen layer's scale and shift are tested on
numbers that are not the identity. Run as make_fixtures.py
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


def conv_bn(h, filters, kernel, strides=1, momentum=0.99):
    h = L.Conv2D(filters, kernel, strides=strides, padding="same",
                 use_bias=False)(h)
    return L.BatchNormalization(momentum=momentum)(h)


def resnet():
    x = keras.Input((28, 28, 1))
    h = L.ReLU()(conv_bn(x, 16, 3, strides=2, momentum=0.9))   # 14 x 14
    r = L.ReLU()(conv_bn(h, 16, 3))
    r = conv_bn(r, 16, 3)
    h = L.ReLU()(L.Add()([h, r]))
    r = L.ReLU()(conv_bn(h, 32, 3, strides=2))                  # 7 x 7
    r = conv_bn(r, 32, 3)
    s = conv_bn(h, 32, 1, strides=2)
    h = L.ReLU()(L.Add()([s, r]))
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(h))
    return keras.Model(x, y, name="resnet")


def frozen():
    x = keras.Input((28, 28, 1))
    h = L.Dense(64, activation="relu", trainable=False)(L.Flatten()(x))
    h = L.BatchNormalization(trainable=False)(h)
    h = L.Dense(24)(h)
    h = L.BatchNormalization(momentum=0.9, epsilon=1e-2)(h)
    h = L.ReLU()(h)
    h = L.BatchNormalization(center=False, scale=False)(h)
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="frozen")


def perturb_batchnorm(model, rng):
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            values = []
            for w in layer.weights:
                n = w.shape[0]
                if w.name in ("gamma", "moving_variance"):
                    values.append(rng.uniform(0.5, 1.5, n))
                else:
                    values.append(rng.normal(0.0, 0.1, n))
            layer.set_weights([v.astype(np.float32) for v in values])


def moving_stats(model):
    return {layer.name: {"moving_mean": np.asarray(
                             layer.moving_mean).astype(np.float64).tolist(),
                         "moving_variance": np.asarray(
                             layer.moving_variance).astype(np.float64).tolist()}
            for layer in model.layers
            if isinstance(layer, L.BatchNormalization)}


def train_record(model, x, y):
    # make_fixtures.train_record also calls model(x, training=True), which
    # would move the moving statistics a second time per step.
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])
    losses = []
    for _ in range(mf.STEPS):
        model.reset_metrics()
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
    for name, build in (("resnet", resnet), ("frozen", frozen)):
        mf.fresh_session()
        model = build()
        perturb_batchnorm(model, np.random.default_rng(7))
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        rec = train_record(model, x, y)
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        rec["moving_stats"] = moving_stats(model)
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "batchnorm.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
