#!/usr/bin/env python3
"""Regenerates kcc's stateful metric fixtures
(tests/fixtures/keras/metrics/stateful).

Keras's stateful metrics (Precision, Recall, the confusion counts, AUC,
the *At* metrics, F1Score/FBetaScore, the IoU family, R2Score,
RootMeanSquaredError) and the top-k accuracies with k != 5 accumulate
variables over an epoch and compute their value from them. Per case Keras
compiles a small Dense model (Adam at 1e-2) with a group of them (metric
objects with arguments and instance names, as compile_config records
them), saves it as <case>.keras (initial weights included), then fits it
for EPOCHS epochs on TRAIN synthetic examples in batches of BATCH (no
shuffle; the last batch partial) with VAL validation examples (validated in
batches of BATCH too). fit.json records the data and Keras's history: every
metric, train and val, each epoch; "multi" a model of two outputs, each
with its own stateful metrics (logged as <output>_<metric>).

formulas.json records, per metric configuration, the value Keras computes
on fixed arrays with one update_state (and with two, the arrays split in
halves), including edge cases: no positives (divide_no_nan gives 0),
predictions exactly at a threshold, a class absent from the IoU matrix.

vector/ holds the metrics whose value is a list (Keras logs a numpy
array): the counts, Precision and Recall with several thresholds,
F1Score/FBetaScore with average=None, R2Score with class_aggregation=None.
Per case <case>.keras (compiled, initial weights), <case>_train.npz and
<case>_val.npz (x, y), and in vector.json Keras's evaluate(return_dict=True)
of the saved model on the validation data and its history of EPOCHS_VEC
epochs of fit on the one training batch, validated on the other (each list
element as a float); "formulas" the list metrics' arrays on formulas.json's
arrays, with one update_state and with two.

Run from the throwaway virtualenv make_fixtures.py describes (`vector`
writes vector/ alone):

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_stateful_metric_fixtures.py [vector]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import OUT, fresh_session  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

STATEFUL_OUT = os.path.join(OUT, "metrics", "stateful")
TRAIN, VAL, BATCH, EPOCHS = 80, 44, 32, 3
FEATURES, CLASSES = 6, 4
M = keras.metrics


def data():
    rng = np.random.default_rng(4242)
    n = TRAIN + VAL
    x = rng.uniform(-1, 1, (n, FEATURES)).astype(np.float32)
    # Targets that depend on x, so the metrics move while the model learns.
    w = rng.normal(size=(FEATURES, CLASSES)).astype(np.float32)
    scores = x @ w + 0.5 * rng.normal(size=(n, CLASSES)).astype(np.float32)
    labels = scores.argmax(-1).astype(np.int32)
    binary = (scores[:, :1] > 0.3).astype(np.float32)
    multi = (scores > 0.2).astype(np.float32)
    real = (scores[:, :2] + 0.1 * rng.normal(size=(n, 2))).astype(np.float32)
    return {
        "x": x,
        "labels": labels,
        "onehot": np.eye(CLASSES, dtype=np.float32)[labels],
        "binary": binary,
        "multi": multi,
        "real": real,
    }


def model(units, activation):
    return keras.Sequential([
        keras.Input((FEATURES,)),
        keras.layers.Dense(8, activation="tanh"),
        keras.layers.Dense(units, activation=activation),
    ], name="metric_mlp")


# name: (loss, output units, activation, target, metrics)
CASES = {
    "binary": ("binary_crossentropy", 1, "sigmoid", "binary", [
        "accuracy",
        M.Precision(name="precision"),
        M.Recall(name="recall"),
        M.TruePositives(name="tp"),
        M.FalsePositives(name="fp"),
        M.TrueNegatives(name="tn"),
        M.FalseNegatives(name="fn"),
        M.Precision(thresholds=0.3, name="precision_at_0_3"),
        M.Recall(thresholds=0.7, name="recall_at_0_7"),
        M.AUC(name="auc"),
        M.AUC(num_thresholds=50, name="auc_1"),
        M.AUC(curve="PR", name="pr_auc"),
        M.AUC(curve="PR", summation_method="minoring", name="pr_minoring"),
        M.AUC(summation_method="majoring", name="roc_majoring"),
        M.AUC(thresholds=[0.2, 0.5, 0.8], name="auc_given"),
        M.PrecisionAtRecall(0.5, name="p_at_r"),
        M.RecallAtPrecision(0.6, num_thresholds=100, name="r_at_p"),
        M.SensitivityAtSpecificity(0.5, name="sens_at_spec"),
        M.SpecificityAtSensitivity(0.7, name="spec_at_sens"),
        M.BinaryIoU(name="binary_iou"),
        M.BinaryIoU(target_class_ids=[1], threshold=0.4, name="biou_1"),
        M.RootMeanSquaredError(name="rmse"),
    ]),
    "logits": (keras.losses.BinaryCrossentropy(from_logits=True), CLASSES,
               "linear", "multi", [
                   M.AUC(from_logits=True, name="auc_logits"),
                   M.AUC(from_logits=True, multi_label=True,
                         name="auc_multi"),
                   M.AUC(from_logits=True, multi_label=True, curve="PR",
                         name="pr_auc_multi"),
               ]),
    "categorical": ("categorical_crossentropy", CLASSES, "softmax", "onehot", [
        "accuracy",
        M.Precision(top_k=2, name="precision_top_2"),
        M.Recall(top_k=1, name="recall_top_1"),
        M.Recall(class_id=1, name="recall_class_1"),
        M.Precision(class_id=2, thresholds=0.4, name="precision_class_2"),
        M.AUC(multi_label=True, name="auc_multi"),
        M.F1Score(average="macro", name="f1_macro"),
        M.F1Score(average="micro", name="f1_micro"),
        M.FBetaScore(average="weighted", beta=2.0, threshold=0.3,
                     name="f2_weighted"),
        M.OneHotIoU(num_classes=CLASSES, target_class_ids=[0, 2],
                    name="one_hot_iou"),
        M.OneHotMeanIoU(num_classes=CLASSES, name="one_hot_mean_iou"),
        M.MeanIoU(num_classes=CLASSES, sparse_y_true=False,
                  sparse_y_pred=False, name="mean_iou_dense"),
        M.TopKCategoricalAccuracy(k=2, name="top_2"),
        M.SpecificityAtSensitivity(0.5, class_id=3, name="spec_class_3"),
    ]),
    "sparse": ("sparse_categorical_crossentropy", CLASSES, "softmax", "labels",
               [
                   "accuracy",
                   M.MeanIoU(num_classes=CLASSES, sparse_y_pred=False,
                             name="mean_iou"),
                   M.IoU(num_classes=CLASSES, target_class_ids=[1],
                         sparse_y_pred=False, name="iou_1"),
                   M.MeanIoU(num_classes=CLASSES, sparse_y_pred=False,
                             ignore_class=0, name="mean_iou_ignore_0"),
                   M.SparseTopKCategoricalAccuracy(k=2, name="sparse_top_2"),
                   M.SparseTopKCategoricalAccuracy(k=3),
               ]),
    "regression": ("mse", 2, "linear", "real", [
        "mae",
        M.R2Score(name="r2"),
        # num_regressors fails under jax's jit in Keras 3.15 (a Python `if`
        # on a traced count): formulas.json checks it eagerly.
        M.R2Score(class_aggregation="variance_weighted_average",
                  name="r2_weighted"),
        M.RootMeanSquaredError(),
    ]),
}


def multi_output():
    """Two outputs, each with its own stateful metrics (Keras logs them as
    <output>_<metric>)."""
    x = keras.Input((FEATURES,), name="x")
    trunk = keras.layers.Dense(8, activation="tanh", name="trunk")(x)
    label = keras.layers.Dense(CLASSES, activation="softmax",
                               name="class")(trunk)
    flag = keras.layers.Dense(1, activation="sigmoid", name="flag")(trunk)
    model = keras.Model(x, [label, flag], name="multi_metric")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss={"class": "sparse_categorical_crossentropy",
                        "flag": "binary_crossentropy"},
                  loss_weights={"class": 1.0, "flag": 0.5},
                  metrics={"class": [
                      "accuracy",
                      M.MeanIoU(num_classes=CLASSES, sparse_y_pred=False,
                                name="miou")],
                      "flag": [M.AUC(name="auc"), M.Precision(name="p"),
                               M.RootMeanSquaredError(name="rmse")]})
    return model


def fit_multi(d):
    fresh_session()
    m = multi_output()
    m.save(os.path.join(STATEFUL_OUT, "multi.keras"))
    x = d["x"]
    ys = [d["labels"], d["binary"]]
    history = m.fit(x[:TRAIN], [y[:TRAIN] for y in ys], batch_size=BATCH,
                    epochs=EPOCHS, shuffle=False, verbose=0,
                    validation_data=(x[TRAIN:], [y[TRAIN:] for y in ys]))
    case = {"targets": ["labels", "binary"],
            "history": {k: [float(v) for v in vs]
                        for k, vs in history.history.items()}}
    print("multi", {k: v[-1] for k, v in case["history"].items()})
    return case


def fit_cases(d):
    cases = {}
    x = d["x"]
    for name, (loss, units, activation, target, metrics) in CASES.items():
        fresh_session()
        m = model(units, activation)
        m.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss=loss, metrics=metrics)
        m.save(os.path.join(STATEFUL_OUT, name + ".keras"))
        y = d[target]
        history = m.fit(x[:TRAIN], y[:TRAIN], batch_size=BATCH,
                        epochs=EPOCHS, shuffle=False, verbose=0,
                        validation_data=(x[TRAIN:], y[TRAIN:]))
        cases[name] = {
            "target": target,
            "history": {k: [float(v) for v in vs]
                        for k, vs in history.history.items()},
        }
        print(name, {k: v[-1] for k, v in cases[name]["history"].items()})
    return cases


def formula_arrays():
    """The fixed arrays formulas.json records."""
    rng = np.random.default_rng(99)
    probs = rng.uniform(0, 1, (12, 3)).astype(np.float32)
    # Predictions exactly at thresholds 0.5, 0.3, 1/3 (AUC's bucket
    # boundary for num_thresholds=4) and the ends.
    probs[0] = [0.5, 0.3, np.float32(1 / 3)]
    probs[1] = [0.0, 1.0, 0.7]
    # Ties: top_k picks the lower index first.
    probs[2] = [0.6, 0.6, 0.6]
    probs[3] = [0.2, 0.9, 0.9]
    labels = rng.integers(0, 2, (12, 3)).astype(np.float32)
    classes = rng.integers(0, 3, 12).astype(np.int32)
    onehot = np.eye(3, dtype=np.float32)[classes]
    real = rng.normal(size=(12, 3)).astype(np.float32)
    real_pred = (real + 0.3 * rng.normal(size=(12, 3))).astype(np.float32)
    return {"probs": probs, "labels": labels, "classes": classes,
            "onehot": onehot, "zeros": np.zeros_like(labels),
            "real": real, "real_pred": real_pred}


def metric_record(metric, yt, yp, arrays, value):
    """`metric`'s config and its value (by `value`) on arrays[yt], arrays[yp]
    with one update_state and with two (the rows split 5 and 7)."""
    metric.update_state(arrays[yt], arrays[yp])
    once = value(metric.result())
    metric.reset_state()
    metric.update_state(arrays[yt][:5], arrays[yp][:5])
    metric.update_state(arrays[yt][5:], arrays[yp][5:])
    twice = value(metric.result())
    config = metric.get_config()
    config.pop("dtype", None)
    return {"class_name": type(metric).__name__,
            "config": {k: (np.asarray(v).tolist()
                           if hasattr(v, "shape") else v)
                       for k, v in config.items()},
            "y_true": yt, "y_pred": yp,
            "one_update": once, "two_updates": twice}


def formula_cases():
    """Each metric's value on fixed arrays, one update and two."""
    arrays = formula_arrays()
    # name: (metric, y_true array, y_pred array)
    specs = {
        "precision": (M.Precision(), "labels", "probs"),
        "precision_t03": (M.Precision(thresholds=0.3), "labels", "probs"),
        "precision_no_positives": (M.Precision(thresholds=0.99999), "labels",
                                   "zeros"),
        "recall_no_positives": (M.Recall(), "zeros", "probs"),
        "recall_t05": (M.Recall(thresholds=0.5), "labels", "probs"),
        "precision_top_1": (M.Precision(top_k=1), "labels", "probs"),
        "recall_top_2": (M.Recall(top_k=2), "labels", "probs"),
        "precision_top_2_class_1": (M.Precision(top_k=2, class_id=1),
                                    "labels", "probs"),
        "recall_class_2": (M.Recall(class_id=2), "labels", "probs"),
        "tp": (M.TruePositives(), "labels", "probs"),
        "fp_t03": (M.FalsePositives(thresholds=0.3), "labels", "probs"),
        "tn": (M.TrueNegatives(), "labels", "probs"),
        "fn_t05": (M.FalseNegatives(thresholds=0.5),
                    "labels", "probs"),
        "auc": (M.AUC(), "labels", "probs"),
        "auc_4": (M.AUC(num_thresholds=4), "labels", "probs"),
        "auc_pr": (M.AUC(curve="PR"), "labels", "probs"),
        "auc_pr_majoring": (M.AUC(curve="PR", summation_method="majoring"),
                            "labels", "probs"),
        "auc_roc_minoring": (M.AUC(summation_method="minoring"), "labels",
                             "probs"),
        "auc_given": (M.AUC(thresholds=[0.3, 0.5]), "labels", "probs"),
        "auc_multi": (M.AUC(multi_label=True), "labels", "probs"),
        "auc_no_positives": (M.AUC(), "zeros", "probs"),
        "auc_label_weights": (M.AUC(label_weights=[0.2, 1.0, 2.0]), "labels",
                              "probs"),
        "auc_multi_label_weights": (M.AUC(multi_label=True, curve="PR",
                                          label_weights=[0.5, 0.0, 3.0]),
                                    "labels", "probs"),
        "auc_prgain": (M.AUC(curve="PRGAIN", num_thresholds=20), "labels",
                       "probs"),
        "p_at_r": (M.PrecisionAtRecall(0.4, num_thresholds=10), "labels",
                   "probs"),
        "r_at_p": (M.RecallAtPrecision(0.5), "labels", "probs"),
        "sens_at_spec": (M.SensitivityAtSpecificity(0.5), "labels", "probs"),
        "spec_at_sens": (M.SpecificityAtSensitivity(0.5, num_thresholds=1),
                         "labels", "probs"),
        "f1_macro": (M.F1Score(average="macro"), "onehot", "probs"),
        "f1_micro_t05": (M.F1Score(average="micro", threshold=0.5), "labels",
                         "probs"),
        "fbeta_weighted": (M.FBetaScore(average="weighted", beta=0.5),
                           "onehot", "probs"),
        "mean_iou": (M.MeanIoU(3, sparse_y_pred=False), "classes", "probs"),
        "iou_ignore": (M.IoU(3, [0, 2], ignore_class=1, sparse_y_pred=False),
                       "classes", "probs"),
        "one_hot_mean_iou": (M.OneHotMeanIoU(3), "onehot", "probs"),
        "binary_iou": (M.BinaryIoU(threshold=0.5), "labels", "probs"),
        "binary_iou_absent": (M.BinaryIoU(target_class_ids=[1]), "zeros",
                              "zeros"),
        "r2": (M.R2Score(), "real", "real_pred"),
        "r2_weighted": (M.R2Score(class_aggregation="variance_weighted_average",
                                  num_regressors=3), "real", "real_pred"),
        "rmse": (M.RootMeanSquaredError(), "real", "real_pred"),
        "top_2": (M.TopKCategoricalAccuracy(k=2), "onehot", "probs"),
        "sparse_top_1": (M.SparseTopKCategoricalAccuracy(k=1), "classes",
                         "probs"),
    }
    out = {name: metric_record(metric, yt, yp, arrays, float)
           for name, (metric, yt, yp) in specs.items()}
    return {"arrays": {k: {"shape": list(v.shape), "values":
                           v.ravel().tolist()} for k, v in arrays.items()},
            "metrics": out}


