#!/usr/bin/env python3
"""Writes the Keras fixture of the Attention and AdditiveAttention layers
(tests/fixtures/keras):

  attention.keras  a sequence model through Attention (dot scores plain
                   and scaled, causal; concat scores with a key) and
                   AdditiveAttention (scaled, causal; unscaled);

and attention.json in layers.json's format (make_layer_fixtures.py): the loss
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


def attention():
    x = keras.Input((28, 28, 1))
    h = L.Reshape((28, 28))(x)
    h = L.Conv1D(12, 3, strides=2, activation="tanh")(h)      # 13 x 12
    q = L.Dense(8)(h)
    v = L.Dense(8)(h)
    k = L.Dense(8)(h)
    outs = [
        L.Attention()([q, v]),
        L.Attention(use_scale=True)([q, v, k], use_causal_mask=True),
        L.Attention(use_scale=True, score_mode="concat")([q, v, k]),
        L.AdditiveAttention()([q, v], use_causal_mask=True),
        L.AdditiveAttention(use_scale=False)([q, v, k]),
    ]
    h = L.Concatenate()(outs)                                   # 13 x 40
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="attention")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    mf.fresh_session()
    model = attention()
    model.save(os.path.join(mf.OUT, "attention.keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = mv.train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result["attention"] = rec
    print("attention losses", rec["step_losses"])
    with open(os.path.join(mf.OUT, "attention.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
