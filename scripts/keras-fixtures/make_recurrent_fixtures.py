#!/usr/bin/env python3
"""Regenerates kcc's recurrent fixtures (tests/fixtures/keras/recurrent).

Keras itself builds six recurrent models on integer token ids, saves each
as .keras (initial weights) and trains 5 Adam(1e-3) train_on_batch steps on
one seeded batch of 32 sequences:

  rnn_lstm    ids [32, 40] -> Embedding(30, 8) -> LSTM(12)
              -> Dense(1, sigmoid); binary_crossentropy.
  rnn_gru     ids [32, 60] -> Embedding(30, 8) -> GRU(10) (reset_after=True,
              the default) -> Dense(3); sparse_categorical_crossentropy from
              logits.
  rnn_gru_v1  ids [32, 40] -> Embedding(30, 8) -> GRU(8, reset_after=False,
              return_sequences=True) -> GlobalAveragePooling1D
              -> Dense(1, sigmoid); binary_crossentropy.
  rnn_simple  ids [32, 50] -> Embedding(30, 6) -> SimpleRNN(8,
              return_sequences=True, go_backwards=True) -> SimpleRNN(6, relu)
              -> Dense(1, sigmoid); binary_crossentropy.
  rnn_bilstm  ids [32, 100] -> Embedding(30, 8) -> Bidirectional(LSTM(6,
              return_sequences=True)) (merge_mode concat)
              -> Bidirectional(GRU(5), merge_mode="sum") -> Dense(1, sigmoid);
              binary_crossentropy.
  rnn_state   functional: ids [32, 40] -> Embedding(30, 8)
              -> LSTM(7, return_state=True) giving (out, h, c)
              -> Concatenate()([out, c]) -> Dense(1, sigmoid);
              binary_crossentropy.
  rnn_gru_state  ids [32, 40] -> Embedding(30, 8) -> GRU(9,
              return_sequences=True, return_state=True) giving (seq, h)
              -> Concatenate()([GlobalMaxPooling1D(seq), h])
              -> Dense(1, sigmoid); binary_crossentropy.
  rnn_simple_state  ids [32, 50] -> Embedding(30, 6) -> SimpleRNN(8,
              return_state=True, go_backwards=True) giving (out, h)
              -> Concatenate()([Dense(4, relu)(out), h])
              -> Dense(1, sigmoid); binary_crossentropy.
  rnn_bimul   ids [32, 60] -> Embedding(30, 8, weights set in [-1, 1))
              -> Bidirectional(GRU(6, return_sequences=True),
              merge_mode="mul") -> GlobalMaxPooling1D -> Dense(3);
              sparse_categorical_crossentropy from logits.
  rnn_biave   ids [32, 50] -> Embedding(30, 8) -> Bidirectional(SimpleRNN(6,
              return_sequences=True), merge_mode="ave")
              -> Bidirectional(LSTM(5), merge_mode="ave") -> Dense(1,
              sigmoid); binary_crossentropy.
  rnn_cell    ids [32, 40] -> Embedding(30, 8) -> RNN(LSTMCell(10),
              return_sequences=True) -> RNN([GRUCell(6), SimpleRNNCell(5)],
              go_backwards=True) (a StackedRNNCells) -> Dense(1, sigmoid);
              binary_crossentropy.
  rnn_cell_state  functional: ids [32, 50], every third sequence ending in
              5 to 11 padding zeros -> Embedding(30, 8, mask_zero=True)
              -> RNN([LSTMCell(6), GRUCell(5, reset_after=False)],
              return_sequences=True, return_state=True, go_backwards=True)
              giving (seq, [h1, c1], h2), and RNN(SimpleRNNCell(4),
              zero_output_for_mask=True) giving its last output (zeros
              where the last step read is padding)
              -> Concatenate()([GlobalAveragePooling1D(seq), c1, h2, last])
              -> Dense(1, sigmoid); binary_crossentropy.

The ids are drawn from [0, 30) (seed 17); the labels are order-dependent:
whether token 3 occurs somewhere after a token 7 (rnn_lstm), which of tokens
3 (class 1) and 7 (class 2) occurs first, 0 if neither (rnn_gru), whether 7
follows a 3 (rnn_gru_v1), whether the first token is < 15 (rnn_simple: the
last one its go_backwards layer reads), whether token 3 occurs more often in
the first half than in the second (rnn_bilstm), whether 9 follows a 5
(rnn_state), whether 5 follows a 9 (rnn_gru_state), whether the first
token is < 15 (rnn_simple_state), which of 7 (1) and 3 (2) occurs first
(rnn_bimul), whether 7 occurs more often in the first half (rnn_biave),
whether 3 follows a 7 (rnn_cell), whether 9 follows a 3 (rnn_cell_state).
NAME.npz holds x (int32) and y; recurrent.json per model: the
loss of each step (before its update), Keras's predict on the first 8
sequences before and after the steps.

Weights in the archive's model.weights.h5 (Keras 3.15.1; the script prints
them). Every layer is a group layers/<layer name>; a recurrent layer's
weights belong to its cell, layers/<name>/cell/vars/{0,1,2} = kernel [F, G*H],
recurrent_kernel [H, G*H], bias (layers/<name>/vars is an empty group,
attribute name=<layer name>; cell/vars has attribute name=lstm_cell,
gru_cell or simple_rnn_cell). F is the input features, H the units; gates
are concatenated along the last axis:

  LSTM       G=4, gates i, f, c (candidate), o; bias [4H] (unit_forget_bias:
             the initial bias is 1 on f, 0 elsewhere).
               layers/lstm/cell/vars/0 [8, 48]  1 [12, 48]  2 [48]  (rnn_lstm)
  GRU        G=3, gates z (update), r (reset), h (candidate);
             h_t = z * h_{t-1} + (1 - z) * candidate;
             reset_after=True:  bias [2, 3H], row 0 the input bias, row 1 the
             recurrent bias (r applies to U_h h + b_rh);
               layers/gru/cell/vars/0 [8, 30]  1 [10, 30]  2 [2, 30]  (rnn_gru)
             reset_after=False: bias [3H] (r applies to h before U_h);
               layers/gru/cell/vars/0 [8, 24]  1 [8, 24]  2 [24]  (rnn_gru_v1)
  SimpleRNN  G=1: kernel [F, H], recurrent_kernel [H, H], bias [H];
               layers/simple_rnn/cell/vars/0 [6, 8]  1 [8, 8]  2 [8]
               layers/simple_rnn_1/cell/vars/0 [8, 6]  1 [6, 6]  2 [6]
             go_backwards=True with return_sequences=True returns the
             outputs in processing order (output t is the state after reading
             x[T-1] .. x[T-1-t]), not flipped back.
  Bidirectional  layers/<name>/forward_layer/cell/vars/{0,1,2} and
             layers/<name>/backward_layer/cell/vars/{0,1,2}, same shapes as the
             wrapped layer (forward_layer/vars and backward_layer/vars are
             empty groups named forward_lstm / backward_lstm):
               layers/bidirectional/{forward,backward}_layer/cell/vars/
                   0 [8, 24]  1 [6, 24]  2 [24]          (LSTM(6))
               layers/bidirectional_1/{forward,backward}_layer/cell/vars/
                   0 [12, 15]  1 [5, 15]  2 [2, 15]      (GRU(5))
             With return_sequences the backward outputs are flipped back to
             time order before the merge; merge "concat" is [forward,
             backward] on the last axis, "sum" forward + backward, "mul" forward *
             backward, "ave" (forward + backward) / 2.
  Embedding  layers/embedding/vars/0 [30, D];  Dense layers/dense/vars/0
             [F, U], 1 [U].

Bidirectional in config.json: {"class_name": "Bidirectional", "config":
{"name", "merge_mode", "layer": <the full serialized forward layer, e.g.
{"class_name": "LSTM", "config": {"name": "forward_lstm", "units": 6,
"return_sequences": true, "go_backwards": false, ...}, "build_config": ...}>,
"backward_layer": <the same with "name": "backward_lstm" and "go_backwards":
true>}, "build_config", "inbound_nodes"}. The LSTM of rnn_state has one
inbound node and three outputs; Concatenate's inbound args are
keras_history ["lstm", 0, 0] (out) and ["lstm", 0, 2] (c).

    KERAS_BACKEND=jax JAX_PLATFORMS=cpu /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_recurrent_fixtures.py [CASE ...]

With CASE names (e.g. rnn_bimul rnn_biave) only those are written and their
records added to the existing recurrent.json (the other archives keep their
bytes: a rerun of a .keras differs in metadata's date and config's
shared_object_id, not in weights).

(/tmp/kerasvenv: python3 -m venv /tmp/kerasvenv && /tmp/kerasvenv/bin/pip
install keras==3.15.1 "jax[cpu]" h5py numpy)
"""

