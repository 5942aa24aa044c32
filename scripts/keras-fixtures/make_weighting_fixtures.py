#!/usr/bin/env python3
"""Regenerates kcc's weighting fixtures (tests/fixtures/keras/weighting).

Keras itself compiles a small Dense model (784-8-10, softmax, Adam at 1e-2,
sparse_categorical_crossentropy, metrics=["accuracy"]), saves it as .keras
(initial weights and compile_config), then trains 5 `train_on_batch` steps
on the batch make_fixtures.py uses (the first 32 Fashion-MNIST training
images, the same batch each step), once per case:

  class_weight   train_on_batch(x, y, class_weight=CLASS_WEIGHT)
  sample_weight  train_on_batch(x, y, sample_weight=SAMPLE_WEIGHT)

weighting.json records, per case, the weights given and each step's loss
and accuracy (before its update), as Keras reports them: the loss reduced
with reduce_weighted_values ("sum_over_batch_size": sum(loss_i * w_i) /
batch); the accuracy unweighted, since Keras 3 weights only
weighted_metrics, not compile()'s metrics.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_weighting_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, STEPS, batch, fresh_session  # noqa: E402
from make_optimizer_fixtures import small_mlp  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

WEIGHT_OUT = os.path.join(OUT, "weighting")

# Classes 1 and 3 count more, 2 less, 9 not at all; the rest weigh 1.
CLASS_WEIGHT = {0: 1.0, 1: 5.0, 2: 0.5, 3: 2.0, 9: 0.0}
# A ramp with two zeros: every example counts differently.
SAMPLE_WEIGHT = np.linspace(0.1, 3.2, BATCH).astype(np.float32)
SAMPLE_WEIGHT[[4, 17]] = 0.0


def record(name, x, y, **weighting):
    fresh_session()
    model = small_mlp()
    optimizer = keras.optimizers.Adam(learning_rate=1e-2)
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])
    model.save(os.path.join(WEIGHT_OUT, name + ".keras"))
    losses, accuracies = [], []
    for _ in range(STEPS):
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True, **weighting)
        losses.append(float(logs["loss"]))
        accuracies.append(float(logs["accuracy"]))
    return {"step_losses": losses, "step_accuracies": accuracies}


def main():
    os.makedirs(WEIGHT_OUT, exist_ok=True)
    _, x, y = batch()
    cases = {
        "class_weight": dict(record("class_weight", x, y,
                                    class_weight=CLASS_WEIGHT),
                             class_weight={str(k): v for k, v in
                                           CLASS_WEIGHT.items()}),
        "sample_weight": dict(record("sample_weight", x, y,
                                     sample_weight=SAMPLE_WEIGHT),
                              sample_weight=[float(w) for w in
                                             SAMPLE_WEIGHT]),
    }
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": "training.json's: the first %d Fashion-MNIST training "
                 "images, pixels / 255, the same batch each step" % BATCH,
        "model": "784-8-10 Dense (relu, softmax), Adam(1e-2), "
                 "sparse_categorical_crossentropy, accuracy",
        "steps": STEPS,
        "cases": cases,
    }
    for name, case in cases.items():
        print(name, case["step_losses"], case["step_accuracies"])
    with open(os.path.join(WEIGHT_OUT, "weighting.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
