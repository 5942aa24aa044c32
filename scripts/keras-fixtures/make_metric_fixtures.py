#!/usr/bin/env python3
"""Regenerates kcc's metric fixtures (tests/fixtures/keras/metrics).

Keras itself compiles the 784-8-10 model of make_optimizer_fixtures.py
(Adam at 1e-2), once per case, saves it as .keras (initial weights and the
compile_config with the metrics as Keras writes them: strings, or objects
for metric instances), then trains 5 `train_on_batch` steps on the batch
make_fixtures.py uses (the first 32 Fashion-MNIST training images):

  sparse       sparse_categorical_crossentropy;
               metrics ["accuracy", "sparse_top_k_categorical_accuracy"]
  categorical  categorical_crossentropy on one-hot labels;
               metrics ["top_k_categorical_accuracy", "mae",
                        keras.metrics.MeanSquaredError()]

metrics.json records, per case, each step's logs (before its update), and
model.evaluate's logs after the 5 steps on the same batch in batches of 10
(so the last batch is partial: Keras's Mean metrics weigh it by its size).

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_metric_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, STEPS, batch, fresh_session  # noqa: E402
from make_optimizer_fixtures import small_mlp  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

METRIC_OUT = os.path.join(OUT, "metrics")
EVAL_BATCH = 10


def record(name, loss, metrics, x, y, build=small_mlp):
    """Compiles `build()` (Adam at 1e-2), saves it as METRIC_OUT/name.keras,
    and returns its 5 steps' logs and evaluate()'s."""
    fresh_session()
    model = build()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss=loss, metrics=metrics)
    model.save(os.path.join(METRIC_OUT, name + ".keras"))
    steps = []
    for _ in range(STEPS):
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        steps.append({k: float(v) for k, v in logs.items()})
    evaluated = model.evaluate(x, y, batch_size=EVAL_BATCH, verbose=0,
                               return_dict=True)
    return {"steps": steps,
            "evaluate": {k: float(v) for k, v in evaluated.items()}}


def main():
    os.makedirs(METRIC_OUT, exist_ok=True)
    _, x, y = batch()
    one_hot = np.eye(10, dtype=np.float32)[y]
    cases = {
        "sparse": record("sparse", "sparse_categorical_crossentropy",
                         ["accuracy", "sparse_top_k_categorical_accuracy"],
                         x, y),
        "categorical": record("categorical", "categorical_crossentropy",
                              ["top_k_categorical_accuracy", "mae",
                               keras.metrics.MeanSquaredError()],
                              x, one_hot),
    }
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": "training.json's: the first %d Fashion-MNIST training "
                 "images, pixels / 255, the same batch each step; the "
                 "categorical case's labels one-hot" % BATCH,
        "model": "784-8-10 Dense (relu, softmax), Adam(1e-2)",
        "steps": STEPS,
        "evaluate_batch": EVAL_BATCH,
        "cases": cases,
    }
    for name, case in cases.items():
        print(name, case)
    with open(os.path.join(METRIC_OUT, "metrics.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
