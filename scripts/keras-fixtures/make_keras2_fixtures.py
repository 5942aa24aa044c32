#!/usr/bin/env python3
"""Regenerates kcc's Keras 2 (tf.keras) fixtures in tests/fixtures/keras.

Run after make_fixtures.py, from a virtualenv with TensorFlow and tf-keras
(the Keras 2 line; TensorFlow >= 2.16 ships Keras 3 as tf.keras):

    python3 -m venv /tmp/tfvenv
    /tmp/tfvenv/bin/pip install tensorflow-cpu tf-keras h5py
    /tmp/tfvenv/bin/python scripts/keras-fixtures/make_keras2_fixtures.py

Writes <model>_keras2.json (Keras 2 to_json) for the MLP, the CNN and the
residual model, and mlp_keras2.h5: a Keras 2 legacy HDF5 model file
(model_weights/<layer>/<layer>/kernel:0) holding the *same* weights as
mlp.keras, copied from that archive, so the importer can be checked to read
equal values from both formats.

Also a Keras 2 vision model written and trained by tf_keras itself
(vision_keras2.h5: a legacy HDF5 model file with its weights and
training_config; vision_keras2.json: its to_json), a functional model with
BatchNormalization, DepthwiseConv2D, SeparableConv2D, Conv2DTranspose,
PReLU, LeakyReLU, ReLU (max_value; negative_slope and threshold),
ZeroPadding2D, UpSampling2D, GlobalAveragePooling2D, Concatenate and the
merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum). Its
BatchNormalization and PReLU weights are drawn away from their initial
values, then 64 Adam steps of fit() on Fashion-MNIST move every weight and
the moving statistics away from anything trivial. vision_keras2_predict.json
records Keras 2's predict (inference: the moving statistics) on the first
PREDICT Fashion-MNIST test images, whose pixels it holds (uint8; the input
is pixels / 255 in float32).

    /tmp/tfvenv/bin/python scripts/keras-fixtures/make_keras2_fixtures.py \
        [--only vision] [--out DIR]

Also a Keras 2 sequence model, written and trained the same way
(sequence_keras2.h5, sequence_keras2.json, sequence_keras2_predict.json):
int32 token ids [48] in [0, 40) -> Embedding(40, 8) -> ZeroPadding1D((2, 1))
-> Conv1D(12, 3, causal, dilation 2, relu) -> MaxPooling1D(2) -> Conv1D(10,
3, same, strides 2, relu) -> UpSampling1D(2) -> AveragePooling1D(3, strides
2) -> Conv1D(8, 3, valid, dilation 2) -> GlobalMaxPooling1D; beside it
Dense(6, tanh) on the rank-3 embeddings -> GRU(8, return_sequences) ->
GlobalAveragePooling1D, and LSTM(6) on the embeddings; the three
concatenated -> Dense(3, softmax). 64 Adam(1e-2) steps of fit() (batch 32,
sparse_categorical_crossentropy) on seeded sequences whose label says which
of tokens 3 (1) and 7 (2) occurs first (0: neither);
sequence_keras2_predict.json holds PREDICT other seeded sequences (ids) and
Keras 2's predict on them.

    /tmp/tfvenv/bin/python scripts/keras-fixtures/make_keras2_fixtures.py \
        --only sequence

Also a Keras 2 model under the mixed_bfloat16 policy (mixed_keras2.h5,
mixed_keras2.json, mixed_keras2_predict.json): Conv2D(8, 3) ->
BatchNormalization -> ReLU -> MaxPooling2D -> Flatten -> Dense(32, relu) ->
Dense(10) -> Activation("softmax", dtype="float32"), built under
tf_keras.mixed_precision.set_global_policy("mixed_bfloat16") (each layer's
dtype a Keras 2 Policy object), 64 Adam steps of fit() as the vision
model's, and Keras 2's predict on the same test images.
    /tmp/tfvenv/bin/python scripts/keras-fixtures/make_keras2_fixtures.py \
        --only mixed
--only vision (or sequence, mixed) writes that model's three files alone; --out
writes into DIR instead of tests/fixtures/keras (to compare a rerun with the
fixtures in the tree).
"""

