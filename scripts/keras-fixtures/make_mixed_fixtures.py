#!/usr/bin/env python3
"""Writes the Keras fixtures of kcc's mixed_bfloat16 dtype policy
(tests/fixtures/keras):

  mixed_mlp.keras  Flatten, Dense(128, relu), Dropout(0), Dense(64, relu),
                   Dense(10) and a float32 Activation("softmax"): the
                   pattern Keras's mixed precision guide recommends;
  mixed_cnn.keras  Conv2D(8, 3, relu), MaxPooling2D, Conv2D(16, 3, relu,
                   strides 2), Flatten, Dense(10, softmax) computed in
                   bfloat16 throughout (its softmax too);

  mixed_bn_cnn     Conv2D(8, 3, no bias), BatchNormalization, ReLU,
                   MaxPooling2D, Conv2D(16, 3, strides 2, no bias),
                   BatchNormalization(momentum 0.9), ReLU, Flatten,
                   Dense(10), float32 softmax: BatchNormalization's moments
                   and moving statistics in float32 under the policy;
  mixed_transformer  ids [32, 16] (mixed_transformer.npz) -> Embedding(40,
                   16) -> a transformer block: MultiHeadAttention(2 heads,
                   key_dim 8)(x, x) (scores and softmax in float32),
                   Add, LayerNormalization (float32 inside), Dense(32,
                   relu), Dense(16), Add, LayerNormalization ->
                   GlobalAveragePooling1D -> Dense(3), float32 softmax;
  mixed_rnn        the images as 28 steps of 28 features: SimpleRNN(16,
                   return_sequences), LSTM(24, return_sequences), GRU(16),
                   Dense(10), float32 softmax: the cells in bfloat16;

each built under keras.mixed_precision.set_global_policy("mixed_bfloat16"),
and mixed.json: per model, the loss of each of 5 Adam(1e-3)
train_on_batch steps on make_fixtures.py's batch (the first 32
Fashion-MNIST training examples; mixed_transformer: its npz's) and
Keras's predict on the first 4 examples from the initial weights and
after the steps. Run as make_fixtures.py (KERAS_BACKEND=jax), with model
names to write only those (their records replace theirs in mixed.json);
it leaves the other generators' outputs alone.
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


def mlp():
    x = keras.Input((28, 28, 1))
    h = L.Flatten()(x)
    h = L.Dense(128, activation="relu")(h)
    h = L.Dropout(0.0)(h)
    h = L.Dense(64, activation="relu")(h)
    h = L.Dense(10)(h)
    y = L.Activation("softmax", dtype="float32")(h)
    return keras.Model(x, y, name="mixed_mlp")


def cnn():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, activation="relu")(x)
    h = L.MaxPooling2D()(h)
    h = L.Conv2D(16, 3, strides=2, activation="relu")(h)
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="mixed_cnn")


def bn_cnn():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, use_bias=False)(x)
    h = L.ReLU()(L.BatchNormalization()(h))
    h = L.MaxPooling2D()(h)
    h = L.Conv2D(16, 3, strides=2, use_bias=False)(h)
    h = L.ReLU()(L.BatchNormalization(momentum=0.9)(h))
    h = L.Dense(10)(L.Flatten()(h))
    y = L.Activation("softmax", dtype="float32")(h)
    return keras.Model(x, y, name="mixed_bn_cnn")


VOCAB, STEPS_T = 40, 16


def transformer():
    ids = keras.Input((STEPS_T,), dtype="int32")
    x = L.Embedding(VOCAB, 16)(ids)
    attention = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    x = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, attention]))
    ffn = L.Dense(16)(L.Dense(32, activation="relu")(x))
    x = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, ffn]))
    h = L.Dense(3)(L.GlobalAveragePooling1D()(x))
    y = L.Activation("softmax", dtype="float32")(h)
    return keras.Model(ids, y, name="mixed_transformer")


def transformer_data():
    """Seeded ids; label: which of 3, 7 and 11 comes first (0: neither)."""
    rng = np.random.default_rng(41)
    x = rng.integers(1, VOCAB, size=(mf.BATCH, STEPS_T)).astype(np.int32)
    first = np.full(mf.BATCH, STEPS_T)
    label = np.zeros(mf.BATCH, np.int32)
    for token, cls in ((3, 1), (7, 2), (11, 1)):
        at = np.where((x == token).any(axis=1), (x == token).argmax(axis=1),
                      STEPS_T)
        label = np.where(at < first, cls, label)
        first = np.minimum(first, at)
    return x, label.astype(np.int32)


def rnn():
    x = keras.Input((28, 28, 1))
    h = L.Reshape((28, 28))(x)
    h = L.SimpleRNN(16, return_sequences=True)(h)
    h = L.LSTM(24, return_sequences=True)(h)
    h = L.GRU(16)(h)
    y = L.Activation("softmax", dtype="float32")(L.Dense(10)(h))
    return keras.Model(x, y, name="mixed_rnn")


def train_record(model, x, y):
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy())
    losses = []
    for _ in range(mf.STEPS):
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    return {"optimizer": {"name": "adam", "learning_rate": 1e-3,
                          "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7},
            "loss": "sparse_categorical_crossentropy", "from_logits": False,
            "step_losses": losses}


MODELS = (("mixed_mlp", mlp, None), ("mixed_cnn", cnn, None),
          ("mixed_bn_cnn", bn_cnn, None),
          ("mixed_transformer", transformer, transformer_data),
          ("mixed_rnn", rnn, None))


def main():
    only = sys.argv[1:]
    os.makedirs(mf.OUT, exist_ok=True)
    path = os.path.join(mf.OUT, "mixed.json")
    result = mf.record_header(PREDICT)
    if only and os.path.exists(path):
        with open(path) as f:
            result = json.load(f)
    for name, build, data in MODELS:
        if only and name not in only:
            continue
        if data is None:
            _, x, y = mf.batch()
        else:
            x, y = data()
            np.savez(os.path.join(mf.OUT, name + ".npz"), x=x, y=y)
        mf.fresh_session()
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        model = build()
        keras.mixed_precision.set_global_policy("float32")
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        rec = {"output_dtype": str(initial.dtype)}
        if data is not None:
            rec["data"] = name + ".npz"
        rec.update(train_record(model, x, y))
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(model.predict(
            x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        result[name] = rec
        print(name, rec["output_dtype"], "losses", rec["step_losses"])
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
