#!/usr/bin/env python3
#===- jax_train.py - JAX peer: one jitted training step -------------------===#
#
# Times one training step of each case in models.py in JAX (CPU, f32): one
# jax.jit function holding jax.value_and_grad of the loss and a hand-written
# Adam update (Keras's formulation: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t),
# w -= lr_t * m / (sqrt(v) + eps), eps = 1e-7), parameters and optimizer
# state donated (updated in place, as kcc's Executable does). Also computes
# the accuracy. The step blocks on the loss (JAX dispatches asynchronously).
# NHWC / HWIO convolutions (lax.conv_general_dilated), max pooling with
# lax.reduce_window. Weights: glorot_uniform kernels, zero biases.
#
# Threads: XLA's CPU backend runs its Eigen thread pool over the CPUs it is
# given; run under `taskset` (run_all.sh does) to hold it to --threads.
#
#===----------------------------------------------------------------------===#

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import harness  # noqa: E402
import models  # noqa: E402


def glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return jnp.asarray(rng.uniform(-limit, limit, shape).astype(np.float32))


def init(model, rng):
    params = []
    for layer, shape_in, shape_out in models.layer_shapes(model):
        if layer[0] == "dense":
            n_in, n_out = shape_in[-1], shape_out[-1]
            params.append((glorot(rng, (n_in, n_out), n_in, n_out),
                           jnp.zeros((n_out,), jnp.float32)))
        elif layer[0] == "conv":
            k, c_in, c_out = layer[2], shape_in[2], layer[1]
            params.append((glorot(rng, (k, k, c_in, c_out), k * k * c_in,
                                  k * k * c_out),
                           jnp.zeros((c_out,), jnp.float32)))
    return params


def activation(name, x):
    if name == "relu":
        return jax.nn.relu(x)
    if name == "softmax":
        return jax.nn.softmax(x, axis=-1)
    return x


def forward(model, params, x):
    i = 0
    for layer in models.MODELS[model]["layers"]:
        kind = layer[0]
        if kind == "dense":
            w, b = params[i]
            i += 1
            x = activation(layer[2], x @ w + b)
        elif kind == "conv":
            w, b = params[i]
            i += 1
            x = jax.lax.conv_general_dilated(
                x, w, (1, 1), "VALID",
                dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = activation(layer[3], x + b)
        elif kind == "pool":
            p = layer[1]
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max,
                                      (1, p, p, 1), (1, p, p, 1), "VALID")
        else:
            x = x.reshape(x.shape[0], -1)
    return x


def make_step(model, batch):
    rng = np.random.default_rng(0)
    params = init(model, rng)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (params, zeros, jax.tree_util.tree_map(jnp.zeros_like, params),
             jnp.zeros((), jnp.int32))
    x_np, y_np = harness.synthetic_batch(model, batch)
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    from_logits = models.MODELS[model]["from_logits"]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-7

    def loss_fn(params, x, y):
        out = forward(model, params, x)
        if from_logits:
            logp = jax.nn.log_softmax(out, axis=-1)
        else:
            logp = jnp.log(jnp.clip(out, 1e-7, 1 - 1e-7))
        loss = -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
        acc = jnp.mean((jnp.argmax(out, axis=-1) == y).astype(jnp.float32))
        return loss, acc

    def train_step(state, x, y):
        params, m, v, t = state
        (loss, acc), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            params, x, y)
        t = t + 1
        tf = t.astype(jnp.float32)
        lr_t = lr * jnp.sqrt(1 - b2 ** tf) / (1 - b1 ** tf)
        m = jax.tree_util.tree_map(lambda m, g: m + (g - m) * (1 - b1), m,
                                   grads)
        v = jax.tree_util.tree_map(lambda v, g: v + (g * g - v) * (1 - b2),
                                   v, grads)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - lr_t * m / (jnp.sqrt(v) + eps), params, m, v)
        return (params, m, v, t), loss, acc

    train_step = jax.jit(train_step, donate_argnums=(0,))
    holder = [state]

    def step():
        holder[0], loss, acc = train_step(holder[0], x, y)
        return float(loss)  # blocks until the step is done

    return step


def main():
    p = harness.common_args("JAX peer: jitted training step")
    args = p.parse_args()
    versions = {"jax": jax.__version__,
                "backend": jax.default_backend(),
                "cpus_visible": len(os.sched_getaffinity(0))}
    return harness.run("jax-jit", versions, make_step, args,
                       "value_and_grad + hand-written Adam in one jit, "
                       "state donated")


if __name__ == "__main__":
    sys.exit(main())