VECTOR_OUT = os.path.join(STATEFUL_OUT, "vector")
VEC_TRAIN, VEC_VAL, EPOCHS_VEC = 16, 12, 5
THRESHOLDS = [0.3, 0.5, 0.7]

# name: (loss, output units, activation, target, metrics)
VECTOR_CASES = {
    "thresholds": ("binary_crossentropy", 1, "sigmoid", "binary", [
        "accuracy",
        M.Precision(thresholds=THRESHOLDS),
        M.Recall(thresholds=THRESHOLDS),
        M.TruePositives(thresholds=THRESHOLDS),
        M.FalseNegatives(thresholds=[0.2, 0.6], name="fn"),
        M.Precision(thresholds=[0.5], name="precision_one"),
    ]),
    "classes": ("categorical_crossentropy", CLASSES, "softmax", "onehot", [
        "accuracy",
        M.F1Score(average=None),
        M.FBetaScore(average=None, beta=2.0),
        M.F1Score(average=None, threshold=0.3, name="f1_at_0_3"),
    ]),
    "columns": ("mse", 2, "linear", "real", [
        "mae",
        M.R2Score(class_aggregation=None),
    ]),
}


def list_formula_cases():
    """The list metrics on formulas.json's arrays (predictions exactly at
    thresholds, no positives, adjusted R2 per column), one update and two:
    each value an array."""
    arrays = formula_arrays()
    specs = {
        "precision_list": (M.Precision(thresholds=[0.3, 0.5, 0.7]), "labels",
                           "probs"),
        "recall_list": (M.Recall(thresholds=[0.5, 0.3]), "labels", "probs"),
        "tn_list": (M.TrueNegatives(thresholds=[0.0, 0.5, 1.0]), "labels",
                    "probs"),
        "precision_top_2_list": (M.Precision(top_k=2, thresholds=[0.3, 0.6]),
                                 "labels", "probs"),
        "recall_class_1_list": (M.Recall(class_id=1, thresholds=[0.2, 0.8]),
                                "labels", "probs"),
        "fn_no_positives_list": (M.FalseNegatives(thresholds=[0.1, 0.9]),
                                 "zeros", "probs"),
        "f1_none": (M.F1Score(), "onehot", "probs"),
        "fbeta_none_t05": (M.FBetaScore(beta=0.5, threshold=0.5), "onehot",
                           "probs"),
        "f1_none_no_positives": (M.F1Score(), "zeros", "probs"),
        "r2_none": (M.R2Score(class_aggregation=None), "real", "real_pred"),
        "r2_none_adjusted": (M.R2Score(class_aggregation=None,
                                       num_regressors=3), "real",
                             "real_pred"),
    }
    return {name: metric_record(metric, yt, yp, arrays,
                                lambda r: np.asarray(r).astype(float).tolist())
            for name, (metric, yt, yp) in specs.items()}


