#!/usr/bin/env python3
"""Regenerates kcc's sequence fixtures (tests/fixtures/keras/sequence).

Keras itself builds two text classifiers on integer token ids, saves each
as .keras (initial weights) and trains 5 Adam(1e-3) train_on_batch steps on
one seeded batch of 32 sequences:

  seq_bag   ids [32, 48] -> Embedding(50, 8) -> Dense(8, relu) on the rank-3
            embeddings -> GlobalAveragePooling1D -> Dense(1, sigmoid);
            binary_crossentropy on the sigmoid output.
  seq_conv  ids [32, 80] -> Embedding(50, 8) -> ZeroPadding1D((1, 2))
            -> Conv1D(12, 5, causal, dilation 2, relu) -> MaxPooling1D(2)
            -> Conv1D(8, 3, same, strides 2, relu) -> UpSampling1D(2)
            -> AveragePooling1D(3, strides 2) -> GlobalMaxPooling1D
            -> Dense(4); sparse_categorical_crossentropy from logits.
  seq_transformer  ids [32, 40] -> Embedding(50, 16) -> x;
            h = LayerNormalization(x + MultiHeadAttention(2 heads, key_dim 8)
            (x, x, use_causal_mask=True)); h = LayerNormalization(h +
            Dense(16)(Dense(32, relu)(h))) -> GlobalAveragePooling1D
            -> Dense(1, sigmoid); binary_crossentropy.
  seq_cross ids [32, 40] -> Embedding(50, 16) -> x; cross-attention of
            Conv1D(12, 3, strides 2)(x) over value x and key=Dense(10)(x)
            (3 heads, key_dim 4, no biases, output_shape 6; Keras 3.15 on JAX
            fails on value_dim != key_dim itself)
            -> GlobalAveragePooling1D -> Dense(1, sigmoid);
            binary_crossentropy.
  seq_categorical  ids [32, 6] -> CategoryEncoding(50) multi_hot, count,
            and one_hot of every id (Reshape((6, 1)) first: [6, 50]);
            Discretization([5, 12.5, 30]) buckets (int32) -> Embedding(4,
            3); Discretization([10, 25], output_mode="count") -> Concatenate
            -> Dense(8, relu) -> Dense(1, sigmoid); binary_crossentropy.
  seq_einsum (in einsum/, its record einsum.json)
            ids [32, 40] -> Embedding(50, 16) -> EinsumDense("abc,cd->abd",
            output_shape (None, 12), bias_axes "d", relu)
            -> EinsumDense("abc,cde->abde", (None, 3, 4), bias_axes "e": a
            bias [4] broadcast over the heads) -> EinsumDense("abcd,cde->abe",
            (None, 8), bias_axes "e", tanh) -> GlobalAveragePooling1D
            -> Dense(1, sigmoid); binary_crossentropy.

The ids are drawn from [0, 50) (seed 17); the labels say whether token 7
occurs (seq_bag) and the count of token 3 modulo 4 (seq_conv), whether token 7 follows a
token 3 anywhere later (seq_transformer), whether token 7 occurs twice or
more (seq_einsum), whether two or more ids are below 10 (seq_categorical). NAME.npz
holds x (int32) and y; sequence.json per model: the loss of each step
(before its update), Keras's predict on the first 8 sequences before and
after the steps.

It also writes seq_task.keras, the model `kcc train` learns the task of
scripts/make-sequence-task.py with (tests/e2e: the sequence_task test):
ids [40] -> Embedding(20, 16) -> Conv1D(16, 2, relu) -> GlobalMaxPooling1D
-> Dense(1, sigmoid), compiled with Adam(1e-2), binary_crossentropy and
binary_accuracy.

    KERAS_BACKEND=jax JAX_PLATFORMS=cpu /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_sequence_fixtures.py [CASE ...]

With CASE names (e.g. seq_einsum) only those are written and their records
added to the existing sequence.json or einsum.json (seq_task.keras and the
other archives are left as they are).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, fresh_session  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import layers as L  # noqa: E402

SEQ_OUT = os.path.join(OUT, "sequence")
# Cases added after sequence.json: a rerun of this script today does not
# reproduce that file's seq_transformer record bit for bit (step 4's loss
# differs by 3e-8), so new cases get a record file of their own.
EIN_OUT = os.path.join(OUT, "einsum")
VOCAB, BATCH, PREDICT = 50, 32, 8


def seq_bag():
    ids = keras.Input((48,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.Dense(8, activation="relu")(h)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="seq_bag")


def seq_conv():
    ids = keras.Input((80,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.ZeroPadding1D((1, 2))(h)
    h = L.Conv1D(12, 5, padding="causal", dilation_rate=2,
                 activation="relu")(h)
    h = L.MaxPooling1D(2)(h)
    h = L.Conv1D(8, 3, strides=2, padding="same", activation="relu")(h)
    h = L.UpSampling1D(2)(h)
    h = L.AveragePooling1D(3, strides=2)(h)
    h = L.GlobalMaxPooling1D()(h)
    return keras.Model(ids, L.Dense(4)(h), name="seq_conv")


def seq_transformer():
    ids = keras.Input((40,), dtype="int32")
    x = L.Embedding(VOCAB, 16)(ids)
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x,
                                                     use_causal_mask=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, a]))
    f = L.Dense(32, activation="relu")(h)
    f = L.Dense(16)(f)
    h = L.LayerNormalization()(L.Add()([h, f]))
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="seq_transformer")


def seq_cross():
    ids = keras.Input((40,), dtype="int32")
    x = L.Embedding(VOCAB, 16)(ids)
    q = L.Conv1D(12, 3, strides=2)(x)
    k = L.Dense(10)(x)
    a = L.MultiHeadAttention(num_heads=3, key_dim=4,
                             use_bias=False, output_shape=6)(q, x, key=k)
    h = L.GlobalAveragePooling1D()(a)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="seq_cross")


def seq_categorical():
    ids = keras.Input((6,), dtype="int32")
    hot = L.CategoryEncoding(VOCAB, output_mode="multi_hot")(ids)
    counts = L.CategoryEncoding(VOCAB, output_mode="count")(ids)
    first = L.CategoryEncoding(VOCAB, output_mode="one_hot")(
        L.Reshape((6, 1))(ids))                            # [6, 50]
    buckets = L.Discretization(bin_boundaries=[5.0, 12.5, 30.0])(ids)
    embedded = L.Flatten()(L.Embedding(4, 3)(buckets))
    coarse = L.Discretization(bin_boundaries=[10.0, 25.0],
                              output_mode="count")(ids)
    h = L.Concatenate()([hot, counts, L.Flatten()(first), embedded, coarse])
    h = L.Dense(8, activation="relu")(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="seq_categorical")


def seq_einsum():
    ids = keras.Input((40,), dtype="int32")
    x = L.EinsumDense("abc,cd->abd", output_shape=(None, 12), bias_axes="d",
                      activation="relu")(L.Embedding(VOCAB, 16)(ids))
    h = L.EinsumDense("abc,cde->abde", output_shape=(None, 3, 4),
                      bias_axes="e")(x)
    h = L.EinsumDense("abcd,cde->abe", output_shape=(None, 8),
                      bias_axes="e", activation="tanh")(h)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="seq_einsum")


def follows(x, first, then):
    seen = np.cumsum(x == first, axis=1) > 0
    later = np.concatenate([np.zeros_like(seen[:, :1]), seen[:, :-1]], axis=1)
    return ((x == then) & later).any(axis=1).astype(np.float32)[:, None]


def seq_task():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(20, 16)(ids)
    h = L.Conv1D(16, 2, activation="relu")(h)
    h = L.GlobalMaxPooling1D()(h)
    model = keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                        name="seq_task")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss="binary_crossentropy", metrics=["binary_accuracy"])
    return model


def data(steps, label, vocab=VOCAB):
    """A seeded batch of ids in [0, vocab) and its labels."""
    rng = np.random.default_rng(17)
    x = rng.integers(0, vocab, size=(BATCH, steps)).astype(np.int32)
    return x, label(x)


def record(model, loss, loss_name, from_logits, x, y):
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=loss)
    rec = {"optimizer": {"name": "adam", "learning_rate": 1e-3,
                         "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7},
           "loss": loss_name, "from_logits": from_logits,
           "initial_predict": np.asarray(model.predict(
               x[:PREDICT], verbose=0)).astype(np.float64).tolist()}
    losses, direct = [], []
    for _ in range(STEPS):
        # Stateless: an eager training call would also move
        # BatchNormalization's statistics, a second time per step.
        out, _ = model.stateless_call(
            [v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables], x,
            training=True)
        direct.append(float(loss(y, out)))
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    if not np.allclose(losses, direct, rtol=1e-5, atol=1e-6):
        sys.exit(f"train_on_batch losses {losses} != direct {direct}")
    if not np.all(np.isfinite(losses)):
        sys.exit(f"non-finite losses {losses}")
    rec["step_losses"] = losses
    rec["final_predict"] = np.asarray(model.predict(
        x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    return rec


def write_suite(out, record_name, cases, only):
    """Writes NAME.keras and NAME.npz of `cases` into `out` and their
    records into out/record_name; with `only`, just those cases, their
    records added to (or replaced in) the existing file."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, record_name)
    result = {"keras_version": keras.__version__,
              "backend": keras.backend.backend(), "steps": STEPS,
              "predict_examples": PREDICT}
    if only:
        cases = [case for case in cases if case[0] in only]
        if not cases:
            return
        if os.path.exists(path):
            with open(path) as f:
                result = json.load(f)
    for name, build, steps, label, loss, loss_name, logits in cases:
        fresh_session()
        model = build()
        model.save(os.path.join(out, name + ".keras"))
        x, y = data(steps, label)
        np.savez(os.path.join(out, name + ".npz"), x=x, y=y)
        result[name] = record(model, loss, loss_name, logits, x, y)
        print(name, "losses", result[name]["step_losses"])
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


