#!/usr/bin/env python3
"""Writes the Keras fixtures of models used as layers and of shared layers
(tests/fixtures/keras/nested):

  siamese.keras     one tower (a Sequential of Conv2D, Flatten, Dense)
                    applied to the top and the bottom half of the image, and
                    one Dense object called on both towers' outputs: shared
                    weights whose gradient is the sum over the calls;
  transfer.keras    a preprocessing Sequential (Rescaling, Cropping2D) in
                    front of a frozen functional base (Conv2D,
                    BatchNormalization with moving statistics far from 0 and
                    1) called with training=False, and a trainable
                    functional block with its own BatchNormalization, also
                    called with training=False, then a new head. Keras 3's
                    Functional passes the outer call's training=True over a
                    node's training=False (functional.py operation_fn), so
                    in fit the frozen base's BatchNormalization runs in
                    inference mode because it is frozen, the block's in
                    training mode;
  two_level.keras   a Sequential holding a functional model that holds a
                    Sequential, with a Dense object called twice at the
                    second level;
  pipeline.keras    a keras.layers.Pipeline (Rescaling, Conv2D, MaxPooling2D,
                    Dense: a plain layer whose layers and weights are laid
                    out as a nested Sequential's) called twice, on the
                    image and on its transpose (shared weights);
  mobilenet.keras   keras.applications.MobileNetV2(alpha=0.35,
                    include_top=False, weights=None) at 32x32x3 as a base
                    with a new head, and mobilenet_sgd.weights.h5, its
                    weights after one SGD(0.05) step on the batch padded to
                    32x32 and repeated on 3 channels.

each also as <name>.h5 (legacy HDF5) and <name>.json (model.to_json()),
and nested.json in layers.json's format for the first four (5 Adam(1e-3)
train_on_batch losses on make_fixtures.py's batch; predict on the first 4
examples before and after), and for mobilenet Keras's own noise on that
step: the relative norm of the difference between the update of every
weight and the update computed on the batch with its rows reversed.
Run as make_fixtures.py (KERAS_BACKEND=jax); it leaves the other fixtures
alone. Names as arguments (siamese, transfer, two_level, pipeline,
mobilenet) rewrite
those alone.
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
OUT = os.path.join(mf.OUT, "nested")
SGD_RATE = 0.05


def siamese():
    x = keras.Input((28, 28, 1))
    top = L.Cropping2D(((0, 14), (0, 0)))(x)
    bottom = L.Cropping2D(((14, 0), (0, 0)))(x)
    tower = keras.Sequential([
        keras.Input((14, 28, 1)),
        L.Conv2D(4, 3, strides=2, activation="relu"),
        L.Flatten(),
        L.Dense(16, activation="tanh"),
    ], name="tower")
    a, b = tower(top), tower(bottom)
    shared = L.Dense(8, activation="relu", name="shared_projection")
    pa, pb = shared(a), shared(b)
    h = L.Concatenate()([pa, pb, L.Subtract()([a, b])])
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="siamese")


def conv_bn_block(shape, name):
    inp = keras.Input(shape)
    h = L.Conv2D(6, 3, activation="relu")(inp)
    h = L.BatchNormalization()(h)
    return keras.Model(inp, h, name=name)


def transfer():
    x = keras.Input((28, 28, 1))
    preprocess = keras.Sequential([
        keras.Input((28, 28, 1)),
        L.Rescaling(2.0, offset=-1.0),
        L.Cropping2D(2),
    ], name="preprocess")
    base = conv_bn_block((24, 24, 1), "base")
    block = conv_bn_block((22, 22, 6), "block")
    rng = np.random.default_rng(7)
    for model in (base, block):
        bn = [l for l in model.layers
              if isinstance(l, L.BatchNormalization)][0]
        bn.moving_mean.assign(rng.normal(0.3, 0.2, 6).astype("float32"))
        bn.moving_variance.assign(rng.uniform(0.5, 2.0, 6).astype("float32"))
    base.trainable = False
    h = base(preprocess(x), training=False)
    h = block(h, training=False)
    h = L.GlobalAveragePooling2D()(h)
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="transfer")


def two_level():
    inner = keras.Sequential([
        keras.Input((32,)),
        L.Dense(16, activation="relu"),
        L.Dense(16),
    ], name="inner")
    m_in = keras.Input((64,))
    h = L.Dense(32, activation="relu")(m_in)
    twice = L.Dense(32, activation="tanh", name="twice")
    h = twice(twice(h))
    h = L.Add()([inner(h), L.Dense(16)(h)])
    middle = keras.Model(m_in, h, name="middle")
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        L.Flatten(),
        L.Dense(64, activation="relu"),
        middle,
        L.Dense(10, activation="softmax"),
    ], name="two_level")


def pipeline():
    pre = L.Pipeline([
        L.Rescaling(2.0, offset=-1.0),
        L.Conv2D(4, 3, activation="relu"),
        L.MaxPooling2D(2),
        L.Dense(6, activation="tanh"),
    ], name="pre")
    x = keras.Input((28, 28, 1))
    a = pre(x)
    b = pre(L.Permute((2, 1, 3))(x))
    h = L.Concatenate()([L.Flatten()(a), L.Flatten()(b)])
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="pipeline")


def train_record(model, x, y):
    loss = keras.losses.SparseCategoricalCrossentropy()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=loss, metrics=["accuracy"])
    record = {
        "optimizer": {"name": "adam", "learning_rate": 1e-3, "beta_1": 0.9,
                      "beta_2": 0.999, "epsilon": 1e-7},
        "loss": "sparse_categorical_crossentropy",
        "from_logits": False,
        "initial_weights": mf.checksums(model),
    }
    losses, direct = [], []
    for _ in range(mf.STEPS):
        # An eager training call moves BatchNormalization's moving
        # statistics: put them back, so only train_on_batch moves them.
        saved = [np.asarray(v) for v in model.non_trainable_variables]
        direct.append(float(loss(y, model(x, training=True))))
        for v, value in zip(model.non_trainable_variables, saved):
            v.assign(value)
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    if not np.allclose(losses, direct, rtol=1e-5, atol=1e-6):
        sys.exit(f"train_on_batch losses {losses} != direct {direct}")
    record["step_losses"] = losses
    record["final_weights"] = mf.checksums(model)
    return record


def mobilenet():
    base = keras.applications.MobileNetV2(
        input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=None)
    x = keras.Input((32, 32, 3))
    h = L.GlobalAveragePooling2D()(base(x))
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="mobilenet_transfer")


def image32(x):
    """The batch padded to 32x32 (2 zero pixels each side), on 3 channels:
    MobileNetV2's smallest input."""
    padded = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))
    return np.repeat(padded, 3, axis=3).astype(np.float32)


