#!/usr/bin/env python3
"""Writes the Keras fixtures of the Attention, AdditiveAttention and
GroupQueryAttention layers (tests/fixtures/keras):

  attention.keras  a sequence model through Attention (dot scores plain
                   and scaled, causal; concat scores with a key) and
                   AdditiveAttention (scaled, causal; unscaled);
  grouped_attention.keras
                   GroupQueryAttention (2 query heads per key/value head,
                   causal; 6 query heads on one key/value head with a gate,
                   a sliding window, no bias, another key and value) and
                   MultiHeadAttention with a gate and a causal sliding
                   window;

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


def grouped_attention():
    x = keras.Input((28, 28, 1))
    h = L.Reshape((28, 28))(x)
    h = L.Conv1D(12, 3, strides=2, activation="tanh")(h)      # 13 x 12
    v = L.Dense(12)(h)
    k = L.Dense(12)(h)
    outs = [
        L.GroupQueryAttention(head_dim=4, num_query_heads=4,
                              num_key_value_heads=2)(
            h, h, use_causal_mask=True),
        L.GroupQueryAttention(head_dim=3, num_query_heads=6,
                              num_key_value_heads=1, use_gate=True,
                              sliding_window=4, use_bias=False)(h, v, k),
        L.MultiHeadAttention(num_heads=2, key_dim=4, use_gate=True,
                             sliding_window=3)(h, h, use_causal_mask=True),
    ]
    h = L.Concatenate()(outs)                                   # 13 x 36
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="grouped_attention")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build in (("attention", attention),
                        ("grouped_attention", grouped_attention)):
        result[name] = mv.fixture_record(name, build, x, y)
    with open(os.path.join(mf.OUT, "attention.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
