#!/usr/bin/env python3
"""Regenerates kcc's mask fixtures (tests/fixtures/keras/masks).

Keras itself builds models whose sequences are padded and masked, saves
each as .keras (initial weights) and trains 5 Adam(1e-3) train_on_batch
steps on one seeded batch of 32 sequences:

  mask_lstm    ids [32, 16] -> Embedding(30, 8, mask_zero=True) -> LSTM(12)
               -> Dense(1, sigmoid); binary_crossentropy.
  mask_gru     ids [32, 16] -> Embedding(30, 8, mask_zero=True)
               -> GRU(10, return_sequences=True) -> GRU(6, go_backwards=True)
               -> Dense(3); sparse_categorical_crossentropy from logits.
  mask_bidir   ids [32, 14] -> Embedding(30, 8, mask_zero=True)
               -> Bidirectional(LSTM(6, return_sequences=True)) (concat)
               -> Bidirectional(GRU(5), merge_mode="sum") -> Dense(1,
               sigmoid); binary_crossentropy.
  mask_simple  floats [32, 12, 3] whose padded steps are all 0.5
               -> Masking(0.5) -> SimpleRNN(8, return_sequences=True,
               go_backwards=True) -> SimpleRNN(6) -> Dense(1, sigmoid);
               binary_crossentropy.
  mask_gap     ids [32, 16] -> Embedding(30, 8, mask_zero=True)
               -> Dense(8, relu) (passes the mask on) -> Dropout(0.0)
               -> GlobalAveragePooling1D (the mean of the valid steps)
               -> Dense(1, sigmoid); binary_crossentropy.
  mask_transformer  ids [32, 12] -> Embedding(30, 16, mask_zero=True)
               -> a transformer block (keras.io's text classification):
               MultiHeadAttention(2 heads, key_dim 8)(x, x) (the query and
               value masks become its attention mask), Add, LayerNormalization,
               Dense(16, relu), Dense(16), Add, LayerNormalization
               -> GlobalAveragePooling1D (masked) -> Dense(1, sigmoid);
               binary_crossentropy.
  mask_tagger  ids [32, 12] -> Embedding(30, 8, mask_zero=True)
               -> LSTM(8, return_sequences=True) -> Dense(4) per step;
               sparse_categorical_crossentropy from logits on [32, 12]
               labels, the padded steps excluded from the loss (Keras's
               output mask: sum of the valid losses / their count). Its
               record also holds "step_metrics": the same 5 steps from the
               same weights, the sparse_categorical_accuracy of each step's
               predictions (before its update) weighted by the output's mask
               as Keras's MeanMetricWrapper weighs a masked prediction (the
               fraction of the real steps right; Keras's TF and torch train
               steps and every evaluate log this), and "logged", what
               train_on_batch logs on JAX, whose train step hands the
               metrics predictions that lost their mask.
  Both taggers' records hold "evaluate": Keras's evaluate() from the
               initial weights in batches of 12 (loss and masked accuracy).
  mask_timedistributed  ids [32, 12] -> Embedding(30, 8, mask_zero=True)
               -> TimeDistributed(Dense(8, tanh)) (passes the mask on)
               -> LSTM(8, return_sequences=True) -> TimeDistributed(Dense(4));
               the tagger's labels and loss.
  mask_concat  ids [32, 12] -> Embedding(30, 8, mask_zero=True) -> LSTM(6)
               and Dense(6) per step joined by Concatenate (the masks'
               OR), then joined along the steps with a Conv1D's unmasked
               output (the mask, then ones) -> GRU(5) -> Dense(1, sigmoid).
  mask_batchnorm  ids [32, 12] -> Embedding(30, 8, mask_zero=True) -> Dense(8,
               use_bias=False: a bias before BatchNormalization has a zero
               gradient, whose float noise Adam turns into whole steps, and
               predictions 4e-5 apart)
               -> BatchNormalization(momentum=0.8) (moments over the real
               steps) -> LSTM(6) -> Dense(1, sigmoid).
  mask_attention  ids [32, 12] -> Embedding(30, 8, mask_zero=True)
               -> Attention(use_scale=True) of the embeddings on themselves
               (padded values' scores -1e9, padded queries zero, the
               query's mask passed on) -> GlobalAveragePooling1D (masked)
               -> Dense(1, sigmoid).
  mask_additive  the same through LSTM(8, return_sequences=True) and
               AdditiveAttention(use_causal_mask=True): the value's mask and
               the causal mask together.

Each sequence has a length in [3, T]; even rows are padded at the end,
odd rows at the start (id 0, or the mask value 0.5). Labels depend on the
valid tokens only. NAME.npz holds x and y; masks.json per model: the loss
of each step (before its update), Keras's predict on the first 8
sequences before and after the steps.

    KERAS_BACKEND=jax JAX_PLATFORMS=cpu /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_mask_fixtures.py [CASE ...]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, fresh_session  # noqa: E402
from make_sequence_fixtures import record  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import layers as L  # noqa: E402

MASK_OUT = os.path.join(OUT, "masks")
BATCH, VOCAB, PREDICT = 32, 30, 8
PAD_VALUE = 0.5


def mask_lstm():
    ids = keras.Input((16,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.LSTM(12)(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_lstm")


def mask_gru():
    ids = keras.Input((16,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.GRU(10, return_sequences=True)(h)
    h = L.GRU(6, go_backwards=True)(h)
    return keras.Model(ids, L.Dense(3)(h), name="mask_gru")


def mask_bidir():
    ids = keras.Input((14,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.Bidirectional(L.LSTM(6, return_sequences=True))(h)
    h = L.Bidirectional(L.GRU(5), merge_mode="sum")(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_bidir")


def mask_simple():
    x = keras.Input((12, 3))
    h = L.Masking(PAD_VALUE)(x)
    h = L.SimpleRNN(8, return_sequences=True, go_backwards=True)(h)
    h = L.SimpleRNN(6)(h)
    return keras.Model(x, L.Dense(1, activation="sigmoid")(h),
                       name="mask_simple")


def mask_gap():
    ids = keras.Input((16,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.Dense(8, activation="relu")(h)
    h = L.Dropout(0.0)(h)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_gap")


def mask_transformer():
    ids = keras.Input((12,), dtype="int32")
    x = L.Embedding(VOCAB, 16, mask_zero=True)(ids)
    attention = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    x = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, attention]))
    ffn = L.Dense(16)(L.Dense(16, activation="relu")(x))
    x = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, ffn]))
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(x),
                       name="mask_transformer")


def mask_tagger():
    ids = keras.Input((12,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.LSTM(8, return_sequences=True)(h)
    return keras.Model(ids, L.Dense(4)(h), name="mask_tagger")


def mask_timedistributed():
    ids = keras.Input((12,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.TimeDistributed(L.Dense(8, activation="tanh"))(h)
    h = L.LSTM(8, return_sequences=True)(h)
    return keras.Model(ids, L.TimeDistributed(L.Dense(4))(h),
                       name="mask_timedistributed")


def mask_concat():
    ids = keras.Input((12,), dtype="int32")
    x = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    features = L.Concatenate()([L.LSTM(6, return_sequences=True)(x),
                                L.Dense(6, activation="tanh")(x)])
    unmasked = L.Conv1D(12, 1)(x)
    h = L.Concatenate(axis=1)([features, unmasked])
    h = L.GRU(5)(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_concat")


def mask_batchnorm():
    ids = keras.Input((12,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.BatchNormalization(momentum=0.8)(L.Dense(8, use_bias=False)(h))
    h = L.LSTM(6)(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_batchnorm")


def padded_ids(steps, seed):
    """Ids in [1, VOCAB) with a length in [3, steps] per row; even rows are
    padded (0) at the end, odd rows at the start. Returns (ids, valid)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(1, VOCAB, size=(BATCH, steps)).astype(np.int32)
    lengths = rng.integers(3, steps + 1, size=BATCH)
    valid = np.zeros((BATCH, steps), bool)
    for i, n in enumerate(lengths):
        if i % 2 == 0:
            valid[i, :n] = True
        else:
            valid[i, steps - n:] = True
    return np.where(valid, x, 0).astype(np.int32), valid


