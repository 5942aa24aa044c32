#!/usr/bin/env python3
"""Writes the Keras fixtures of the geometric augmentation layers
(tests/fixtures/keras):

  geometric.keras          RandomRotation, RandomZoom and RandomTranslation
                           at factor 0 (Keras still samples the images
                           through affine_transform in training, at the
                           identity), each with another fill mode and
                           interpolation, and RandomCrop where Keras's
                           training call is deterministic (the input's own
                           size; as tall, narrower: a centred crop; smaller:
                           the centred aspect crop resized), around a
                           convolution, global pooling and a Dense;
  geometric_predict.keras  the four layers with nonzero factors and a
                           RandomCrop smaller than its input: Keras's
                           predict (the identity, RandomCrop's too) only;

and geometric.json in layers.json's format (make_layer_fixtures.py): for
geometric, the loss of each of 5 Adam(1e-3) train_on_batch steps on
make_fixtures.py's batch and Keras's predict on the first 4 examples before
and after them; for geometric_predict, Keras's predict; and under
"transforms", Keras's transform_images on three fixed 7 x 9 x 2 images for
fixed per-image parameters (rotation angles in degrees, zooms, translations
in pixels, a crop offset), for every fill mode and interpolation: the
images each layer's training call produces given those draws.
Run as make_fixtures.py (KERAS_BACKEND=jax); it leaves the other fixtures
alone.
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
FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("bilinear", "nearest")
ANGLES = [-30.5, 47.3, 170.0]
ZOOMS = {"height_zoom": [[1.3], [0.7], [1.05]],
         "width_zoom": [[0.8], [1.45], [1.0]]}
TRANSLATIONS = [[2.3, -1.6], [-15.2, 4.4], [0.5, 9.7]]   # [dx, dy] pixels
CROP = (2, 3)                                            # (top, left)


def geometric():
    x = keras.Input((28, 28, 1))
    h = L.RandomRotation(0.0, fill_mode="constant", fill_value=0.5)(x)
    h = L.RandomZoom(0.0, interpolation="nearest", fill_mode="wrap")(h)
    h = L.RandomTranslation(0.0, 0.0, fill_mode="nearest")(h)
    h = L.RandomCrop(28, 28, seed=5)(h)
    h = L.Conv2D(4, 3, strides=2, activation="relu")(h)    # 13 x 13 x 4
    h = L.RandomCrop(11, 13, seed=6)(h)                     # centred crop
    h = L.RandomCrop(14, 15, seed=7)(h)                     # aspect + resize
    h = L.Conv2D(6, 3, activation="tanh")(h)
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(h))
    return keras.Model(x, y, name="geometric")


def geometric_predict():
    x = keras.Input((28, 28, 1))
    h = L.RandomRotation((-0.2, 0.3), seed=1)(x)
    h = L.RandomZoom(0.2, (-0.1, 0.3), fill_mode="constant", seed=2)(h)
    h = L.RandomTranslation(0.1, 0.2, interpolation="nearest", seed=3)(h)
    h = L.RandomCrop(20, 22, seed=4)(h)
    h = L.Conv2D(4, 3, strides=2, activation="relu")(h)
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(h))
    return keras.Model(x, y, name="geometric_predict")


def transforms():
    """Keras's images for fixed draws, every fill mode and interpolation."""
    rng = np.random.default_rng(11)
    images = rng.random((3, 7, 9, 2)).astype(np.float32)
    cases = []
    for fill_mode in FILL_MODES:
        for interpolation in INTERPOLATIONS:
            fill = {"fill_mode": fill_mode, "interpolation": interpolation,
                    "fill_value": 0.7 if fill_mode == "constant" else 0.0}
            rot = L.RandomRotation(0.5, **fill)
            angle = np.asarray(ANGLES, np.float32)
            zeros, ones = np.zeros(3, np.float32), np.ones(3, np.float32)
            matrix = rot._compute_affine_matrix(
                center_x=0.5, center_y=0.5, angle=angle, translate_x=zeros,
                translate_y=zeros, scale=ones, shear_x=zeros, shear_y=zeros,
                height=7, width=9)
            out = rot.transform_images(
                images, {"rotation_matrix": matrix}, training=True)
            cases.append({"layer": "RandomRotation", **fill,
                          "angles": ANGLES,
                          "matrix": np.asarray(matrix).tolist(),
                          "output": np.asarray(out).tolist()})
            zoom = L.RandomZoom(0.5, 0.5, **fill)
            out = zoom.transform_images(
                images, {k: np.asarray(v, np.float32)
                         for k, v in ZOOMS.items()}, training=True)
            cases.append({"layer": "RandomZoom", **fill, **ZOOMS,
                          "output": np.asarray(out).tolist()})
            shift = L.RandomTranslation(0.5, 0.5, **fill)
            out = shift.transform_images(
                images,
                {"translations": np.asarray(TRANSLATIONS, np.float32)},
                training=True)
            cases.append({"layer": "RandomTranslation", **fill,
                          "translations": TRANSLATIONS,
                          "output": np.asarray(out).tolist()})
    crop = L.RandomCrop(4, 5)
    out = crop.transform_images(images, CROP, training=True)
    cases.append({"layer": "RandomCrop", "height": 4, "width": 5,
                  "top": CROP[0], "left": CROP[1],
                  "output": np.asarray(out).tolist()})
    return {"images": images.tolist(), "cases": cases}


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    mf.fresh_session()
    model = geometric()
    model.save(os.path.join(mf.OUT, "geometric.keras"))
    initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
    rec = mv.train_record(model, x, y)
    rec["initial_predict"] = initial.astype(np.float64).tolist()
    rec["final_predict"] = np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
    result["geometric"] = rec
    print("geometric losses", rec["step_losses"])
    mf.fresh_session()
    model = geometric_predict()
    model.save(os.path.join(mf.OUT, "geometric_predict.keras"))
    result["geometric_predict"] = {"initial_predict": np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()}
    result["transforms"] = transforms()
    with open(os.path.join(mf.OUT, "geometric.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
