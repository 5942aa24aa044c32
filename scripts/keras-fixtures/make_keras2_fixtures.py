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
"""

import io
import json
import os
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import h5py  # noqa: E402
import tf_keras as keras  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "keras")
L = keras.layers


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
    for name, build in (("mlp", mlp), ("cnn", cnn), ("residual", residual)):
        keras.backend.clear_session()
        model = build()
        with open(os.path.join(OUT, name + "_keras2.json"), "w") as f:
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
            model.save(os.path.join(OUT, "mlp_keras2.h5"), save_format="h5")
    with open(os.path.join(OUT, "mlp_keras2.json")) as f:
        old = strip_modern_keys(json.load(f))
    with open(os.path.join(OUT, "mlp_keras2_pre213.json"), "w") as f:
        json.dump(old, f, indent=1)
        f.write("\n")
    print("keras", keras.__version__, "wrote Keras 2 fixtures")


if __name__ == "__main__":
    main()
