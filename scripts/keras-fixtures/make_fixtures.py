#!/usr/bin/env python3
"""Regenerates kcc's Keras fixtures (tests/fixtures/keras, examples/*.json).

Real Keras writes every fixture, so the importer is tested against what users
actually hand it. Run from a throwaway virtualenv (never needed by the build):

    python3 -m venv /tmp/kerasvenv
    /tmp/kerasvenv/bin/pip install keras jax jaxlib numpy h5py
    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python scripts/keras-fixtures/make_fixtures.py

Keras 2 (tf.keras) configs come from make_keras2_fixtures.py, run with
tensorflow-cpu + tf-keras in a second virtualenv.

For the MLP and the CNN it also records, in training.json, what kcc's
training must reproduce: the batch (the first 32 Fashion-MNIST training
examples, pixels / 255, float32), the loss of each of the first 5 Adam(1e-3)
steps on that same batch (the loss of the batch *before* each update), the
initial outputs on two examples, and shapes and checksums of the initial
weights (whose values are in the .keras archive).
"""

import gzip
import json
import os
import shutil
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import keras  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "keras")
DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 32
STEPS = 5


def read_idx(name):
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def batch():
    images = read_idx("train-images-idx3-ubyte.gz")[:BATCH]
    labels = read_idx("train-labels-idx1-ubyte.gz")[:BATCH]
    x = (images.astype(np.float32) / 255.0).reshape(BATCH, 28, 28, 1)
    return images, x, labels.astype(np.int32)


def mlp():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ], name="mlp")


def cnn():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10),
    ], name="cnn")


def residual():
    # Layers are created in graph order so Keras's names (dense, dense_1, ...)
    # match the names kcc gives the same graph built with its C++ API.
    x = keras.Input((28, 28, 1))
    h = keras.layers.Dense(64, activation="relu")(keras.layers.Flatten()(x))
    d1 = keras.layers.Dense(64, activation="relu")
    d2 = keras.layers.Dense(64, activation="relu")
    r = d2(d1(h))
    y = keras.layers.Dense(10)(keras.layers.Add()([r, h]))
    return keras.Model(x, y, name="residual")


def mlp_functional():
    x = keras.Input((28, 28, 1))
    h = keras.layers.Flatten()(x)
    h = keras.layers.Dense(128, activation="relu")(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    y = keras.layers.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="mlp")


class RoundTrip:
    """What check_*_saves.py checks of one archive: kcc trains SOURCE with
    TRAIN_ARGS and saves it, predicts DATA's "x" with its save, and Keras
    loads both. `model` is Keras's model of kcc's save, `original` the
    source's; `moved` is how far training moved the weights, `diff` the
    largest |kcc predict - Keras predict| on x."""

    def __init__(self, kcc, source, data, x, tmp, train_args):
        import subprocess

        name = os.path.splitext(os.path.basename(source))[0]
        self.saved = os.path.join(tmp, name + ".keras")
        out = os.path.join(tmp, name + ".npy")
        subprocess.run([kcc, "train", source, *train_args,
                        "--save=" + self.saved],
                       check=True, capture_output=True)
        subprocess.run([kcc, "predict", self.saved, "--data", data,
                        "-o", out], check=True, capture_output=True)
        self.model = keras.saving.load_model(self.saved)
        self.original = keras.saving.load_model(source)
        self.moved = max(float(np.abs(a - b).max()) for a, b in
                         zip(self.model.get_weights(),
                             self.original.get_weights()))
        ours = np.load(out).astype(np.float32)
        theirs = np.asarray(self.model.predict(x, verbose=0))
        self.diff = float(np.abs(ours - theirs.astype(np.float32)).max())


def record_header(predict_examples):
    """The keys every fixture record of one batch starts with."""
    return {"keras_version": keras.__version__,
            "backend": keras.backend.backend(),
            "batch": "make_fixtures.py's: training examples 0..31",
            "steps": STEPS, "predict_examples": predict_examples}


