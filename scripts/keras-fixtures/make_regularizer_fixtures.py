#!/usr/bin/env python3
"""Writes the Keras fixture of kcc's weight and activity regularizers
(tests/fixtures/keras):

  regularized.keras  a CNN whose frozen block (a trainable=False Conv2D and
                     BatchNormalization, both with regularizers, which Keras
                     leaves out of the loss for frozen weights) feeds
                     trainable layers with every regularizer form: L2 and
                     L1 objects, the "l2" and "l1" strings (Keras's default
                     factor 0.01), L1L2, BatchNormalization's beta and
                     gamma regularizers, and activity regularizers (which
                     Keras 3 divides by the batch size);
  regularized_convs.keras  DepthwiseConv2D, SeparableConv2D and
                     Conv2DTranspose with their own regularizer arguments
                     (depthwise_, pointwise_, kernel_, bias_, activity_);

and regularizers.json in batchnorm.json's layout: the loss of each of 5
Adam(1e-3) train_on_batch steps on make_fixtures.py's batch (Keras's logged
loss: the crossentropy plus sum(model.losses)), predict before and after,
and the moving statistics after the steps. Run as make_fixtures.py
(KERAS_BACKEND=jax); it leaves the other generators' outputs alone.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_batchnorm_fixtures as bn  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
R = keras.regularizers


def regularized():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, strides=2, activation="relu", trainable=False,
                 kernel_regularizer=R.L2(0.01),
                 bias_regularizer=R.L1(0.01))(x)
    h = L.BatchNormalization(trainable=False,
                             gamma_regularizer=R.L2(0.05))(h)
    h = L.Conv2D(8, 3, strides=2, kernel_regularizer="l2",
                 bias_regularizer=R.L2(0.02),
                 activity_regularizer=R.L1(1e-3))(h)
    h = L.BatchNormalization(beta_regularizer=R.L1(0.01),
                             gamma_regularizer=R.L2(0.01))(h)
    h = L.ReLU()(h)
    h = L.Flatten()(h)
    h = L.Dense(16, activation="relu",
                kernel_regularizer=R.L1L2(l1=1e-3, l2=1e-2),
                activity_regularizer=R.L2(1e-3))(h)
    y = L.Dense(10, activation="softmax", kernel_regularizer="l1")(h)
    return keras.Model(x, y, name="regularized")


def regularized_convs():
    """The convolution layers whose regularizer arguments are named apart
    from their weights (depthwise_regularizer on DepthwiseConv2D's kernel,
    SeparableConv2D's depthwise and pointwise kernels) and
    Conv2DTranspose's."""
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(4, 3, strides=2, activation="relu")(x)
    h = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                          depthwise_regularizer=R.L2(0.02),
                          bias_regularizer=R.L1(0.01),
                          activity_regularizer=R.L1(1e-3),
                          activation="relu")(h)
    h = L.SeparableConv2D(8, 3, strides=2,
                          depthwise_regularizer=R.L1(0.005),
                          pointwise_regularizer=R.L1L2(l1=1e-3, l2=1e-2),
                          bias_regularizer=R.L2(0.05),
                          activation="relu")(h)
    h = L.Conv2DTranspose(4, 3, strides=2, kernel_regularizer="l2",
                          bias_regularizer=R.L1(0.02))(h)
    h = L.GlobalAveragePooling2D()(h)
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="regularized_convs")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(bn.PREDICT)
    for name, build in [("regularized", regularized),
                        ("regularized_convs", regularized_convs)]:
        mf.fresh_session()
        model = build()
        bn.perturb_batchnorm(model, np.random.default_rng(11))
        # Biases away from zero, so that bias regularizers count from step 1.
        rng = np.random.default_rng(12)
        for layer in model.layers:
            if isinstance(layer, (L.Conv2D, L.Dense, L.DepthwiseConv2D,
                                  L.SeparableConv2D, L.Conv2DTranspose)):
                *kernels, bias = layer.get_weights()
                layer.set_weights(kernels + [rng.normal(0.0, 0.1, bias.shape)
                                             .astype(np.float32)])
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:bn.PREDICT], verbose=0))
        rec = bn.train_record(model, x, y)
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:bn.PREDICT], verbose=0)).astype(np.float64).tolist()
        rec["moving_stats"] = bn.moving_stats(model)
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "regularizers.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
