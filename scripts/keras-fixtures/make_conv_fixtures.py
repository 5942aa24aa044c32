#!/usr/bin/env python3
"""Writes the Keras fixtures of kcc's convolution layers (tests/fixtures/keras):

  conv_windows.keras    Conv2D strided (2x2 and 2x1), dilated (2 and 2x1),
                        grouped (groups 4 and 2, one of them strided);
  conv_depthwise.keras  DepthwiseConv2D (depth_multiplier 2, strided,
                        dilated) and SeparableConv2D (depth_multiplier 2,
                        strided; dilated);
  conv_transpose.keras  Conv2DTranspose, same (stride 2) and valid (strides
                        2x1, a 3x2 kernel; a dilated one);
  mobilenet.keras       a MobileNet-style model on 28x28x1: strided Conv2D,
                        DepthwiseConv2D (depth_multiplier 2), 1x1 Conv2D,
                        SeparableConv2D, each without bias and followed by
                        BatchNormalization (perturbed statistics) and the
                        ReLU(max_value=6) layer, GlobalAveragePooling2D;

and conv.json in layers.json's format (make_layer_fixtures.py): per model
the loss of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's
batch, Keras's predict on the first 4 examples before and after them, and
(mobilenet) the moving statistics after them.
Run as make_fixtures.py (KERAS_BACKEND=jax).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_batchnorm_fixtures as bnf  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
PREDICT = 4


def conv_windows():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)  # 14
    h = L.Conv2D(8, 3, dilation_rate=2, activation="relu")(h)            # 10
    h = L.Conv2D(8, 3, padding="same", groups=4, activation="relu")(h)   # 10
    h = L.Conv2D(8, (3, 2), strides=(2, 1), groups=2)(h)                 # 4x9
    h = L.Conv2D(8, 3, dilation_rate=(2, 1), padding="same",
                 activation="tanh")(h)
    y = L.Dense(10)(L.Flatten()(h))
    return keras.Model(x, y, name="conv_windows")


def conv_depthwise():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(4, 3, activation="relu")(x)                             # 26
    h = L.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2,
                          activation="relu")(h)                          # 13
    h = L.DepthwiseConv2D(3, dilation_rate=2, use_bias=False)(h)         # 9
    h = L.SeparableConv2D(8, 3, strides=2, padding="same",
                          depth_multiplier=2, activation="relu")(h)      # 5
    h = L.SeparableConv2D(8, 2, dilation_rate=2, padding="same")(h)
    y = L.Dense(10)(L.Flatten()(h))
    return keras.Model(x, y, name="conv_depthwise")


def conv_transpose():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)  # 14
    h = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(h)  # 7
    h = L.Conv2DTranspose(8, 3, strides=2, padding="same",
                          activation="relu")(h)                          # 14
    h = L.Conv2DTranspose(4, (3, 2), strides=(2, 1))(h)                  # 29x15
    h = L.Conv2DTranspose(4, 2, dilation_rate=2, activation="relu")(h)   # 31x17
    h = L.MaxPooling2D(4)(h)
    y = L.Dense(10)(L.Flatten()(h))
    return keras.Model(x, y, name="conv_transpose")


def mobilenet():
    def block(layer, t):
        # MobileNet's unit: convolution without bias, BatchNormalization,
        # ReLU(6).
        t = L.BatchNormalization()(layer(t))
        return L.ReLU(max_value=6.0)(t)

    x = keras.Input((28, 28, 1))
    h = block(L.Conv2D(16, 3, strides=2, padding="same", use_bias=False),
              x)                                                         # 14
    h = block(L.DepthwiseConv2D(3, padding="same", use_bias=False), h)
    h = block(L.Conv2D(32, 1, use_bias=False), h)
    h = block(L.DepthwiseConv2D(3, strides=2, padding="same",
                                depth_multiplier=2, use_bias=False), h)  # 7
    h = block(L.Conv2D(64, 1, use_bias=False), h)
    h = block(L.SeparableConv2D(64, 3, padding="same", use_bias=False), h)
    h = relu_6(L.SeparableConv2D(64, 3, strides=2, padding="same")(h))   # 4
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(h))
    return keras.Model(x, y, name="mobilenet")


def relu_6(t):
    return L.ReLU(max_value=6.0)(t)


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build, from_logits in (("conv_windows", conv_windows, True),
                                     ("conv_depthwise", conv_depthwise, True),
                                     ("conv_transpose", conv_transpose, True),
                                     ("mobilenet", mobilenet, False)):
        mf.fresh_session()
        model = build()
        has_bn = any(isinstance(layer, L.BatchNormalization)
                     for layer in model.layers)
        if has_bn:
            bnf.perturb_batchnorm(model, np.random.default_rng(7))
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        # make_fixtures.train_record runs an extra training-mode call, which
        # would move the moving statistics once more.
        rec = (bnf.train_record(model, x, y) if has_bn
               else mf.train_record(model, from_logits, x, y))
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        rec.pop("initial_outputs_first2", None)
        if has_bn:
            rec["moving_stats"] = bnf.moving_stats(model)
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "conv.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
