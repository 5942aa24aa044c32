#!/usr/bin/env python3
"""Writes the fixture of Keras's initializers with arguments
(tests/fixtures/keras/initializers):

  initializers.keras       a functional model whose every weight has an
                           initializer with arguments, as real models set
                           them: RandomNormal(mean, stddev) (embeddings,
                           transformers, GANs), TruncatedNormal(stddev=0.02)
                           (ViT / BERT), RandomUniform(minval, maxval),
                           Constant(value), VarianceScaling in each mode and
                           distribution (and Keras's "normal" spelling),
                           Identity, Orthogonal(gain), an LSTM with
                           unit_forget_bias around Constant(0.1), and the
                           strings "random_normal", "truncated_normal",
                           "variance_scaling" and "uniform"
                           (which Keras saves as those classes with their
                           defaults). Keras draws the weights; kcc must
                           import them and draw its own from the config.
  initializers_model.json  model.to_json(): the same config, to build
                           without weights.
  initializers.json        the inputs (an image batch and token ids) and
                           Keras's predict on them, and per layer with
                           weights their paths and shapes and the
                           layer's *_initializer configs.

Layers with the initializer of each weight (shapes for the statistics):

  conv2d       [3, 3, 32, 64]  VarianceScaling(2, fan_out, untruncated_normal)
               bias Constant(0.01)
  conv2d_1     [3, 3, 64, 32]  VarianceScaling(0.5, fan_avg, uniform)
               bias Constant(-0.02)
  embedding    [600, 32]       RandomNormal(0, 0.02)
  embedding_1  [40, 16]        "uniform"
  lstm         kernel [16, 32] RandomUniform(-0.2, 0.2), recurrent [8, 32]
               Orthogonal(gain=0.5), bias [32] Constant(0.1) with
               unit_forget_bias (Keras: [0.1]*8 + [1]*8 + [0.1]*16)
  dense        [72, 256]       TruncatedNormal(0, 0.02), bias RandomNormal(
               mean=0.1, stddev=0.05)
  layer_normalization  gamma Constant(0.5), beta RandomUniform(-0.1, 0.1)
  dense_1      [256, 128]      RandomUniform(-1, 1), bias "random_normal"
  dense_2      [128, 128]      VarianceScaling(1.5, fan_in, "normal"),
               bias "truncated_normal"
  dense_3      [128, 128]      Identity() (Keras 3.15.1's Identity.get_config
               returns {}: a gain other than 1 would not survive the save)
  dense_4      [128, 4]        "variance_scaling", bias Constant(1) (an int)

The string "constant" is not in the model: Keras 3.15.1 cannot build
Constant from it (Constant.from_config needs a "value"); kcc's tests read
it, and "normal", in a copy of initializers_model.json.

Run as make_fixtures.py (KERAS_BACKEND=jax, Keras 3.15.1):

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_initializer_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
I = keras.initializers

DIR = os.path.join(mf.OUT, "initializers")
PREDICT = 4


def model():
    image = keras.Input((6, 6, 32), name="image")
    tokens = keras.Input((5,), dtype="int32", name="tokens")
    h = L.Conv2D(64, 3, padding="same", activation="relu",
                 kernel_initializer=I.VarianceScaling(
                     scale=2.0, mode="fan_out",
                     distribution="untruncated_normal"),
                 bias_initializer=I.Constant(0.01))(image)
    h = L.Conv2D(32, 3, activation="relu",
                 kernel_initializer=I.VarianceScaling(
                     scale=0.5, mode="fan_avg", distribution="uniform"),
                 bias_initializer=I.Constant(value=-0.02))(h)
    h = L.GlobalAveragePooling2D()(h)
    e = L.Embedding(600, 32, embeddings_initializer=I.RandomNormal(
        mean=0.0, stddev=0.02))(tokens)
    e = L.GlobalAveragePooling1D()(e)
    s = L.Embedding(40, 16, embeddings_initializer="uniform")(tokens)
    s = L.LSTM(8, kernel_initializer=I.RandomUniform(minval=-0.2, maxval=0.2),
               recurrent_initializer=I.Orthogonal(gain=0.5),
               bias_initializer=I.Constant(0.1))(s)
    h = L.Concatenate()([h, e, s])
    h = L.Dense(256, activation="gelu",
                kernel_initializer=I.TruncatedNormal(mean=0.0, stddev=0.02),
                bias_initializer=I.RandomNormal(mean=0.1, stddev=0.05))(h)
    h = L.LayerNormalization(
        gamma_initializer=I.Constant(value=0.5),
        beta_initializer=I.RandomUniform(minval=-0.1, maxval=0.1))(h)
    h = L.Dense(128, activation="tanh",
                kernel_initializer=I.RandomUniform(minval=-1, maxval=1),
                bias_initializer="random_normal")(h)
    h = L.Dense(128, activation="tanh",
                kernel_initializer=I.VarianceScaling(
                    scale=1.5, mode="fan_in", distribution="normal"),
                bias_initializer="truncated_normal")(h)
    h = L.Dense(128, kernel_initializer=I.Identity())(h)
    y = L.Dense(4, activation="softmax",
                kernel_initializer="variance_scaling",
                bias_initializer=I.Constant(1))(h)
    return keras.Model([image, tokens], y, name="initializers")


def main():
    os.makedirs(DIR, exist_ok=True)
    mf.fresh_session()
    m = model()
    m.save(os.path.join(DIR, "initializers.keras"))
    with open(os.path.join(DIR, "initializers_model.json"), "w") as f:
        f.write(m.to_json(indent=1))
        f.write("\n")
    rng = np.random.default_rng(5)
    image = rng.normal(0.0, 1.0, (PREDICT, 6, 6, 32)).astype(np.float32)
    tokens = rng.integers(0, 40, (PREDICT, 5)).astype(np.int32)
    pred = np.asarray(m.predict([image, tokens], verbose=0))
    layers = []
    for layer in m.layers:
        if not layer.weights:
            continue
        cfg = layer.get_config()
        layers.append({
            "layer": layer.name,
            "weights": [{"path": w.path, "shape": list(w.shape)}
                        for w in layer.weights],
            "initializers": {k: v for k, v in cfg.items()
                             if k.endswith("_initializer")}})
    record = {"keras_version": keras.__version__,
              "backend": keras.backend.backend(),
              "image": image.astype(np.float64).tolist(),
              "tokens": tokens.tolist(),
              "predict": pred.astype(np.float64).tolist(),
              "layers": layers}
    with open(os.path.join(DIR, "initializers.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print("predict", pred)
    for entry in layers:
        print(entry["layer"], entry["initializers"])


if __name__ == "__main__":
    main()