def sgd_update(model, initial, x, y):
    """Every weight's change after one SGD step from `initial`."""
    model.set_weights(initial)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=SGD_RATE),
                  loss="sparse_categorical_crossentropy")
    model.train_on_batch(x, y)
    return [np.asarray(w, np.float64) - np.asarray(i, np.float64)
            for w, i in zip(model.get_weights(), initial)]


def relative_norm(a, b):
    diff = sum(float(((u - v) ** 2).sum()) for u, v in zip(a, b))
    norm = sum(float((v ** 2).sum()) for v in b)
    return (diff / norm) ** 0.5


def mobilenet_record(x, y):
    mf.fresh_session()
    model = mobilenet()
    model.save(os.path.join(OUT, "mobilenet.keras"))
    x32 = image32(x)
    initial = model.get_weights()
    reversed_update = sgd_update(model, initial, x32[::-1], y[::-1])
    update = sgd_update(model, initial, x32, y)
    model.save_weights(os.path.join(OUT, "mobilenet_sgd.weights.h5"))
    trainable = {id(v) for v in model.trainable_weights}
    ids = [id(v) for v in model.weights]
    moving = [i for i, v in enumerate(ids) if v not in trainable]
    rel = relative_norm(
        [u for i, u in enumerate(reversed_update) if i not in moving],
        [u for i, u in enumerate(update) if i not in moving])
    return {"sgd_learning_rate": SGD_RATE,
            "keras_reorder_relative_update_difference": rel,
            "weights": len(initial), "moving_statistics": len(moving)}


def main():
    os.makedirs(OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    only = sys.argv[1:]
    for name, build in (("siamese", siamese), ("transfer", transfer),
                        ("two_level", two_level), ("pipeline", pipeline)):
        if only and name not in only:
            continue
        mf.fresh_session()
        model = build()
        model.save(os.path.join(OUT, name + ".keras"))
        # The same model as a legacy .h5 (nested models' weights listed
        # under the model's group) and as model.to_json().
        model.save(os.path.join(OUT, name + ".h5"))
        mf.save_json(model, os.path.join("nested", name + ".json"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        rec = train_record(model, x, y)
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    path = os.path.join(OUT, "nested.json")
    if only and os.path.exists(path):
        with open(path) as f:
            result = {**json.load(f), **result}
    if not only or "mobilenet" in only:
        result["mobilenet"] = mobilenet_record(x, y)
    print("mobilenet", result["mobilenet"])
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