def listed(value):
    """A log value as JSON: a float, or a list of floats for an array."""
    a = np.asarray(value)
    return a.astype(float).tolist() if a.ndim else float(a)


def vector_cases(d):
    os.makedirs(VECTOR_OUT, exist_ok=True)
    cases = {}
    x = d["x"]
    n = VEC_TRAIN + VEC_VAL
    for name, (loss, units, activation, target, metrics) in \
            VECTOR_CASES.items():
        fresh_session()
        m = model(units, activation)
        m.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                  loss=loss, metrics=metrics)
        m.save(os.path.join(VECTOR_OUT, name + ".keras"))
        y = d[target][:n]
        for part, rows in (("train", slice(0, VEC_TRAIN)),
                           ("val", slice(VEC_TRAIN, n))):
            np.savez(os.path.join(VECTOR_OUT, "%s_%s.npz" % (name, part)),
                     x=x[rows], y=y[rows])
        evaluate = m.evaluate(x[VEC_TRAIN:n], y[VEC_TRAIN:], verbose=0,
                              batch_size=VEC_VAL, return_dict=True)
        history = m.fit(x[:VEC_TRAIN], y[:VEC_TRAIN], batch_size=VEC_TRAIN,
                        epochs=EPOCHS_VEC, shuffle=False, verbose=0,
                        validation_data=(x[VEC_TRAIN:n], y[VEC_TRAIN:]),
                        validation_batch_size=VEC_VAL)
        cases[name] = {
            "target": target,
            "evaluate": {k: listed(v) for k, v in evaluate.items()},
            "history": {k: [listed(v) for v in vs]
                        for k, vs in history.history.items()},
        }
        print(name, {k: v[-1] for k, v in cases[name]["history"].items()})
    with open(os.path.join(VECTOR_OUT, "vector.json"), "w") as f:
        json.dump({"keras_version": keras.__version__,
                   "backend": keras.backend.backend(),
                   "train": VEC_TRAIN, "validation": VEC_VAL,
                   "epochs": EPOCHS_VEC, "cases": cases,
                   "formulas": list_formula_cases()}, f, indent=1)
        f.write("\n")


def main():
    os.makedirs(STATEFUL_OUT, exist_ok=True)
    if sys.argv[1:] == ["vector"]:
        vector_cases(data())
        return
    d = data()
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "model": "6-8-N Dense (tanh, then the case's activation), "
                 "Adam(1e-2)",
        "train": TRAIN,
        "validation": VAL,
        "batch": BATCH,
        "epochs": EPOCHS,
        "data": {k: v.ravel().tolist() for k, v in d.items()},
        "cases": fit_cases(d),
        "multi": fit_multi(d),
    }
    with open(os.path.join(STATEFUL_OUT, "fit.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")
    formulas = formula_cases()
    formulas["keras_version"] = keras.__version__
    with open(os.path.join(STATEFUL_OUT, "formulas.json"), "w") as f:
        json.dump(formulas, f, indent=1)
        f.write("\n")
    vector_cases(d)


if __name__ == "__main__":
    main()