import argparse
import gzip
import io
import json
import os
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "keras")
DATA = "/usr/share/datasets/fashion-mnist"
L = keras.layers
PREDICT = 4
TRAIN = 2048  # fit() examples: 64 Adam steps of 32


def mlp():
    return keras.Sequential([
        keras.Input((28, 28, 1)), L.Flatten(), L.Dense(128, activation="relu"),
        L.Dense(64, activation="relu"), L.Dense(10, activation="softmax"),
    ], name="mlp")


def cnn():
    return keras.Sequential([
        keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(2), L.Conv2D(64, 3, activation="relu"),
        L.MaxPooling2D(2), L.Flatten(), L.Dense(128, activation="relu"),
        L.Dense(10),
    ], name="cnn")


def residual():
    x = keras.Input((28, 28, 1), name="input_layer")
    h = L.Dense(64, activation="relu")(L.Flatten()(x))
    d1 = L.Dense(64, activation="relu")
    d2 = L.Dense(64, activation="relu")
    y = L.Dense(10)(L.Add()([d2(d1(h)), h]))
    return keras.Model(x, y, name="residual")


def vision():
    """A small functional Keras 2 vision model on 28x28x1 (layers created in
    graph order, so tf_keras's names follow kcc's class counters)."""
    x = keras.Input((28, 28, 1), name="image")
    h = L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x)  # 14x14
    h = L.BatchNormalization(momentum=0.9)(h)
    h = L.ReLU()(h)
    a = L.ZeroPadding2D(((1, 1), (2, 0)))(h)                          # 16x16
    a = L.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False)(a)   # 14x14x16
    a = L.BatchNormalization(momentum=0.8, epsilon=1e-2)(a)
    a = L.ReLU(max_value=6.0)(a)
    b = L.SeparableConv2D(16, 3, padding="same")(h)                   # 14x14x16
    b = L.PReLU(shared_axes=[1, 2])(b)
    merged = L.Concatenate()([
        L.Add()([a, b]), L.Subtract()([a, b]), L.Multiply()([a, b]),
        L.Average()([a, b]), L.Maximum()([a, b]), L.Minimum()([a, b])])
    m = L.LeakyReLU(alpha=0.2)(merged)                                # 14x14x96
    d = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(m)  # 7x7
    u = L.UpSampling2D(2)(d)                                          # 14x14x16
    t = L.Conv2DTranspose(8, 3, strides=2, padding="same")(d)         # 14x14x8
    g = L.Concatenate(axis=-1)([u, t])                                # 14x14x24
    g = L.BatchNormalization(momentum=0.9)(g)
    g = L.ReLU(negative_slope=0.1, threshold=0.05)(g)
    g = L.GlobalAveragePooling2D()(g)
    y = L.Dense(10, activation="softmax")(g)
    return keras.Model(x, y, name="vision")


SEQ_STEPS, SEQ_VOCAB = 48, 40


def sequence():
    """A functional Keras 2 sequence model on int32 token ids (layers
    created in graph order)."""
    ids = keras.Input((SEQ_STEPS,), dtype="int32", name="tokens")
    e = L.Embedding(SEQ_VOCAB, 8)(ids)                               # 48x8
    p = L.ZeroPadding1D((2, 1))(e)                                   # 51x8
    a = L.Conv1D(12, 3, padding="causal", dilation_rate=2,
                 activation="relu")(p)                               # 51x12
    a = L.MaxPooling1D(2)(a)                                         # 25x12
    a = L.Conv1D(10, 3, strides=2, padding="same",
                 activation="relu")(a)                               # 13x10
    a = L.UpSampling1D(2)(a)                                         # 26x10
    a = L.AveragePooling1D(3, strides=2)(a)                          # 12x10
    a = L.Conv1D(8, 3, padding="valid", dilation_rate=2)(a)          # 8x8
    g1 = L.GlobalMaxPooling1D()(a)
    d = L.Dense(6, activation="tanh")(e)                             # 48x6
    r = L.GRU(8, return_sequences=True)(d)                           # 48x8
    g2 = L.GlobalAveragePooling1D()(r)
    s = L.LSTM(6)(e)
    h = L.Concatenate()([g1, g2, s])
    y = L.Dense(3, activation="softmax")(h)
    return keras.Model(ids, y, name="sequence")