def fresh_session():
    """Resets Keras's name counters (dense, dense_1, ... as kcc names
    layers) and the seed, so every model is reproducible on its own."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(1234)


def checksums(model):
    """Per weight, in model.weights order: the layer, shape, sum, sum of
    squares and the first values (float64 sums of the float32 values)."""
    out = []
    for layer in model.layers:
        for w in layer.weights:
            v = np.asarray(w.numpy(), dtype=np.float64)
            out.append({
                "layer": layer.name,
                "name": w.name,
                "shape": list(v.shape),
                "sum": float(v.sum()),
                "sum_sq": float((v * v).sum()),
                "first": [float(a) for a in v.reshape(-1)[:4]],
            })
    return out


def train_record(model, from_logits, x, y):
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=loss, metrics=["accuracy"])
    record = {
        "optimizer": {"name": "adam", "learning_rate": 1e-3, "beta_1": 0.9,
                      "beta_2": 0.999, "epsilon": 1e-7},
        "loss": "sparse_categorical_crossentropy",
        "from_logits": from_logits,
        "initial_weights": checksums(model),
        "initial_outputs_first2": np.asarray(model(x[:2])).tolist(),
    }
    losses, direct = [], []
    for _ in range(STEPS):
        # The loss of this batch under the current weights, computed
        # directly, then one update; train_on_batch's own loss must agree
        # (metrics reset first, else it is a running mean): both are the
        # pre-update loss.
        direct.append(float(loss(y, model(x, training=True))))
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    if not np.allclose(losses, direct, rtol=1e-5, atol=1e-6):
        sys.exit(f"train_on_batch losses {losses} != direct {direct}")
    record["step_losses"] = losses
    record["final_weights"] = checksums(model)
    return record


def save_json(model, name):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        # Indented so diffs and line:col messages are readable.
        json.dump(json.loads(model.to_json()), f, indent=1)
        f.write("\n")
    return path


def bad_archives():
    """Broken archives for the importer's error tests: a zip without
    config.json, and mlp.keras whose first Dense has 100 units while its
    weights are still [784, 128]."""
    import zipfile
    with zipfile.ZipFile(os.path.join(OUT, "bad_no_config.keras"), "w") as z:
        z.writestr("metadata.json", '{"keras_version": "3.15.1"}')
    with zipfile.ZipFile(os.path.join(OUT, "mlp.keras")) as src, \
            zipfile.ZipFile(os.path.join(OUT, "bad_weight_shape.keras"), "w",
                            zipfile.ZIP_DEFLATED) as z:
        config = json.loads(src.read("config.json"))
        config["config"]["layers"][2]["config"]["units"] = 100
        z.writestr("config.json", json.dumps(config))
        z.writestr("metadata.json", src.read("metadata.json"))
        z.writestr("model.weights.h5", src.read("model.weights.h5"))


def main():
    os.makedirs(OUT, exist_ok=True)
    images, x, y = batch()
    training = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": {
            "source": DATA + "/train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz",
            "indices": list(range(BATCH)),
            "scale": "pixels / 255.0 as float32, shape [32, 28, 28, 1]",
            "labels": y.tolist(),
            "pixels_first2": images[:2].reshape(2, -1).tolist(),
        },
        "steps": STEPS,
        "same_batch_each_step": True,
    }

    for name, build, from_logits in (("mlp", mlp, False), ("cnn", cnn, True)):
        # Fresh name counters per model: dense, dense_1, ... as kcc names them.
        fresh_session()
        model = build()
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(
                          from_logits=from_logits),
                      metrics=["accuracy"])
        # The archive holds the initial weights; training comes after.
        model.save(os.path.join(OUT, name + ".keras"))
        save_json(model, name + "_keras3.json")
        if name == "mlp":
            # Keras 3's legacy HDF5 writer (model_weights/<layer>/<model>/..).
            model.save(os.path.join(OUT, name + "_legacy.h5"))
        training[name] = train_record(model, from_logits, x, y)
        shutil.copy(os.path.join(OUT, name + "_keras3.json"),
                    os.path.join(ROOT, "examples", name + ".json"))

    fresh_session()
    model = residual()
    model.save(os.path.join(OUT, "residual.keras"))
    save_json(model, "residual_keras3.json")
    training["residual"] = {"initial_weights": checksums(model),
                            "initial_outputs_first2":
                                np.asarray(model(x[:2])).tolist()}
    fresh_session()
    save_json(mlp_functional(), "mlp_functional_keras3.json")

    bad_archives()
    with open(os.path.join(OUT, "training.json"), "w") as f:
        json.dump(training, f, indent=1)
        f.write("\n")
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
