#!/usr/bin/env python3
"""Regenerates kcc's fit/evaluate fixtures of several inputs and outputs
(tests/fixtures/keras/multi/fit*).

Keras itself loads make_multi_fixtures.py's two models (multi_output.keras:
one input, heads "class" and "value" with loss_weights; two_inputs_adam.keras:
inputs "image" and "pixels") from their initial weights and runs
`model.fit(...)` with shuffle=False on the batch make_fixtures.py uses (the
first 32 Fashion-MNIST training images): the first 24 train (batch 10: two
full batches and a partial one of 4), the last 8 validate. The data go to
.npz archives in Keras's dict form, keyed by layer name:

  fit_multi_train.npz  image, class (int32 labels), value (label / 9, [n, 1])
  fit_multi_val.npz    the same for the 8 validation examples, and their
                       sample_weight
  fit_multi_all.npz    the same for all 32 (validation_split's run)
  fit_two_train.npz    image, pixels (the same examples flattened), label
  fit_two_val.npz      the same for validation (with sample_weight)

fit.json records each run's History (every epoch's loss, per-output losses,
metrics and val_ logs under Keras's names) and Keras's model.evaluate on the
validation archives from the initial weights (weighted by their
sample_weight, as evaluate(x, y, sample_weight) weighs them):

  multi_plain        fit 2 epochs, validation_data=(x, y, sample_weight)
  multi_weighted     fit 2 epochs on all 32 with sample_weight (one array for
                     both outputs) and validation_split=0.25 (the weights
                     split with the examples: both parts are weighted)
  two_inputs         fit 2 epochs, validation_data=(x, y, sample_weight)

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_fit_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, batch, fresh_session  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

MULTI = os.path.join(OUT, "multi")
TRAIN = 24
FIT_BATCH = 10
EPOCHS = 2


def load(name):
    fresh_session()
    return keras.saving.load_model(os.path.join(MULTI, name + ".keras"))


def history(h):
    return {k: [float(v) for v in vs] for k, vs in h.history.items()}


def evaluate(name, x, y, w):
    model = load(name)
    logs = model.evaluate(x, y, sample_weight=w, batch_size=FIT_BATCH,
                          verbose=0, return_dict=True)
    return {k: float(v) for k, v in logs.items()}


def main():
    _, x, labels = batch()
    value = (labels.astype(np.float32) / 9.0).reshape(BATCH, 1)
    # Deterministic weights in [0.25, 2]: every example counts differently.
    weight = (0.25 + 1.75 * ((np.arange(BATCH) * 7) % 11) / 10.0).astype(
        np.float32)
    pixels = x.reshape(BATCH, 784)
    tr, va = slice(0, TRAIN), slice(TRAIN, BATCH)

    np.savez_compressed(os.path.join(MULTI, "fit_multi_train.npz"),
                        image=x[tr], **{"class": labels[tr]}, value=value[tr])
    np.savez_compressed(os.path.join(MULTI, "fit_multi_val.npz"),
                        image=x[va], **{"class": labels[va]}, value=value[va],
                        sample_weight=weight[va])
    np.savez_compressed(os.path.join(MULTI, "fit_multi_all.npz"),
                        image=x, **{"class": labels}, value=value,
                        sample_weight=weight)
    np.savez_compressed(os.path.join(MULTI, "fit_two_train.npz"),
                        image=x[tr], pixels=pixels[tr], label=labels[tr])
    np.savez_compressed(os.path.join(MULTI, "fit_two_val.npz"),
                        image=x[va], pixels=pixels[va], label=labels[va],
                        sample_weight=weight[va])

    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch_size": FIT_BATCH,
        "epochs": EPOCHS,
        "train_examples": TRAIN,
        "validation_examples": BATCH - TRAIN,
    }

    # The model's outputs are a list ([class, value]): so are its targets.
    def multi_y(s):
        return [labels[s], value[s]]

    model = load("multi_output")
    out["multi_plain"] = history(model.fit(
        {"image": x[tr]}, multi_y(tr), batch_size=FIT_BATCH, epochs=EPOCHS,
        shuffle=False, verbose=0,
        validation_data=({"image": x[va]}, multi_y(va), weight[va])))

    model = load("multi_output")
    out["multi_weighted"] = history(model.fit(
        {"image": x}, multi_y(slice(0, BATCH)), sample_weight=weight,
        batch_size=FIT_BATCH, epochs=EPOCHS, shuffle=False, verbose=0,
        validation_split=0.25))

    model = load("two_inputs_adam")
    out["two_inputs"] = history(model.fit(
        {"image": x[tr], "pixels": pixels[tr]}, labels[tr],
        batch_size=FIT_BATCH, epochs=EPOCHS, shuffle=False, verbose=0,
        validation_data=({"image": x[va], "pixels": pixels[va]}, labels[va],
                         weight[va])))

    out["evaluate_multi"] = evaluate("multi_output", {"image": x[va]},
                                     multi_y(va), weight[va])
    out["evaluate_two"] = evaluate("two_inputs_adam",
                                   {"image": x[va], "pixels": pixels[va]},
                                   labels[va], weight[va])
    for k in ("multi_plain", "multi_weighted", "two_inputs", "evaluate_multi",
              "evaluate_two"):
        print(k, out[k])
    with open(os.path.join(MULTI, "fit.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