def main():
    bce = (keras.losses.BinaryCrossentropy(), "binary_crossentropy", False)
    cases = (
        ("seq_bag", seq_bag, 48,
         lambda x: (x == 7).any(axis=1).astype(np.float32)[:, None]) + bce,
        ("seq_conv", seq_conv, 80,
         lambda x: ((x == 3).sum(axis=1) % 4).astype(np.int32),
         keras.losses.SparseCategoricalCrossentropy(from_logits=True),
         "sparse_categorical_crossentropy", True),
        ("seq_transformer", seq_transformer, 40,
         lambda x: follows(x, 3, 7)) + bce,
        ("seq_cross", seq_cross, 40, lambda x: follows(x, 7, 3)) + bce,
        ("seq_categorical", seq_categorical, 6,
         lambda x: ((x < 10).sum(axis=1) >= 2).astype(np.float32)[:, None])
        + bce,
    )
    einsum_cases = (
        ("seq_einsum", seq_einsum, 40,
         lambda x: ((x == 7).sum(axis=1) >= 2).astype(np.float32)[:, None])
        + bce,
    )
    only = sys.argv[1:]
    unknown = set(only) - {case[0] for case in cases + einsum_cases}
    if unknown:
        sys.exit(f"unknown cases {sorted(unknown)}")
    write_suite(SEQ_OUT, "sequence.json", cases, only)
    write_suite(EIN_OUT, "einsum.json", einsum_cases, only)
    if not only:
        fresh_session()
        seq_task().save(os.path.join(SEQ_OUT, "seq_task.keras"))


if __name__ == "__main__":
    main()
