#!/usr/bin/env python3
#===- keras_train.py - Keras peers: model.train_on_batch ------------------===#
#
# Times Keras's own training loop (fit, or train_on_batch) for each case
# in models.py, the model built from the same layers with Keras's defaults
# (glorot_uniform kernels, zero biases), compiled with
# Adam(learning_rate=1e-3, epsilon=1e-7), SparseCategoricalCrossentropy
# (from_logits as in the spec) and metrics=["accuracy"].
#
#   --impl tf_keras   TF-Keras (Keras 2, the `tf_keras` package) on TF
#   --impl keras3     Keras 3 on whatever KERAS_BACKEND says (tensorflow,
#                     jax, torch)
#
#   --mode graph      tf.function (TF) / jitted step (JAX), XLA off:
#                     compile(run_eagerly=False, jit_compile=False)
#   --mode eager      compile(run_eagerly=True): op by op
#   --mode xla        compile(jit_compile=True): the step compiled by XLA
#
#   --api fit         (default) model.fit over one batch repeated n times
#                     (a tf.data dataset for TF), time / n per step: Keras's
#                     normal training loop, callbacks and all, once per
#                     step; fit's per-call setup is amortized over n
#   --api train_on_batch   one call a step; in TF-Keras each call builds a
#                     tf.data pipeline for its one batch, which costs far
#                     more than a small model's step
#
# Inputs are passed as tensors of the backend, converted once.
#
#===----------------------------------------------------------------------===#

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import models  # noqa: E402


def main():
    p = harness.common_args("Keras peers: train_on_batch")
    p.add_argument("--impl", choices=["tf_keras", "keras3"],
                   default="tf_keras")
    p.add_argument("--mode", choices=["graph", "eager", "xla"],
                   default="graph")
    p.add_argument("--api", choices=["fit", "train_on_batch"], default="fit",
                   help="fit: model.fit over n copies of the batch, per-step "
                        "time = time / n; train_on_batch: one call a step")
    args = p.parse_args()

    if args.impl == "tf_keras":
        import tensorflow as tf
        import tf_keras as keras
        backend = "tensorflow"
    else:
        import keras
        backend = keras.backend.backend()
        tf = None
        if backend == "tensorflow":
            import tensorflow as tf
    if tf is not None:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)

    def to_tensor(a):
        if args.impl == "tf_keras":
            return tf.convert_to_tensor(a)
        return keras.ops.convert_to_tensor(a)

    def make_step(model, batch):
        m = models.MODELS[model]
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        layers = [keras.Input(shape=m["input"])]
        for layer in m["layers"]:
            kind = layer[0]
            if kind == "dense":
                layers.append(keras.layers.Dense(layer[1],
                                                 activation=layer[2]))
            elif kind == "conv":
                layers.append(keras.layers.Conv2D(layer[1], layer[2],
                                                  activation=layer[3]))
            elif kind == "pool":
                layers.append(keras.layers.MaxPooling2D(layer[1]))
            else:
                layers.append(keras.layers.Flatten())
        net = keras.Sequential(layers)
        net.compile(
            optimizer=keras.optimizers.Adam(learning_rate=1e-3, epsilon=1e-7),
            loss=keras.losses.SparseCategoricalCrossentropy(
                from_logits=m["from_logits"]),
            metrics=["accuracy"],
            run_eagerly=args.mode == "eager",
            jit_compile=args.mode == "xla")
        x_np, y_np = harness.synthetic_batch(model, batch)
        x, y = to_tensor(x_np), to_tensor(y_np)

        def step():
            return net.train_on_batch(x, y)

        if args.api == "fit":
            # One dataset of the one batch, repeated: fit's per-step cost
            # without a tf.data pipeline built per call (train_on_batch in
            # TF-Keras builds one every call).
            if tf is not None:
                ds = tf.data.Dataset.from_tensors((x, y)).repeat()
            else:
                ds = None

            def run_n(n):
                if ds is not None:
                    net.fit(ds, steps_per_epoch=n, epochs=1, verbose=0)
                else:
                    import numpy as np
                    net.fit(np.repeat(x_np, n, axis=0), np.tile(y_np, n),
                            batch_size=batch, epochs=1, verbose=0,
                            shuffle=False)
            step.run_n = run_n
        return step

    versions = {"keras": keras.__version__, "backend": backend}
    if tf is not None:
        versions["tensorflow"] = tf.__version__
    if backend == "jax":
        import jax
        versions["jax"] = jax.__version__
    name = "tf-keras" if args.impl == "tf_keras" else f"keras3-{backend}"
    if args.api == "train_on_batch":
        name += "-tob"
    return harness.run(f"{name}-{args.mode}", versions, make_step, args,
                       f"{args.api}, run_eagerly={args.mode == 'eager'}, "
                       f"jit_compile={args.mode == 'xla'}")


if __name__ == "__main__":
    sys.exit(main())
