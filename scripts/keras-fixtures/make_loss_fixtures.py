#!/usr/bin/env python3
"""Regenerates kcc's loss fixtures (tests/fixtures/keras/losses).

values.json: Keras 3 itself evaluates each loss of keras.losses (one case
per argument that changes its numerics: label smoothing, logits, focal
gamma/alpha, ignore_class, axes, reductions, sample weights) in float64 on
a fixed 4x3 prediction and target. kcc's unit test builds the same loss from
the case's `kcc` text form (LossConfig::parse), compares the value and
checks its gradient against central differences.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_loss_fixtures.py
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import keras  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import OUT  # noqa: E402

LOSS_OUT = os.path.join(OUT, "losses")

RNG = np.random.default_rng(37)
SHAPE = (4, 3)


def unit_rows():
    """Rows of norm 1 (drawn after the other inputs, which stay as they
    were)."""
    rows = RNG.normal(size=SHAPE)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def inputs():
    """Predictions and targets by kind, away from clips and kinks."""
    logits = RNG.uniform(-2.5, 2.5, SHAPE)
    probs = RNG.uniform(0.05, 0.95, SHAPE)
    soft = RNG.uniform(0.1, 1.0, SHAPE)
    soft /= soft.sum(axis=-1, keepdims=True)
    labels = np.array([0, 1, 2, 1])
    return {
        "logits": logits,
        "probs": probs,
        "positive": RNG.uniform(0.2, 2.0, SHAPE),
        "counts": RNG.uniform(0.0, 3.0, SHAPE),
        "real": RNG.uniform(-2.0, 2.0, SHAPE),
        "soft": soft,
        "onehot": np.eye(3)[labels],
        "labels": labels,
        "binary": np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0]],
                           dtype=np.float64),
        "signed": np.array([[1, -1, 1], [-1, -1, 1], [1, 1, -1],
                            [-1, 1, -1]], dtype=np.float64),
        # Circle's: L2-normalized embeddings, and groups in which every
        # example has a positive and a negative pair.
        "unit": unit_rows(),
        "groups": np.array([0, 1, 0, 1]),
    }


WEIGHTS = [0.5, 1.0, 2.0, 0.0]

# name, kcc text form, Keras class, its config, prediction, target, weighted
CASES = [
    ("scce", "sparse_categorical_crossentropy",
     "SparseCategoricalCrossentropy", {}, "probs", "labels", False),
    ("scce_logits_weighted",
     "sparse_categorical_crossentropy(from_logits=true)",
     "SparseCategoricalCrossentropy", {"from_logits": True}, "logits",
     "labels", True),
    ("scce_ignore", "sparse_categorical_crossentropy(from_logits=true,"
     "ignore_class=1)", "SparseCategoricalCrossentropy",
     {"from_logits": True, "ignore_class": 1}, "logits", "labels", False),
    ("scce_ignore_sum_weighted", "sparse_categorical_crossentropy("
     "ignore_class=1,reduction=sum)", "SparseCategoricalCrossentropy",
     {"ignore_class": 1, "reduction": "sum"}, "probs", "labels", True),
    ("cce_smoothing", "categorical_crossentropy(label_smoothing=0.1)",
     "CategoricalCrossentropy", {"label_smoothing": 0.1}, "probs", "onehot",
     False),
    ("cce_logits_smoothing_weighted",
     "categorical_crossentropy(from_logits=true,label_smoothing=0.2)",
     "CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.2},
     "logits", "soft", True),
    ("cce_logits_axis0", "categorical_crossentropy(from_logits=true,axis=0)",
     "CategoricalCrossentropy", {"from_logits": True, "axis": 0}, "logits",
     "soft", False),
    ("bce_smoothing", "binary_crossentropy(label_smoothing=0.1)",
     "BinaryCrossentropy", {"label_smoothing": 0.1}, "probs", "binary", False),
    ("bce_logits_sum_weighted",
     "binary_crossentropy(from_logits=true,reduction=sum)",
     "BinaryCrossentropy", {"from_logits": True, "reduction": "sum"},
     "logits", "binary", True),
    ("binary_focal", "binary_focal_crossentropy", "BinaryFocalCrossentropy",
     {}, "probs", "binary", False),
    ("binary_focal_balanced_logits",
     "binary_focal_crossentropy(apply_class_balancing=true,alpha=0.3,"
     "gamma=1.5,from_logits=true,label_smoothing=0.05)",
     "BinaryFocalCrossentropy",
     {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5,
      "from_logits": True, "label_smoothing": 0.05}, "logits", "binary", True),
    ("categorical_focal", "categorical_focal_crossentropy",
     "CategoricalFocalCrossentropy", {}, "probs", "onehot", False),
    ("categorical_focal_logits",
     "categorical_focal_crossentropy(alpha=0.4,gamma=3,from_logits=true,"
     "label_smoothing=0.1)", "CategoricalFocalCrossentropy",
     {"alpha": 0.4, "gamma": 3.0, "from_logits": True,
      "label_smoothing": 0.1}, "logits", "soft", True),
    ("mse_mean_with_sample_weight",
     "mse(reduction=mean_with_sample_weight)", "MeanSquaredError",
     {"reduction": "mean_with_sample_weight"}, "logits", "real", True),
    ("mae", "mae", "MeanAbsoluteError", {}, "logits", "real", False),
    ("mae_weighted", "mae", "MeanAbsoluteError", {}, "logits", "real", True),
    ("mape", "mape", "MeanAbsolutePercentageError", {}, "logits", "real",
     False),
    ("msle", "msle", "MeanSquaredLogarithmicError", {}, "positive",
     "counts", True),
    ("huber", "huber", "Huber", {}, "logits", "real", False),
    ("huber_delta", "huber(delta=0.7)", "Huber", {"delta": 0.7}, "logits",
     "real", True),
    ("log_cosh", "log_cosh", "LogCosh", {}, "logits", "real", True),
    ("poisson", "poisson", "Poisson", {}, "positive", "counts", False),
    ("kld", "kld", "KLDivergence", {}, "probs", "soft", True),
    ("cosine", "cosine_similarity", "CosineSimilarity", {}, "logits", "real",
     True),
    ("cosine_axis0", "cosine_similarity(axis=0)", "CosineSimilarity",
     {"axis": 0}, "logits", "real", False),
    ("hinge_binary", "hinge", "Hinge", {}, "logits", "binary", False),
    ("hinge_signed", "hinge", "Hinge", {}, "logits", "signed", True),
    ("squared_hinge", "squared_hinge", "SquaredHinge", {}, "logits",
     "binary", True),
    ("categorical_hinge", "categorical_hinge", "CategoricalHinge", {},
     "logits", "onehot", True),
    ("dice", "dice", "Dice", {}, "probs", "binary", False),
    ("dice_weighted", "dice", "Dice", {}, "probs", "binary", True),
    ("dice_axis1", "dice(axis=1)", "Dice", {"axis": 1}, "probs", "binary",
     True),
    ("tversky", "tversky(alpha=0.3,beta=0.7)", "Tversky",
     {"alpha": 0.3, "beta": 0.7}, "probs", "binary", False),
    ("tversky_axis1_sum", "tversky(axis=1,reduction=sum)", "Tversky",
     {"axis": 1, "reduction": "sum"}, "probs", "binary", True),
    ("gce", "categorical_generalized_cross_entropy",
     "CategoricalGeneralizedCrossEntropy", {}, "probs", "labels", False),
    ("gce_q_sum_weighted",
     "categorical_generalized_cross_entropy(q=0.2,reduction=sum)",
     "CategoricalGeneralizedCrossEntropy", {"q": 0.2, "reduction": "sum"},
     "probs", "labels", True),
    ("circle", "circle", "Circle", {}, "unit", "groups", False),
    ("circle_args_weighted",
     "circle(gamma=10,margin=0.25,reduction=mean_with_sample_weight)",
     "Circle", {"gamma": 10.0, "margin": 0.25,
                "reduction": "mean_with_sample_weight"},
     "unit", "groups", True),
    # Examples 0 and 2 have no positive pair: Keras masks their values.
    ("circle_masked_weighted", "circle(gamma=30)", "Circle", {"gamma": 30.0},
     "unit", "labels", True),
]


def main():
    os.makedirs(LOSS_OUT, exist_ok=True)
    keras.config.set_floatx("float64")
    data = inputs()
    cases = []
    for name, kcc, cls, config, pred, target, weighted in CASES:
        loss = getattr(keras.losses, cls)(**config)
        y_pred = data[pred]
        y_true = data[target]
        weights = np.array(WEIGHTS) if weighted else None
        value = float(loss(y_true, y_pred, sample_weight=weights))
        cases.append({
            "name": name,
            "kcc": kcc,
            "keras": keras.saving.serialize_keras_object(loss),
            "pred": y_pred.ravel().tolist(),
            "target": np.asarray(y_true, dtype=np.float64).ravel().tolist(),
            "sparse": target in ("labels", "groups"),
            "weights": WEIGHTS if weighted else None,
            "value": value,
        })
        print("%-32s %.12g" % (name, value))
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "dtype": "float64",
        "shape": list(SHAPE),
        "cases": cases,
    }
    with open(os.path.join(LOSS_OUT, "values.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