def first_of(x, a, b):
    """0 if neither token a nor b occurs, 1 if a occurs first, 2 if b."""
    n = x.shape[1]
    pa = np.where((x == a).any(axis=1), (x == a).argmax(axis=1), n)
    pb = np.where((x == b).any(axis=1), (x == b).argmax(axis=1), n)
    return np.where(pa == pb, 0, np.where(pa < pb, 1, 2)).astype(np.int32)


def write_sequence(out):
    """sequence_keras2.{h5,json} and sequence_keras2_predict.json."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(1234)
    tf.config.experimental.enable_op_determinism()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    model = sequence()
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.default_rng(17)
    x = rng.integers(0, SEQ_VOCAB, size=(TRAIN, SEQ_STEPS)).astype(np.int32)
    y = first_of(x, 3, 7)
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    model.save(os.path.join(out, "sequence_keras2.h5"), save_format="h5")
    with open(os.path.join(out, "sequence_keras2.json"), "w") as f:
        json.dump(json.loads(model.to_json()), f, indent=1)
        f.write("\n")
    xt = np.random.default_rng(23).integers(
        0, SEQ_VOCAB, size=(PREDICT, SEQ_STEPS)).astype(np.int32)
    probs = np.asarray(model.predict(xt, verbose=0), dtype=np.float64)
    record = {
        "keras_version": keras.__version__,
        "model": "sequence_keras2.h5",
        "examples": "%d int32 sequences of %d token ids in [0, %d) "
                    "(numpy default_rng(23))" % (PREDICT, SEQ_STEPS,
                                                 SEQ_VOCAB),
        "ids": xt.astype(int).tolist(),
        "labels": first_of(xt, 3, 7).astype(int).tolist(),
        "predict": probs.tolist(),
    }
    with open(os.path.join(out, "sequence_keras2_predict.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print("sequence: predict", probs.argmax(-1).tolist(), "labels",
          record["labels"], "train label counts",
          np.bincount(y, minlength=3).tolist())


def mixed():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3)(x)
    h = L.ReLU()(L.BatchNormalization()(h))
    h = L.Flatten()(L.MaxPooling2D()(h))
    h = L.Dense(10)(L.Dense(32, activation="relu")(h))
    y = L.Activation("softmax", dtype="float32")(h)
    keras.mixed_precision.set_global_policy("float32")
    return keras.Model(x, y, name="mixed_keras2")


def deterministic_session():
    """A fresh tf_keras session whose fit() sums in the same order on every
    run (one thread), so a rerun writes the same weights."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(1234)
    tf.config.experimental.enable_op_determinism()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)


def fit_and_save(model, out, name):
    """One epoch of Adam on the first TRAIN Fashion-MNIST images, then
    NAME.h5 and NAME.json in OUT. Returns the first PREDICT test images'
    pixels and the model's probabilities for them."""
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    images = read_idx("train-images-idx3-ubyte.gz")[:TRAIN]
    labels = read_idx("train-labels-idx1-ubyte.gz")[:TRAIN].astype(np.int32)
    x = (images.astype(np.float32) / np.float32(255)).reshape(-1, 28, 28, 1)
    model.fit(x, labels, batch_size=32, epochs=1, shuffle=False, verbose=0)
    model.save(os.path.join(out, name + ".h5"), save_format="h5")
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(json.loads(model.to_json()), f, indent=1)
        f.write("\n")
    test = read_idx("t10k-images-idx3-ubyte.gz")[:PREDICT]
    xt = (test.astype(np.float32) / np.float32(255)).reshape(-1, 28, 28, 1)
    return test, np.asarray(model.predict(xt, verbose=0), dtype=np.float64)


