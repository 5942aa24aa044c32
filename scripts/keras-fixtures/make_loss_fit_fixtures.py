#!/usr/bin/env python3
"""Regenerates kcc's loss training fixtures (tests/fixtures/keras/losses).

Per case Keras compiles a small 6-8-3 Dense model (Adam at 1e-2) with one
loss of keras.losses and its arguments, saves it as losses/<case>.keras
(initial weights and the compile_config with the loss as Keras writes it:
a string, or the Loss object with its config), then fits it for 5 epochs
on one batch of 16 synthetic examples (no shuffle, so each epoch is one
step and its logged loss is the loss before that step's update), and
evaluates it afterwards in batches of 6 (a partial last batch).

fit.json records the batch (x, each target form, the sample weights) and
per case the target form, whether it was weighted, Keras's history and
evaluate()'s loss (and `kcc_loss` where Keras's saved config loses an
argument); five cases also compile the metrics that average a loss function
(or a correlation per example) and record their history and evaluate() values.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_loss_fit_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, STEPS, fresh_session  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

LOSS_OUT = os.path.join(OUT, "losses")
N, FEATURES, CLASSES = 16, 6, 3
EVAL_BATCH = 6


def batch():
    rng = np.random.default_rng(3737)
    x = rng.uniform(-1, 1, (N, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, N).astype(np.int32)
    soft = rng.uniform(0.1, 1, (N, CLASSES))
    soft = (soft / soft.sum(-1, keepdims=True)).astype(np.float32)
    return {
        "x": x,
        "labels": labels,
        "onehot": np.eye(CLASSES, dtype=np.float32)[labels],
        "soft": soft,
        "binary": rng.integers(0, 2, (N, CLASSES)).astype(np.float32),
        "real": rng.uniform(-2, 2, (N, CLASSES)).astype(np.float32),
        "positive": rng.uniform(0.5, 3, (N, CLASSES)).astype(np.float32),
        "weights": rng.uniform(0, 2, N).astype(np.float32),
        # Circle's groups: the labels with the last example alone in its
        # group (no positive pair: Keras masks its value).
        "groups": np.append(labels[:-1], CLASSES + 4).astype(np.int32),
    }


def model(activation):
    # "unit_norm": L2-normalized embeddings, as Circle expects.
    unit = activation == "unit_norm"
    layers = [
        keras.Input((FEATURES,)),
        keras.layers.Dense(8, activation="tanh"),
        keras.layers.Dense(CLASSES, activation="linear" if unit else activation),
    ]
    if unit:
        layers.append(keras.layers.UnitNormalization())
    return keras.Sequential(layers, name="loss_mlp")


L = keras.losses
# name, loss as compile() takes it, output activation, target, weighted
CASES = [
    ("mae", "mae", "linear", "real", False),
    ("mae_sum_weighted", L.MeanAbsoluteError(reduction="sum"), "linear",
     "real", True),
    ("mape", "mape", "linear", "positive", False),
    ("msle", "msle", "softplus", "positive", False),
    ("huber", L.Huber(delta=0.5), "linear", "real", True),
    ("log_cosh", "log_cosh", "linear", "real", False),
    ("poisson", "poisson", "softplus", "positive", False),
    ("kld", "kld", "softmax", "soft", False),
    ("cosine_similarity", L.CosineSimilarity(axis=-1), "linear", "real",
     False),
    ("hinge", "hinge", "linear", "binary", False),
    ("squared_hinge", "squared_hinge", "linear", "binary", True),
    ("categorical_hinge", "categorical_hinge", "linear", "onehot", False),
    ("cce_label_smoothing", L.CategoricalCrossentropy(label_smoothing=0.1),
     "softmax", "onehot", False),
    ("bce_label_smoothing_logits",
     L.BinaryCrossentropy(from_logits=True, label_smoothing=0.2), "linear",
     "binary", False),
    ("scce_ignore_class",
     L.SparseCategoricalCrossentropy(from_logits=True, ignore_class=1),
     "linear", "labels", False),
    ("binary_focal", L.BinaryFocalCrossentropy(
        apply_class_balancing=True, alpha=0.3, gamma=1.5), "sigmoid",
     "binary", False),
    ("binary_focal_logits", L.BinaryFocalCrossentropy(
        gamma=2.5, from_logits=True, label_smoothing=0.1), "linear",
     "binary", True),
    ("categorical_focal", L.CategoricalFocalCrossentropy(alpha=0.4, gamma=3.0),
     "softmax", "onehot", False),
    ("categorical_focal_logits", L.CategoricalFocalCrossentropy(
        from_logits=True, label_smoothing=0.1), "linear", "onehot", False),
    ("dice", L.Dice(), "sigmoid", "binary", False),
    ("dice_axis", L.Dice(axis=1), "sigmoid", "binary", True),
    ("tversky", L.Tversky(alpha=0.3, beta=0.7), "sigmoid", "binary", False),
    ("mse_mean_with_sample_weight",
     L.MeanSquaredError(reduction="mean_with_sample_weight"), "linear",
     "real", True),
    # keras.losses.get knows no "categorical_generalized_cross_entropy".
    ("generalized_cross_entropy", L.CategoricalGeneralizedCrossEntropy(),
     "softmax", "labels", False),
    ("generalized_cross_entropy_q", L.CategoricalGeneralizedCrossEntropy(
        q=0.3, reduction="sum"), "softmax", "labels", True),
    ("circle", "circle", "unit_norm", "labels", False),
    ("circle_args", L.Circle(gamma=20.0, margin=0.25, remove_diagonal=False),
     "unit_norm", "groups", True),
    ("circle_masked", L.Circle(gamma=30.0), "unit_norm", "groups", False),
    ("correlation", "mse", "linear", "real", False),
]


# Keras 3.15's Huber.get_config drops `delta` (the saved compile_config
# reloads as delta=1, in Keras too): the case records the loss it trained
# with in kcc's text form, which the test applies after importing.
KCC_LOSS = {"huber": "huber(delta=0.5)"}


# Metrics that average a loss function, logged by fit and evaluate under
# Keras's names, by case: strings and metric objects.
M = keras.metrics
METRICS = {
    "mae": ["mape", "msle", "cosine_similarity", M.LogCoshError()],
    "kld": ["kl_divergence", "categorical_crossentropy", "poisson",
            M.CategoricalHinge()],
    "binary_focal": ["binary_crossentropy", "hinge", "squared_hinge"],
    "scce_ignore_class": ["sparse_categorical_crossentropy"],
    "correlation": ["pearson_correlation", M.ConcordanceCorrelation(),
                    M.PearsonCorrelation(name="pearson_1")],
}


def main():
    os.makedirs(LOSS_OUT, exist_ok=True)
    data = batch()
    x = data["x"]
    cases = {}
    for name, loss, activation, target, weighted in CASES:
        fresh_session()
        m = model(activation)
        m.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss=loss, metrics=METRICS.get(name))
        m.save(os.path.join(LOSS_OUT, name + ".keras"))
        y = data[target]
        w = data["weights"] if weighted else None
        history = m.fit(x, y, sample_weight=w, batch_size=N, epochs=STEPS,
                        shuffle=False, verbose=0)
        evaluated = m.evaluate(x, y, sample_weight=w, batch_size=EVAL_BATCH,
                               verbose=0, return_dict=True)
        cases[name] = {
            "target": target,
            "weighted": weighted,
            "loss": [float(v) for v in history.history["loss"]],
            "evaluate": float(evaluated["loss"]),
        }
        if name in METRICS:
            cases[name]["metrics"] = {
                k: [float(x) for x in v] for k, v in history.history.items()
                if k != "loss"}
            cases[name]["evaluate_metrics"] = {
                k: float(v) for k, v in evaluated.items() if k != "loss"}
        if name in KCC_LOSS:
            cases[name]["kcc_loss"] = KCC_LOSS[name]
        print(name, cases[name]["loss"][0], cases[name]["loss"][-1])
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "model": "6-8-3 Dense (tanh, then the case's activation), "
                 "Adam(1e-2)",
        "epochs": STEPS,
        "batch": N,
        "evaluate_batch": EVAL_BATCH,
        "data": {k: v.ravel().tolist() for k, v in data.items()},
        "cases": cases,
    }
    with open(os.path.join(LOSS_OUT, "fit.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
