#!/usr/bin/env python3
#===- make_specs.py - Keras specs of the benchmark-only models ------------===#
#
# Writes benchmarks/peers/specs/{mlp_small,mlp_gemm}.json with real Keras 3
# (model.to_json() plus compile_config, the shape of examples/mlp.json), so
# that `kcc bench` reads the same models the peers build. The reference MLP
# and CNN are examples/mlp.json and examples/cnn.json. The outputs are
# committed; rerun only when models.py changes:
#
#   KERAS_BACKEND=jax /tmp/kerasvenv/bin/python benchmarks/peers/make_specs.py
#
#===----------------------------------------------------------------------===#

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras  # noqa: E402

import models  # noqa: E402


def build(name):
    m = models.MODELS[name]
    layers = [keras.Input(shape=m["input"])]
    for layer in m["layers"]:
        assert layer[0] == "dense", "only Dense models are generated here"
        layers.append(keras.layers.Dense(layer[1], activation=layer[2]))
    model = keras.Sequential(layers, name=name)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3, epsilon=1e-7),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=m["from_logits"]),
        metrics=["accuracy"])
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("mlp_small", "mlp_gemm"):
        keras.backend.clear_session()  # unsuffixed layer names
        model = build(name)
        spec = json.loads(model.to_json())
        spec["compile_config"] = model.get_compile_config()
        path = os.path.join(here, "specs", f"{name}.json")
        with open(path, "w") as f:
            json.dump(spec, f)
            f.write("\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