def write_mixed(out):
    """mixed_keras2.{h5,json} and mixed_keras2_predict.json."""
    deterministic_session()
    model = mixed()
    test, probs = fit_and_save(model, out, "mixed_keras2")
    record = {
        "keras_version": keras.__version__,
        "model": "mixed_keras2.h5",
        "policies": {layer.name: layer.dtype_policy.name
                     for layer in model.layers},
        "examples": "Fashion-MNIST test images 0..%d; x = pixels / 255 "
                    "(float32)" % (PREDICT - 1),
        "pixels": test.reshape(PREDICT, -1).astype(int).tolist(),
        "predict": probs.tolist(),
    }
    with open(os.path.join(out, "mixed_keras2_predict.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print("mixed: predict", probs.argmax(-1).tolist(), record["policies"])


def read_idx(name):
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big")
            for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def write_vision(out):
    """vision_keras2.{h5,json} and vision_keras2_predict.json."""
    deterministic_session()
    model = vision()
    rng = np.random.default_rng(7)
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            values = []
            for w in layer.weights:
                n = w.shape[0]
                # tf_keras names them "<layer>/gamma:0".
                if w.name.split("/")[-1].split(":")[0] in (
                        "gamma", "moving_variance"):
                    values.append(rng.uniform(0.5, 1.5, n))
                else:
                    values.append(rng.normal(0.0, 0.1, n))
            layer.set_weights([v.astype(np.float32) for v in values])
        elif isinstance(layer, L.PReLU):
            layer.set_weights([rng.uniform(0.05, 0.3, layer.weights[0].shape)
                               .astype(np.float32)])
    test, probs = fit_and_save(model, out, "vision_keras2")
    stats = {layer.name: float(np.abs(np.asarray(layer.moving_mean)).max())
             for layer in model.layers
             if isinstance(layer, L.BatchNormalization)}
    record = {
        "keras_version": keras.__version__,
        "model": "vision_keras2.h5",
        "examples": "Fashion-MNIST test images 0..%d; x = pixels / 255 "
                    "(float32)" % (PREDICT - 1),
        "pixels": test.reshape(PREDICT, -1).astype(int).tolist(),
        "labels": read_idx("t10k-labels-idx1-ubyte.gz")[:PREDICT]
                  .astype(int).tolist(),
        "max_abs_moving_mean": stats,
        "predict": probs.tolist(),
    }
    with open(os.path.join(out, "vision_keras2_predict.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print("vision: predict", probs.argmax(-1).tolist(), "moving means", stats)


def keras3_weights(archive):
    """Per layer group of a Keras 3 archive: the list of arrays (vars/0..)."""
    with zipfile.ZipFile(archive) as z:
        f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
        out = {}
        for name, group in f["layers"].items():
            if "vars" in group:
                v = group["vars"]
                out[name] = [v[str(i)][()] for i in range(len(v))]
        return out


def strip_modern_keys(value):
    """Keras before 2.13 wrote no module / registered_name / build_config:
    the same spec in that older layout."""
    if isinstance(value, dict):
        return {k: strip_modern_keys(v) for k, v in value.items()
                if k not in ("module", "registered_name", "build_config")}
    if isinstance(value, list):
        return [strip_modern_keys(v) for v in value]
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["vision", "sequence", "mixed"])
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    if args.only in (None, "vision"):
        write_vision(out)
    if args.only in (None, "sequence"):
        write_sequence(out)
    if args.only in (None, "mixed"):
        write_mixed(out)
    if args.only:
        return
    for name, build in (("mlp", mlp), ("cnn", cnn), ("residual", residual)):
        keras.backend.clear_session()
        model = build()
        with open(os.path.join(out, name + "_keras2.json"), "w") as f:
            json.dump(json.loads(model.to_json()), f, indent=1)
            f.write("\n")
        if name == "mlp":
            w3 = keras3_weights(os.path.join(OUT, "mlp.keras"))
            for layer in model.layers:
                if layer.weights:
                    # Same names as the archive's class counters here.
                    layer.set_weights(w3[layer.name])
            model.compile(optimizer=keras.optimizers.Adam(1e-3),
                          loss="sparse_categorical_crossentropy",
                          metrics=["accuracy"])
            model.save(os.path.join(out, "mlp_keras2.h5"), save_format="h5")
    with open(os.path.join(out, "mlp_keras2.json")) as f:
        old = strip_modern_keys(json.load(f))
    with open(os.path.join(out, "mlp_keras2_pre213.json"), "w") as f:
        json.dump(old, f, indent=1)
        f.write("\n")
    print("keras", keras.__version__, "wrote Keras 2 fixtures")


if __name__ == "__main__":
    main()