import io
import json
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, fresh_session  # noqa: E402
from make_sequence_fixtures import data as sequence_data  # noqa: E402
from make_sequence_fixtures import record  # noqa: E402

import h5py  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import layers as L  # noqa: E402

REC_OUT = os.path.join(OUT, "recurrent")
# Batch (32) and predict rows (8) are make_sequence_fixtures.py's.
VOCAB, PREDICT = 30, 8


def rnn_lstm():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.LSTM(12)(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_lstm")


def rnn_gru():
    ids = keras.Input((60,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.GRU(10)(h)
    return keras.Model(ids, L.Dense(3)(h), name="rnn_gru")


def rnn_gru_v1():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.GRU(8, reset_after=False, return_sequences=True)(h)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_gru_v1")


def rnn_simple():
    ids = keras.Input((50,), dtype="int32")
    h = L.Embedding(VOCAB, 6)(ids)
    h = L.SimpleRNN(8, return_sequences=True, go_backwards=True)(h)
    h = L.SimpleRNN(6, activation="relu")(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_simple")


def rnn_bilstm():
    ids = keras.Input((100,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.Bidirectional(L.LSTM(6, return_sequences=True))(h)
    h = L.Bidirectional(L.GRU(5), merge_mode="sum")(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_bilstm")


def rnn_state():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    out, _, c = L.LSTM(7, return_state=True)(h)
    h = L.Concatenate()([out, c])
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_state")


def rnn_gru_state():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    seq, state = L.GRU(9, return_sequences=True, return_state=True)(h)
    h = L.Concatenate()([L.GlobalMaxPooling1D()(seq), state])
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_gru_state")


def rnn_simple_state():
    ids = keras.Input((50,), dtype="int32")
    h = L.Embedding(VOCAB, 6)(ids)
    out, state = L.SimpleRNN(8, return_state=True, go_backwards=True)(h)
    h = L.Concatenate()([L.Dense(4, activation="relu")(out), state])
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_simple_state")


def rnn_bimul():
    ids = keras.Input((60,), dtype="int32")
    embedding = L.Embedding(VOCAB, 8)
    h = L.Bidirectional(L.GRU(6, return_sequences=True),
                        merge_mode="mul")(embedding(ids))
    h = L.GlobalMaxPooling1D()(h)
    model = keras.Model(ids, L.Dense(3)(h), name="rnn_bimul")
    # Embeddings in [-1, 1), not Keras's +-0.05: GRU states near 0.3, so the
    # product of the two directions is far from 0 in predict. (Set, not an
    # embeddings_initializer: kcc refuses a RandomUniform of another range.)
    embedding.set_weights([np.random.default_rng(5).uniform(
        -1.0, 1.0, (VOCAB, 8)).astype(np.float32)])
    return model


def rnn_biave():
    ids = keras.Input((50,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.Bidirectional(L.SimpleRNN(6, return_sequences=True),
                        merge_mode="ave")(h)
    h = L.Bidirectional(L.LSTM(5), merge_mode="ave")(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_biave")


def rnn_cell():
    ids = keras.Input((40,), dtype="int32")
    h = L.Embedding(VOCAB, 8)(ids)
    h = L.RNN(L.LSTMCell(10), return_sequences=True)(h)
    h = L.RNN([L.GRUCell(6), L.SimpleRNNCell(5)], go_backwards=True)(h)
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_cell")


def rnn_cell_state():
    ids = keras.Input((50,), dtype="int32")
    h = L.Embedding(VOCAB, 8, mask_zero=True)(ids)
    seq, (_, c1), h2 = L.RNN(
        [L.LSTMCell(6), L.GRUCell(5, reset_after=False)],
        return_sequences=True, return_state=True, go_backwards=True)(h)
    last = L.RNN(L.SimpleRNNCell(4), zero_output_for_mask=True)(h)
    h = L.Concatenate()([L.GlobalAveragePooling1D()(seq), c1, h2, last])
    return keras.Model(ids, L.Dense(1, activation="sigmoid")(h),
                       name="rnn_cell_state")


def follows(x, first, then):
    """1 where token `then` occurs somewhere after a token `first`."""
    seen = np.cumsum(x == first, axis=1) > 0
    later = np.concatenate([np.zeros_like(seen[:, :1]), seen[:, :-1]], axis=1)
    return ((x == then) & later).any(axis=1).astype(np.float32)[:, None]


def first_of(x, a, b):
    """0 if neither token a nor b occurs, 1 if a occurs first, 2 if b."""
    n = x.shape[1]
    pa = np.where((x == a).any(axis=1), (x == a).argmax(axis=1), n)
    pb = np.where((x == b).any(axis=1), (x == b).argmax(axis=1), n)
    return np.where(pa == pb, 0, np.where(pa < pb, 1, 2)).astype(np.int32)


def halves(x, token):
    """1 where `token` occurs more often in the first half than the second."""
    h = x.shape[1] // 2
    return ((x[:, :h] == token).sum(axis=1) >
            (x[:, h:] == token).sum(axis=1)).astype(np.float32)[:, None]


# Cases whose sequences end in padding: every third sequence's last 5 to
# 11 ids are 0 (so a masked model's last step is masked there).
PADDED = {"rnn_cell_state"}


def data(steps, label, padded=False):
    x, y = sequence_data(steps, label, VOCAB)
    if padded:
        for i in range(0, len(x), 3):
            x[i, -(5 + i % 7):] = 0
        y = label(x)
    return x, y


def weight_layout(path):
    """The datasets of the archive's model.weights.h5: (path, shape)."""
    with zipfile.ZipFile(path) as z:
        raw = z.read("model.weights.h5")
    found = []
    with h5py.File(io.BytesIO(raw), "r") as f:
        f.visititems(lambda n, o: found.append((n, o.shape))
                     if isinstance(o, h5py.Dataset) else None)
    return found


def bidirectional_configs(path):
    """The config.json entries of the archive's Bidirectional layers."""
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
    return [layer for layer in config["config"]["layers"]
            if layer["class_name"] == "Bidirectional"]


def main():
    os.makedirs(REC_OUT, exist_ok=True)
    result = {"keras_version": keras.__version__,
              "backend": keras.backend.backend(), "steps": STEPS,
              "predict_examples": PREDICT}
    bce = (keras.losses.BinaryCrossentropy(), "binary_crossentropy", False)
    cases = (
        ("rnn_lstm", rnn_lstm, 40, lambda x: follows(x, 7, 3)) + bce,
        ("rnn_gru", rnn_gru, 60, lambda x: first_of(x, 3, 7),
         keras.losses.SparseCategoricalCrossentropy(from_logits=True),
         "sparse_categorical_crossentropy", True),
        ("rnn_gru_v1", rnn_gru_v1, 40, lambda x: follows(x, 3, 7)) + bce,
        ("rnn_simple", rnn_simple, 50,
         lambda x: (x[:, :1] < VOCAB // 2).astype(np.float32)) + bce,
        ("rnn_bilstm", rnn_bilstm, 100, lambda x: halves(x, 3)) + bce,
        ("rnn_state", rnn_state, 40, lambda x: follows(x, 5, 9)) + bce,
        ("rnn_gru_state", rnn_gru_state, 40,
         lambda x: follows(x, 9, 5)) + bce,
        ("rnn_simple_state", rnn_simple_state, 50,
         lambda x: (x[:, :1] < VOCAB // 2).astype(np.float32)) + bce,
        ("rnn_bimul", rnn_bimul, 60, lambda x: first_of(x, 7, 3),
         keras.losses.SparseCategoricalCrossentropy(from_logits=True),
         "sparse_categorical_crossentropy", True),
        ("rnn_biave", rnn_biave, 50, lambda x: halves(x, 7)) + bce,
        ("rnn_cell", rnn_cell, 40, lambda x: follows(x, 7, 3)) + bce,
        ("rnn_cell_state", rnn_cell_state, 50,
         lambda x: follows(x, 3, 9)) + bce,
    )
    only = sys.argv[1:]
    unknown = set(only) - {case[0] for case in cases}
    if unknown:
        sys.exit(f"unknown cases {sorted(unknown)}")
    if only:
        # Only these cases: their files, and their records added to (or
        # replaced in) recurrent.json, the other records left as they are.
        with open(os.path.join(REC_OUT, "recurrent.json")) as f:
            result = json.load(f)
        cases = [case for case in cases if case[0] in only]
    for name, build, steps, label, loss, loss_name, logits in cases:
        fresh_session()
        model = build()
        archive = os.path.join(REC_OUT, name + ".keras")
        model.save(archive)
        x, y = data(steps, label, name in PADDED)
        np.savez(os.path.join(REC_OUT, name + ".npz"), x=x, y=y)
        result[name] = record(model, loss, loss_name, logits, x, y)
        print(name, "labels", np.bincount(y.astype(np.int64).ravel()).tolist(),
              "losses", result[name]["step_losses"])
        for dataset, shape in weight_layout(archive):
            print("   ", dataset, list(shape))
        for layer in bidirectional_configs(archive):
            print(json.dumps(layer, indent=1))
    with open(os.path.join(REC_OUT, "recurrent.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