def ids_case(steps, label):
    def make():
        x, valid = padded_ids(steps, 17)
        return x, label(x, valid)
    return make


def floats_case():
    """Float features of 3, padded steps set to PAD_VALUE; label: whether
    the mean of feature 0 over the valid steps is positive."""
    ids, valid = padded_ids(12, 23)
    rng = np.random.default_rng(29)
    x = rng.normal(size=(BATCH, 12, 3)).astype(np.float32)
    x = np.where(valid[:, :, None], x, PAD_VALUE).astype(np.float32)
    mean = (np.where(valid, x[:, :, 0], 0).sum(axis=1) / valid.sum(axis=1))
    return x, (mean > 0).astype(np.float32)[:, None]


def first_valid(x, valid):
    """The first real id of each row."""
    return x[np.arange(len(x)), valid.argmax(axis=1)]


def last_valid(x, valid):
    """The last real id of each row."""
    n = x.shape[1]
    return x[np.arange(len(x)), n - 1 - valid[:, ::-1].argmax(axis=1)]


def column(flags):
    return flags.astype(np.float32)[:, None]


def tagger_labels(x, valid):
    """Per step: the id modulo 4 where valid (padded steps: 0, excluded
    from the loss by the mask)."""
    return np.where(valid, x % 4, 0).astype(np.int32)


def first_of(x, valid, a, b):
    x = np.where(valid, x, -1)
    n = x.shape[1]
    pa = np.where((x == a).any(axis=1), (x == a).argmax(axis=1), n)
    pb = np.where((x == b).any(axis=1), (x == b).argmax(axis=1), n)
    return np.where(pa == pb, 0, np.where(pa < pb, 1, 2)).astype(np.int32)


METRICS = ("sparse_categorical_accuracy",)


