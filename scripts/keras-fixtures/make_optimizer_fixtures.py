#!/usr/bin/env python3
"""Regenerates kcc's optimizer fixtures (tests/fixtures/keras/optimizers).

For each optimizer, weight-decay and clipping setting and learning-rate
schedule kcc supports beyond plain Adam, Keras itself compiles a small Dense
model (784-8-10, softmax) with that optimizer, saves it as .keras (initial
weights and the compile_config kcc reads the optimizer from), then trains 5
steps on the batch make_fixtures.py uses (the first 32 Fashion-MNIST training
images, the same batch each step). optimizers.json records, per case, the
loss of each step (before its update), the learning rate each step used, and
checksums of the weights and of the optimizer's variables (in Keras's
`optimizer.variables` order) after the 5 steps.

Run from the throwaway virtualenv make_fixtures.py describes:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \
        scripts/keras-fixtures/make_optimizer_fixtures.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_fixtures import (BATCH, OUT, STEPS, batch, checksums,  # noqa: E402
                           fresh_session)

import keras  # noqa: E402
import numpy as np  # noqa: E402

OPT_OUT = os.path.join(OUT, "optimizers")
opt = keras.optimizers
sched = keras.optimizers.schedules


def cases():
    """name -> a function making the optimizer (fresh per model)."""
    return {
        # The new optimizers, at learning rates that move the weights.
        "adamw": lambda: opt.AdamW(learning_rate=1e-2),
        "adagrad": lambda: opt.Adagrad(learning_rate=5e-2),
        "nadam": lambda: opt.Nadam(learning_rate=1e-2),
        "adamax": lambda: opt.Adamax(learning_rate=1e-2),
        "lion": lambda: opt.Lion(learning_rate=1e-3),
        # The existing ones where their slot order or options differ.
        "sgd_nesterov": lambda: opt.SGD(learning_rate=0.1, momentum=0.9,
                                        nesterov=True),
        "rmsprop_momentum": lambda: opt.RMSprop(learning_rate=1e-3,
                                                momentum=0.5),
        # Weight decay on optimizers that do not default to it.
        "sgd_weight_decay": lambda: opt.SGD(learning_rate=0.1, momentum=0.9,
                                            weight_decay=0.05),
        "adam_weight_decay": lambda: opt.Adam(learning_rate=1e-2,
                                              weight_decay=0.1),
        "lion_weight_decay": lambda: opt.Lion(learning_rate=1e-3,
                                              weight_decay=0.5),
        # Clipping.
        "sgd_clipnorm": lambda: opt.SGD(learning_rate=0.1, clipnorm=0.05),
        "adam_clipvalue": lambda: opt.Adam(learning_rate=1e-2,
                                           clipvalue=1e-3),
        "sgd_global_clipnorm": lambda: opt.SGD(learning_rate=0.1,
                                               global_clipnorm=0.1),
        # Schedules (decay steps of a few steps, so 5 steps see them act).
        "exponential_decay": lambda: opt.SGD(learning_rate=sched.ExponentialDecay(
            0.1, decay_steps=3, decay_rate=0.5)),
        "exponential_decay_staircase": lambda: opt.Adam(
            learning_rate=sched.ExponentialDecay(
                1e-2, decay_steps=2, decay_rate=0.3, staircase=True)),
        "piecewise_constant_decay": lambda: opt.SGD(
            learning_rate=sched.PiecewiseConstantDecay(
                [1, 3], [0.1, 0.05, 0.01])),
        "inverse_time_decay": lambda: opt.SGD(
            learning_rate=sched.InverseTimeDecay(0.1, decay_steps=2,
                                                 decay_rate=0.5)),
        "inverse_time_decay_staircase": lambda: opt.SGD(
            learning_rate=sched.InverseTimeDecay(0.1, decay_steps=2,
                                                 decay_rate=0.5,
                                                 staircase=True)),
        "polynomial_decay": lambda: opt.SGD(learning_rate=sched.PolynomialDecay(
            0.1, decay_steps=3, end_learning_rate=0.01)),
        "polynomial_decay_cycle": lambda: opt.SGD(
            learning_rate=sched.PolynomialDecay(
                0.1, decay_steps=2, end_learning_rate=0.01, power=2.0,
                cycle=True)),
        "cosine_decay": lambda: opt.SGD(learning_rate=sched.CosineDecay(
            0.1, decay_steps=4, alpha=0.1)),
        "cosine_decay_warmup": lambda: opt.Adam(learning_rate=sched.CosineDecay(
            1e-3, decay_steps=3, alpha=0.05, warmup_target=1e-2,
            warmup_steps=2)),
        "cosine_decay_restarts": lambda: opt.SGD(
            learning_rate=sched.CosineDecayRestarts(
                0.1, first_decay_steps=1, t_mul=2.0, m_mul=0.5, alpha=0.1)),
        "cosine_decay_restarts_tmul1": lambda: opt.SGD(
            learning_rate=sched.CosineDecayRestarts(
                0.1, first_decay_steps=2, t_mul=1.0, m_mul=0.8)),
        # Everything at once: the schedule's rate drives the decay too.
        "adamw_cosine_global_clipnorm": lambda: opt.AdamW(
            learning_rate=sched.CosineDecay(1e-2, decay_steps=4),
            weight_decay=0.2, global_clipnorm=0.5),
    }


def small_mlp():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ], name="small_mlp")


def variable_checksums(optimizer):
    out = []
    for v in optimizer.variables:
        a = np.asarray(v.numpy(), dtype=np.float64)
        out.append({
            "path": v.path,
            "shape": list(a.shape),
            "sum": float(a.sum()),
            "first": [float(e) for e in a.reshape(-1)[:4]],
        })
    return out


def record(name, make_optimizer, x, y):
    fresh_session()
    model = small_mlp()
    optimizer = make_optimizer()
    loss = keras.losses.SparseCategoricalCrossentropy()
    model.compile(optimizer=optimizer, loss=loss)
    model.save(os.path.join(OPT_OUT, name + ".keras"))
    losses, lrs = [], []
    for _ in range(STEPS):
        lrs.append(float(np.asarray(optimizer.learning_rate)))
        model.reset_metrics()
        logs = model.train_on_batch(x, y, return_dict=True)
        losses.append(float(logs["loss"]))
    return {
        "optimizer": optimizer.get_config(),
        "class_name": optimizer.__class__.__name__,
        "step_losses": losses,
        "step_learning_rates": lrs,
        "final_weights": checksums(model),
        "final_optimizer_variables": variable_checksums(optimizer),
    }


def main():
    os.makedirs(OPT_OUT, exist_ok=True)
    _, x, y = batch()
    out = {
        "keras_version": keras.__version__,
        "backend": keras.backend.backend(),
        "batch": "training.json's: the first %d Fashion-MNIST training "
                 "images, pixels / 255, the same batch each step" % BATCH,
        "model": "784-8-10 Dense (relu, softmax), "
                 "sparse_categorical_crossentropy",
        "steps": STEPS,
        "cases": {},
    }
    for name, make in cases().items():
        out["cases"][name] = record(name, make, x, y)
        print(name, out["cases"][name]["step_losses"])
    with open(os.path.join(OPT_OUT, "optimizers.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
