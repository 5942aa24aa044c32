#!/usr/bin/env python3
"""Regenerates kcc's fixtures of Keras-written optimizer state
(tests/fixtures/keras/resume).

For each optimizer (Adam, SGD with momentum, RMSprop), Keras itself builds
a small MLP (784 -> Dense 8 relu -> Dense 10 softmax), trains 3
`train_on_batch` steps on the batch make_fixtures.py uses (the first 32
Fashion-MNIST training images, flattened), saves resume_<name>.keras (its
model.weights.h5 holds the optimizer's variables: iterations, learning_rate
and the slots), then trains 5 more steps on the same batch. resume.json
records those 5 losses: a resumed kcc must reproduce them.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_resume_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, STEPS, batch, fresh_session  # noqa: E402

import keras  # noqa: E402

RESUME = os.path.join(OUT, "resume")
BEFORE = 3

OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(learning_rate=1e-2),
    "sgd_momentum": lambda: keras.optimizers.SGD(learning_rate=0.05,
                                                 momentum=0.9),
    "rmsprop": lambda: keras.optimizers.RMSprop(learning_rate=1e-2),
}


def main():
    os.makedirs(RESUME, exist_ok=True)
    _, x, y = batch()
    x = x.reshape(BATCH, 784)
    out = {"keras_version": keras.__version__,
           "backend": keras.backend.backend(),
           "steps_before_save": BEFORE, "steps_after": STEPS}
    for name, make in OPTIMIZERS.items():
        fresh_session()
        model = keras.Sequential([
            keras.Input((784,)),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ], name="resume_" + name)
        model.compile(optimizer=make(), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        before = [float(model.train_on_batch(x, y)[0]) for _ in range(BEFORE)]
        model.save(os.path.join(RESUME, "resume_%s.keras" % name))
        after = []
        for _ in range(STEPS):
            model.reset_metrics()
            after.append(float(model.train_on_batch(x, y)[0]))
        out[name] = {"losses_before_save": before, "losses_after": after,
                     "iterations_at_save": BEFORE}
        print(name, before, after)
    with open(os.path.join(RESUME, "resume.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
