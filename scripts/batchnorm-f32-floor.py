#!/usr/bin/env python3
"""How far Keras's own float32 moving statistics are from exact arithmetic.

BatchNormParityTest compares kcc's moving statistics after 5 Adam steps
with the ones Keras wrote (tests/fixtures/keras/batchnorm.json, float32).
This script reruns Keras on the same fixtures and batch twice, in float32
and in float64 (the same weights, cast), and prints the largest absolute
difference of the moving statistics: the rounding noise of float32 itself,
the floor under any float32 implementation's agreement with Keras.

It writes the float64 statistics, and how far Keras's float32 ones are
from them, to tests/fixtures/keras/batchnorm_f64.json, so that
BatchNormParityTest can check that kcc's float32 statistics are as close
to exact arithmetic as Keras's own.

  KERAS_BACKEND=jax JAX_PLATFORMS=cpu JAX_ENABLE_X64=1 \
    python scripts/batchnorm-f32-floor.py

Needs Keras 3 with JAX (the fixture venv of scripts/keras-fixtures), never
the build or the tests.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "keras-fixtures"))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_batchnorm_fixtures as bf  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "tests", "fixtures", "keras")


def train(name, floatx, x, y):
    mf.fresh_session()
    keras.config.set_floatx(floatx)
    model = keras.saving.load_model(os.path.join(FIXTURES, name + ".keras"))
    if floatx != "float32":
        weights = model.get_weights()
        model = keras.models.model_from_json(
            model.to_json().replace("float32", floatx))
        model.set_weights([w.astype(floatx) for w in weights])
    bf.train_record(model, x.astype(floatx), y)
    return bf.moving_stats(model)


def main():
    if not os.environ.get("JAX_ENABLE_X64"):
        sys.exit("set JAX_ENABLE_X64=1: without it JAX computes float64 in float32")
    _, x, y = mf.batch()
    written = json.load(open(os.path.join(FIXTURES, "batchnorm.json")))
    record = {"keras_version": keras.__version__,
              "what": "each fixture's moving statistics after the 5 Adam steps "
                      "of batchnorm.json, trained by Keras in float64 from the "
                      "same weights and batch; keras_f32_error: the largest "
                      "|float32 - float64| of Keras's own float32 run"}
    for name in ("resnet", "frozen"):
        f32, f64 = train(name, "float32", x, y), train(name, "float64", x, y)
        noise = fixture = 0.0
        for layer, stats in f32.items():
            for key, values in stats.items():
                exact = np.array(f64[layer][key])
                noise = max(noise, np.max(np.abs(np.array(values) - exact)))
                fixture = max(fixture, np.max(np.abs(
                    np.array(written[name]["moving_stats"][layer][key]) - exact)))
        print(f"{name}: Keras float32 vs float64 moving statistics, max abs "
              f"difference {noise:.3g} (the fixture's: {fixture:.3g})")
        record[name] = {
            "keras_f32_error": float(max(noise, fixture)),
            "moving_stats": {layer: {key: np.asarray(v, np.float64).ravel().tolist()
                                     for key, v in stats.items()}
                             for layer, stats in f64.items()}}
    with open(os.path.join(FIXTURES, "batchnorm_f64.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