def step_metrics(archive, x, y):
    """Per step of 5 Adam steps (as record's) on the model in `archive`:
    the masked accuracy of the step's predictions and what train_on_batch
    logs."""
    model = keras.saving.load_model(archive)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(METRICS))
    mask = model.get_layer("embedding").compute_mask(x)
    steps = []
    for _ in range(STEPS):
        accuracy = keras.metrics.SparseCategoricalAccuracy()
        accuracy.update_state(y, model(x, training=True), sample_weight=mask)
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        steps.append({METRICS[0]: float(accuracy.result()),
                      "logged": float(logs[METRICS[0]])})
    return steps


EVALUATE_BATCH = 12


def evaluate_record(archive, x, y):
    """Keras's evaluate() of the model in `archive` (its initial weights) in
    batches of EVALUATE_BATCH, whose numbers of real steps differ: the
    masked loss of each batch averaged by the batches' sizes, and the
    accuracy over every real step."""
    model = keras.saving.load_model(archive)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(METRICS))
    logs = model.evaluate(x, y, batch_size=EVALUATE_BATCH, verbose=0,
                          return_dict=True)
    return {"batch_size": EVALUATE_BATCH,
            **{k: float(v) for k, v in logs.items()}}


def mask_attention():
    ids = keras.Input((12,), dtype="int32")
    x = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.Attention(use_scale=True)([x, x])
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_attention")


def mask_additive():
    ids = keras.Input((12,), dtype="int32")
    x = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    h = L.LSTM(8, return_sequences=True)(x)
    h = L.AdditiveAttention()([h, h], use_causal_mask=True)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="mask_additive")


def main():
    os.makedirs(MASK_OUT, exist_ok=True)
    bce = (keras.losses.BinaryCrossentropy(), "binary_crossentropy", False)
    sce = (keras.losses.SparseCategoricalCrossentropy(from_logits=True),
           "sparse_categorical_crossentropy", True)
    cases = (
        ("mask_lstm", mask_lstm,
         ids_case(16, lambda x, v: column(first_valid(x, v) < 15))) + bce,
        ("mask_gru", mask_gru,
         ids_case(16, lambda x, v: first_of(x, v, 3, 7))) + sce,
        ("mask_bidir", mask_bidir,
         ids_case(14, lambda x, v: column(last_valid(x, v) < 15))) + bce,
        ("mask_simple", mask_simple, floats_case) + bce,
        ("mask_gap", mask_gap,
         ids_case(16, lambda x, v: column(
             np.where(v, x, 0).sum(axis=1) < 15 * v.sum(axis=1)))) + bce,
        ("mask_transformer", mask_transformer,
         ids_case(12, lambda x, v: column(
             (np.where(v, x, 0) == 5).any(axis=1) |
             (np.where(v, x, 0) == 9).any(axis=1)))) + bce,
        ("mask_tagger", mask_tagger, ids_case(12, tagger_labels)) + sce,
        ("mask_timedistributed", mask_timedistributed,
         ids_case(12, tagger_labels)) + sce,
        ("mask_concat", mask_concat,
         ids_case(12, lambda x, v: column(first_valid(x, v) < 15))) + bce,
        ("mask_batchnorm", mask_batchnorm,
         ids_case(12, lambda x, v: column(first_valid(x, v) < 15))) + bce,
        ("mask_attention", mask_attention,
         ids_case(12, lambda x, v: column(
             (np.where(v, x, 0) == 5).any(axis=1) |
             (np.where(v, x, 0) == 9).any(axis=1)))) + bce,
        ("mask_additive", mask_additive,
         ids_case(12, lambda x, v: column(last_valid(x, v) < 15))) + bce,
    )
    only = sys.argv[1:]
    unknown = set(only) - {case[0] for case in cases}
    if unknown:
        sys.exit(f"unknown cases {sorted(unknown)}")
    path = os.path.join(MASK_OUT, "masks.json")
    result = {"keras_version": keras.__version__,
              "backend": keras.backend.backend(), "steps": STEPS,
              "predict_examples": PREDICT}
    if only:
        with open(path) as f:
            result = json.load(f)
        cases = [case for case in cases if case[0] in only]
    for name, build, make_data, loss, loss_name, logits in cases:
        fresh_session()
        model = build()
        model.save(os.path.join(MASK_OUT, name + ".keras"))
        x, y = make_data()
        np.savez(os.path.join(MASK_OUT, name + ".npz"), x=x, y=y)
        result[name] = record(model, loss, loss_name, logits, x, y)
        if name == "mask_tagger":
            result[name]["step_metrics"] = step_metrics(
                os.path.join(MASK_OUT, name + ".keras"), x, y)
            print(name, "metrics", result[name]["step_metrics"])
        if name in ("mask_tagger", "mask_timedistributed"):
            result[name]["evaluate"] = evaluate_record(
                os.path.join(MASK_OUT, name + ".keras"), x, y)
            print(name, "evaluate", result[name]["evaluate"])
        print(name, "labels", np.bincount(y.astype(np.int64).ravel()).tolist(),
              "losses", result[name]["step_losses"])
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
