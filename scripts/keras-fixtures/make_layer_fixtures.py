#!/usr/bin/env python3
"""Writes the Keras fixtures of kcc's layer coverage (tests/fixtures/keras):

  activations.keras  an MLP whose branches use every Keras activation kcc
                     has, as activation= strings and as layers (ReLU in its
                     three forms, LeakyReLU, PReLU, ELU, Activation);
  merging.keras      a functional model whose two branches meet in every
                     merge layer (Add, Subtract, Multiply, Average, Maximum,
                     Minimum) and a Concatenate;
  two_inputs.keras   a functional model of two inputs (an image and its
                     pixels) joined by Concatenate and merges, checked
                     eagerly (kcc's Executable takes one input);
  vision.keras       a small CNN with ZeroPadding2D, Cropping2D,
                     UpSampling2D, a Concatenate along the width and
                     GlobalAveragePooling2D / GlobalMaxPooling2D (keepdims
                     too);

and layers.json: per model, the loss of each of 5 Adam(1e-3) train_on_batch
steps on the fixed batch of make_fixtures.py (the first 32 Fashion-MNIST
training examples), and Keras's predict on the first 4 examples, from the
initial weights (those in the archive) and after the 5 steps. Run as
make_fixtures.py (KERAS_BACKEND=jax); it leaves make_fixtures.py's outputs
alone.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers

# Every activation= string kcc knows (swish and hard_swish are aliases Keras
# serializes under their canonical names).
ACTIVATIONS = ["relu", "sigmoid", "tanh", "elu", "selu", "gelu", "silu",
               "swish", "softplus", "softsign", "hard_sigmoid", "hard_silu",
               "hard_swish", "relu6", "exponential", "log_softmax", "mish",
               "leaky_relu", "softmax", "linear"]
PREDICT = 4


def activations():
    x = keras.Input((28, 28, 1))
    h = L.Dense(64, activation="relu")(L.Flatten()(x))
    branches = [L.Dense(8, activation=a)(h) for a in ACTIVATIONS]
    for layer in (L.ReLU(), L.ReLU(max_value=6.0),
                  L.ReLU(max_value=4.0, negative_slope=0.1, threshold=0.5),
                  L.ReLU(negative_slope=0.2), L.LeakyReLU(), L.PReLU(),
                  L.PReLU(shared_axes=[1]), L.ELU(alpha=0.5),
                  L.Activation("gelu"), L.Activation("mish")):
        branches.append(layer(L.Dense(8)(h)))
    y = L.Dense(10, activation="softmax")(L.Concatenate()(branches))
    return keras.Model(x, y, name="activations")


def merging():
    x = keras.Input((28, 28, 1))
    f = L.Flatten()(x)
    a = L.Dense(32, activation="relu")(f)
    b = L.Dense(32, activation="tanh")(f)
    merged = [L.Add()([a, b]), L.Subtract()([a, b]), L.Multiply()([a, b]),
              L.Average()([a, b]), L.Maximum()([a, b]), L.Minimum()([a, b]),
              L.Multiply()([a, b, a])]
    y = L.Dense(10, activation="softmax")(L.Concatenate(axis=1)(merged))
    return keras.Model(x, y, name="merging")


def vision():
    x = keras.Input((28, 28, 1))
    h = L.ZeroPadding2D(((1, 2), (2, 1)))(x)                 # 31 x 31
    h = L.Conv2D(16, 3, activation="relu")(h)                # 29 x 29
    h = L.Cropping2D(((1, 0), (0, 1)))(h)                    # 28 x 28
    p = L.MaxPooling2D(2)(h)                                 # 14 x 14
    u = L.UpSampling2D((2, 1))(p)                            # 28 x 14
    v = L.Conv2D(16, 3, padding="same", activation="relu")(u)
    w = L.Concatenate(axis=2)([v, u])                        # 28 x 28
    w = L.ZeroPadding2D(1)(w)                                # 30 x 30
    w = L.Cropping2D(2)(w)                                   # 26 x 26
    g = [L.GlobalAveragePooling2D()(w), L.GlobalMaxPooling2D()(w),
         L.Flatten()(L.GlobalAveragePooling2D(keepdims=True)(w)),
         L.Flatten()(L.GlobalMaxPooling2D(keepdims=True)(p)),
         L.Flatten()(L.MaxPooling2D(4)(L.UpSampling2D(1)(p)))]
    y = L.Dense(10)(L.Concatenate()(g))
    return keras.Model(x, y, name="vision")


def two_inputs():
    # kcc's Executable and `kcc train` take one input; this model is checked
    # eagerly (the functional graph with two inputs) against Keras's predict.
    image = keras.Input((28, 28, 1), name="image")
    pixels = keras.Input((784,), name="pixels")
    a = L.Dense(32, activation="relu")(L.Flatten()(image))
    b = L.Dense(32, activation="tanh")(pixels)
    merged = [L.Concatenate()([a, b]), L.Multiply()([a, b]),
              L.Subtract()([a, b]), L.Maximum()([a, b])]
    y = L.Dense(10, activation="softmax")(L.Concatenate()(merged))
    return keras.Model([image, pixels], y, name="two_inputs")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build, from_logits in (("activations", activations, False),
                                     ("merging", merging, False),
                                     ("vision", vision, True)):
        mf.fresh_session()
        model = build()
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        rec = mf.train_record(model, from_logits, x, y)
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        rec.pop("initial_outputs_first2", None)
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    mf.fresh_session()
    model = two_inputs()
    model.save(os.path.join(mf.OUT, "two_inputs.keras"))
    images = x[:PREDICT]
    result["two_inputs"] = {
        "inputs": "image = the first examples [n, 28, 28, 1], pixels = the "
                  "same examples flattened [n, 784]",
        "predict": np.asarray(model.predict(
            [images, images.reshape(PREDICT, 784)], verbose=0)).astype(
                np.float64).tolist()}
    with open(os.path.join(mf.OUT, "layers.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
