#!/usr/bin/env python3
#===- keras_zoo.py - One training step of a .keras file, timed in Keras 3 -===#
#
# The Keras side of benchmarks/run_zoo.sh: loads each fixture with
# keras.saving.load_model (its own compile config: optimizer, loss, loss
# weights, metrics), and times model.fit on in-memory data at --batch:
# n copies of one batch per fit call, time / n per step (benchmarks/peers/
# harness.py's loop: the first call, tracing and compiling included, is
# reported apart as compile_ms). An uncompiled fixture gets Adam and the
# loss zoo_cases.py names. The batch is the fixture's own NAME.npz
# when there is one (tiled to the batch size), else synthetic data of the
# model's input and output shapes.
#
#   KERAS_BACKEND=jax|tensorflow|torch python keras_zoo.py --mode M \
#       --batch B --json OUT.json FIXTURE.keras ...
#
#   --mode jit     compile(jit_compile=True): jax.jit, XLA for TF,
#                  torch.compile for PyTorch
#   --mode graph   compile(jit_compile=False): tf.function without XLA,
#                  PyTorch eager (for JAX op by op, not a configuration
#                  anyone trains with)
#   --mode eager   compile(run_eagerly=True)
#
# Threads: --threads for TF's and PyTorch's intra-op pools; JAX's XLA CPU
# client takes the process's CPUs (run_zoo.sh runs every system under the
# same taskset).
#
#===----------------------------------------------------------------------===#

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
sys.path.insert(0, HERE)

import harness  # noqa: E402
import zoo_cases  # noqa: E402


def batch_for(keras, np, model, path, batch):
    """x and y of `batch` examples: the fixture's own npz, tiled, else
    synthetic data that fits the model and its loss."""
    npz = os.path.splitext(path)[0] + ".npz"
    in_names = [t.name.split(":")[0] for t in model.inputs]
    layer_in = [l.name for l in model.layers
                if l.__class__.__name__ == "InputLayer"]
    out_names = list(model.output_names) if hasattr(model, "output_names") \
        else []
    rng = np.random.default_rng(0)

    def tile(a):
        reps = -(-batch // len(a))
        return np.concatenate([a] * reps)[:batch]

    if os.path.exists(npz):
        d = np.load(npz)
        keys = list(d.keys())
        if "x" in keys:
            x = tile(d["x"])
        else:
            x = {k: tile(d[k]) for k in keys if k in layer_in + in_names}
        if "y" in keys:
            y = tile(d["y"])
        else:
            y = {k: tile(d[k]) for k in keys if k in out_names}
        # A dict with no array of the model's names: synthesize instead.
        if not (isinstance(x, dict) and not x) and \
                not (isinstance(y, dict) and not y):
            return x, y
    xs = []
    for t in model.inputs:
        shape = (batch,) + tuple(t.shape[1:])
        if "int" in str(t.dtype):
            xs.append(rng.integers(0, 2, shape).astype(str(t.dtype)))
        else:
            xs.append(rng.random(shape, dtype=np.float32))
    ys = []
    loss = model.loss if not isinstance(model.loss, (list, dict)) else None
    name = loss if isinstance(loss, str) else \
        getattr(loss, "name", "sparse_categorical_crossentropy") or ""
    for t in model.outputs:
        shape = (batch,) + tuple(t.shape[1:])
        if "sparse" in name:
            ys.append(rng.integers(0, shape[-1], shape[:-1]))
        elif "binary" in name:
            ys.append(rng.integers(0, 2, shape).astype(np.float32))
        elif "categorical" in name:
            ys.append(np.eye(shape[-1], dtype=np.float32)[
                rng.integers(0, shape[-1], shape[:-1])])
        else:
            ys.append(rng.random(shape, dtype=np.float32))
    return (xs[0] if len(xs) == 1 else xs), (ys[0] if len(ys) == 1 else ys)


def record_loss(keras, path):
    """The loss an uncompiled fixture trains with (zoo_cases.py's choice)."""
    name, logits = zoo_cases.record_loss(path) or \
        ("sparse_categorical_crossentropy", False)
    losses = keras.losses
    if name == "sparse_categorical_crossentropy":
        return losses.SparseCategoricalCrossentropy(from_logits=logits)
    if name == "categorical_crossentropy":
        return losses.CategoricalCrossentropy(from_logits=logits)
    if name == "binary_crossentropy":
        return losses.BinaryCrossentropy(from_logits=logits)
    return losses.get(name)


def main():
    p = harness.common_args("Keras 3 on the fixture zoo")
    p.add_argument("--mode", choices=["jit", "graph", "eager"], default="jit")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("fixtures", nargs="+")
    args = p.parse_args()

    import keras
    import numpy as np
    backend = keras.backend.backend()
    versions = {"keras": keras.__version__, "backend": backend}
    if backend == "tensorflow":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        versions["tensorflow"] = tf.__version__
    elif backend == "torch":
        import torch
        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
        versions["torch"] = torch.__version__
    elif backend == "jax":
        import jax
        versions["jax"] = jax.__version__

    results = {}
    system = f"keras3-{backend}-{args.mode}"
    for path in args.fixtures:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            keras.backend.clear_session()
            model = keras.saving.load_model(path)
            config = model.get_compile_config() if model.compiled else None
            kwargs = dict(run_eagerly=args.mode == "eager",
                          jit_compile=args.mode == "jit")
            if config:
                model.compile_from_config(config)
                # compile_from_config takes no jit flags: set them after.
                model.jit_compile = kwargs["jit_compile"]
                model.run_eagerly = kwargs["run_eagerly"]
            else:
                model.compile(optimizer="adam", loss=record_loss(keras, path),
                              **kwargs)
            x, y = batch_for(keras, np, model, path, args.batch)

            def step():
                model.train_on_batch(x, y)

            def run_n(n):
                rep = (lambda a: np.concatenate([a] * n))
                xn = {k: rep(v) for k, v in x.items()} if isinstance(x, dict) \
                    else [rep(v) for v in x] if isinstance(x, list) else rep(x)
                yn = {k: rep(v) for k, v in y.items()} if isinstance(y, dict) \
                    else [rep(v) for v in y] if isinstance(y, list) else rep(y)
                model.fit(xn, yn, batch_size=args.batch, epochs=1, verbose=0,
                          shuffle=False)
            step.run_n = run_n
            t0 = time.perf_counter()
            entry = harness.time_case(step, name, args)
            entry["wall_s"] = time.perf_counter() - t0
        except Exception as e:  # report, keep going with the other models
            entry = {"error": f"{type(e).__name__}: {e}"[:2000]}
        entry["peak_rss_mb"] = \
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        entry.update(model=name, batch=args.batch)
        results[f"{name}/{args.batch}"] = entry
        msg = (f"{entry['median_ms']:.3f} ms/step (compile "
               f"{entry['compile_ms']:.0f} ms)" if "median_ms" in entry
               else entry["error"].splitlines()[0])
        print(f"[{system}] {name} b{args.batch}: {msg}", file=sys.stderr,
              flush=True)
        harness.dump(system, versions, f"model.fit, mode {args.mode}",
                     results, args)
    print(harness.dump(system, versions, f"model.fit, mode {args.mode}",
                       results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
