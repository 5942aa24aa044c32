#!/usr/bin/env python3
"""Regenerates tests/fixtures/keras/continue: what `kcc train saved.keras`
must reproduce of Keras's load_model + fit.

For Adam, SGD with momentum, Adam with AMSGrad and centered RMSprop with
momentum (their extra slots: velocity_hat, average_gradient), Keras builds a small MLP (784 -> Dense 8
relu -> Dense 10 softmax), fits it 3 epochs of one step each on the batch
make_fixtures.py uses (the first 32 Fashion-MNIST training images, pixels /
255, flattened), and saves continue_<name>.keras with its optimizer (3
iterations). Then keras.models.load_model reads the archive back and fit()
trains it 3 more epochs on the same batch, as a user continuing a saved
model would: the optimizer's slots and iteration count carry on, the epochs
count from 0. continue.json records those 3 epochs' losses and the outputs
of the continued model on the first 4 examples.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/make_continue_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import BATCH, OUT, batch, fresh_session  # noqa: E402

import keras  # noqa: E402

CONTINUE = os.path.join(OUT, "continue")
EPOCHS = 3

OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(learning_rate=1e-2),
    "sgd_momentum": lambda: keras.optimizers.SGD(learning_rate=0.05,
                                                 momentum=0.9),
    # beta_2 0.5: v follows the last gradients, so it falls, and the
    # maximum AMSGrad divides by departs from it within 6 steps.
    "adam_amsgrad": lambda: keras.optimizers.Adam(
        learning_rate=1e-2, beta_2=0.5, amsgrad=True),
    "rmsprop_centered": lambda: keras.optimizers.RMSprop(
        learning_rate=1e-2, momentum=0.5, centered=True),
}


def main():
    os.makedirs(CONTINUE, exist_ok=True)
    _, x, y = batch()
    x = x.reshape(BATCH, 784)
    out = {"keras_version": keras.__version__,
           "backend": keras.backend.backend(), "epochs": EPOCHS}
    for name, make in OPTIMIZERS.items():
        fresh_session()
        model = keras.Sequential([
            keras.Input((784,)),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ], name="continue_" + name)
        model.compile(optimizer=make(), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False,
                  verbose=0)
        path = os.path.join(CONTINUE, "continue_%s.keras" % name)
        model.save(path)
        loaded = keras.models.load_model(path)
        history = loaded.fit(x, y, batch_size=BATCH, epochs=EPOCHS,
                             shuffle=False, verbose=0)
        out[name] = {
            "iterations_at_save": int(model.optimizer.iterations.numpy()),
            "iterations_after": int(loaded.optimizer.iterations.numpy()),
            "losses": [float(v) for v in history.history["loss"]],
            "outputs": [[float(v) for v in row]
                        for row in loaded.predict(x[:4], verbose=0)],
        }
    with open(os.path.join(CONTINUE, "continue.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
