#!/usr/bin/env python3
"""Writes the Keras fixtures of the layers kcc's layer registry added to
its first vocabulary (tests/fixtures/keras):

  vocabulary.keras  a model through Rescaling (scalar and per channel),
                    SpatialDropout2D and 1D (at rate 0, where Keras's and
                    kcc's random streams cannot differ), Reshape, Permute,
                    Cropping1D, Conv1D, Identity, UnitNormalization (one
                    axis and two), an
                    ActivityRegularization whose penalty joins the loss,
                    RepeatVector, and Dot (rank 2 and 3, each kind of axis
                    pair, normalize);
  group_norm.keras  a CNN with GroupNormalization: 4 groups of 2 channels on
                    an image, and one group per channel without beta on
                    steps;
  rms_norm.keras    RMSNormalization over an image's channels, then
                    LayerNormalization(rms_scaling=True) on steps, then
                    RMSNormalization over two axes (a scale per step and
                    feature);
  adaptive.keras    the adaptive average and max poolings in 1-D, 2-D and
                    3-D, channels_last and channels_first, to sizes that
                    divide the input, that do not (overlapping windows) and
                    that exceed it;

and vocabulary.json in layers.json's format (make_layer_fixtures.py): the
loss of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's
batch, and Keras's predict on the first 4 examples before and after them.
Run as make_fixtures.py (KERAS_BACKEND=jax); it leaves the other fixtures
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
PREDICT = 4


def vocabulary():
    x = keras.Input((28, 28, 1))
    h = L.Rescaling(2.0, offset=-0.5)(x)
    h = L.SpatialDropout2D(0.0)(h)
    h = L.Reshape((28, 28))(h)
    h = L.Permute((2, 1))(h)                           # columns as steps
    h = L.Cropping1D((1, 2))(h)                        # 25 x 28
    h = L.Conv1D(8, 3, activation="relu")(h)           # 23 x 8
    h = L.Rescaling([1.0, 0.5, 2.0, 1.5, 1.0, 0.25, 3.0, 1.0],
                    offset=[0.1, 0.0, -0.1, 0.2, 0.0, 0.0, 0.3, -0.2])(h)
    h = L.Identity()(h)
    h = L.SpatialDropout1D(0.0)(h)
    h = L.UnitNormalization()(h)
    h = L.ActivityRegularization(l1=1e-3, l2=1e-2)(h)
    d = L.Dense(16, activation="tanh")(L.Flatten()(h))
    r = L.RepeatVector(3)(d)                           # 3 x 16
    r = L.Permute((2, 1))(r)                           # 16 x 3
    r = L.UnitNormalization(axis=[1, 2])(r)
    e = L.Dense(6)(d)
    dots = [L.Dot(axes=1)([d, L.Dense(16)(d)]),                  # N x 1
            L.Dot(axes=1, normalize=True)([e, L.Dense(6)(e)]),
            L.Flatten()(L.Dot(axes=(2, 2))([h, h])),             # 23 x 23
            L.Flatten()(L.Dot(axes=(1, 1))([h, h])),             # 8 x 8
            L.Flatten()(L.Dot(axes=(-1, 1))([r, L.Permute((2, 1))(r)]))]
    y = L.Dense(10, activation="softmax")(
        L.Concatenate()([L.Flatten()(r)] + dots))
    return keras.Model(x, y, name="vocabulary")


def group_norm():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, strides=2, activation="relu")(x)    # 13 x 13 x 8
    h = L.GroupNormalization(groups=4)(h)
    h = L.Reshape((13 * 13, 8))(h)
    h = L.GroupNormalization(groups=-1, epsilon=1e-2, center=False)(h)
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling1D()(h))
    return keras.Model(x, y, name="group_norm")


def rms_norm():
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(8, 3, strides=2, activation="relu")(x)    # 13 x 13 x 8
    h = L.RMSNormalization()(h)
    h = L.Reshape((13 * 13, 8))(h)
    h = L.LayerNormalization(rms_scaling=True, epsilon=1e-2)(h)
    h = L.Dense(6)(h)
    h = L.RMSNormalization(axis=[1, 2], epsilon=1e-3)(h)   # scale 169 x 6
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="rms_norm")


def adaptive():
    # Sizes where Keras 3.15's JAX backend pools right: it returns NaN for
    # some others (26 -> 7, 13, 26, 30: a window end rounded in float32
    # gathers past its pools), where kcc computes the windows exactly.
    x = keras.Input((28, 28, 1))
    h = L.Conv2D(6, 3, activation="relu")(x)               # 26 x 26 x 6
    a = L.AdaptiveAveragePooling2D((5, 2))(h)               # overlapping
    m = L.AdaptiveMaxPooling2D(4)(h)
    f = L.AdaptiveAveragePooling2D(3, data_format="channels_first")(h)
    steps = L.Reshape((26, 26 * 6))(h)
    s = L.AdaptiveMaxPooling1D(3)(steps)                    # sizes 9, 10, 9
    v = L.AdaptiveAveragePooling3D((2, 3, 1))(L.Reshape((26, 26, 6, 1))(h))
    w = L.AdaptiveMaxPooling3D(2, data_format="channels_first")(
        L.Reshape((1, 26, 26, 6))(h))
    e = L.AdaptiveAveragePooling1D(27)(steps)               # more than 26
    y = L.Dense(10, activation="softmax")(L.Concatenate()(
        [L.Flatten()(t) for t in (a, m, f, s, v, w, e)]))
    return keras.Model(x, y, name="adaptive")


def train_record(model, x, y):
    """make_fixtures.train_record, with the activity penalty (model.losses
    of the call) in the direct loss as train_on_batch adds it."""
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
        out = model(x, training=True)
        penalty = sum(float(l) for l in model.losses)
        direct.append(float(loss(y, out)) + penalty)
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    if not np.allclose(losses, direct, rtol=1e-5, atol=1e-6):
        sys.exit(f"train_on_batch losses {losses} != direct {direct}")
    record["step_losses"] = losses
    record["final_weights"] = mf.checksums(model)
    return record


def fixture_record(name, build, x, y):
    """Builds a model in a fresh session, saves it as <name>.keras and
    returns its record: Keras's predict on the first PREDICT examples
    before and after train_record's steps, and their losses."""
    mf.fresh_session()
    model = build()
    model.save(os.path.join(mf.OUT, name + ".keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    print(name, "losses", rec["step_losses"])
    return rec


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build in (("vocabulary", vocabulary),
                        ("group_norm", group_norm),
                        ("rms_norm", rms_norm),
                        ("adaptive", adaptive)):
        result[name] = fixture_record(name, build, x, y)
    with open(os.path.join(mf.OUT, "vocabulary.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
