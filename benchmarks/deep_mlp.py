#!/usr/bin/env python3
"""Writes a Keras 3 Sequential spec of N hidden Dense(64, relu) layers.

The model the compile-time benchmark and the scaling tests compile: a
784-feature input, N Dense(64, relu), a Dense(10, softmax) head, compiled
with sparse categorical crossentropy and Adam, exactly as Keras 3's
`model.to_json()` spells it (plus `compile_config`). Depth is the only
thing that grows, so compile time and memory against N show how each pass
scales with the number of ops.

With --mlir it writes instead the @forward kcc traces from that spec (the
kc ops of each Dense: matmul, broadcast_to, add, relu), so a test can time
the compiler's passes without the Keras importer in front of them.

    python3 benchmarks/deep_mlp.py N [--mlir] [-o FILE]     (default: stdout)
"""

import argparse
import json
import sys


def dtype_policy():
    return {"module": "keras", "class_name": "DTypePolicy",
            "config": {"name": "float32"}, "registered_name": None}


def dense(name, units, activation, fan_in):
    return {
        "module": "keras.layers",
        "class_name": "Dense",
        "config": {
            "name": name,
            "trainable": True,
            "dtype": dtype_policy(),
            "units": units,
            "activation": activation,
            "use_bias": True,
            "kernel_initializer": {
                "module": "keras.initializers",
                "class_name": "GlorotUniform",
                "config": {"seed": None, "input_axes": None,
                           "output_axes": None},
                "registered_name": None},
            "bias_initializer": {
                "module": "keras.initializers", "class_name": "Zeros",
                "config": {}, "registered_name": None},
            "kernel_regularizer": None,
            "bias_regularizer": None,
            "kernel_constraint": None,
            "bias_constraint": None,
            "quantization_config": None,
        },
        "registered_name": None,
        "build_config": {"input_shape": [None, fan_in]},
    }


def model(depth, width=64, features=784, classes=10):
    layers = [{
        "module": "keras.layers",
        "class_name": "InputLayer",
        "config": {"batch_shape": [None, features], "dtype": "float32",
                   "sparse": False, "ragged": False, "name": "input_layer",
                   "optional": False},
        "registered_name": None,
    }]
    fan_in = features
    for i in range(depth):
        layers.append(dense("dense" if i == 0 else f"dense_{i}", width,
                            "relu", fan_in))
        fan_in = width
    layers.append(dense("head", classes, "softmax", fan_in))
    return {
        "module": "keras",
        "class_name": "Sequential",
        "config": {"name": f"deep_mlp_{depth}", "trainable": True,
                   "dtype": dtype_policy(), "layers": layers},
        "registered_name": None,
        "build_config": {"input_shape": [None, features]},
        "compile_config": {
            "optimizer": {
                "module": "keras.optimizers",
                "class_name": "Adam",
                "config": {"name": "adam", "learning_rate": 0.001,
                           "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07,
                           "amsgrad": False},
                "registered_name": None},
            "loss": {
                "module": "keras.losses",
                "class_name": "SparseCategoricalCrossentropy",
                "config": {"name": "sparse_categorical_crossentropy",
                           "reduction": "sum_over_batch_size",
                           "from_logits": False, "ignore_class": None},
                "registered_name": None},
            "loss_weights": None,
            "metrics": ["accuracy"],
            "weighted_metrics": None,
            "run_eagerly": False,
            "steps_per_execution": 1,
            "jit_compile": True,
        },
    }


def forward_mlir(depth, width=64, features=784, classes=10, batch=32):
    """The @forward of model(depth) in the kc dialect, as kcc traces it."""
    args, body = [], []
    fan_in = features
    names = ["dense" if i == 0 else f"dense_{i}" for i in range(depth)]
    for name, units in [(n, width) for n in names] + [("head", classes)]:
        args.append(f"tensor<{fan_in}x{units}xf32> "
                    f'{{kc.name = "{name}/kernel", kc.trainable = true}}')
        args.append(f"tensor<{units}xf32> "
                    f'{{kc.name = "{name}/bias", kc.trainable = true}}')
        fan_in = units
    x = len(args)
    args.append(f"tensor<{batch}x{features}xf32> {{kc.input = 0 : i64}}")
    value, fan_in, v = f"%arg{x}", features, 0
    for layer in range(depth + 1):
        units = width if layer < depth else classes
        act = f"tensor<{batch}x{units}xf32>"
        body += [
            f"%{v} = kc.matmul {value}, %arg{2 * layer} : "
            f"tensor<{batch}x{fan_in}xf32>, tensor<{fan_in}x{units}xf32> "
            f"-> {act}",
            f"%{v + 1} = kc.broadcast_to %arg{2 * layer + 1} : "
            f"tensor<{units}xf32> -> {act}",
            f"%{v + 2} = kc.add %{v}, %{v + 1} : {act}",
            f"%{v + 3} = kc.relu %{v + 2} : {act}" if layer < depth else
            f"%{v + 3} = kc.softmax %{v + 2} {{axis = 1 : i64}} : {act}",
        ]
        value, fan_in, v = f"%{v + 3}", units, v + 4
    signature = ", ".join(f"%arg{i}: {a}" for i, a in enumerate(args))
    lines = [f"func.func @forward({signature}) -> "
             f"tensor<{batch}x{classes}xf32> {{"]
    lines += ["  " + op for op in body]
    lines += [f"  return {value} : tensor<{batch}x{classes}xf32>", "}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("depth", type=int, help="hidden Dense layers (N >= 1)")
    parser.add_argument("--mlir", action="store_true",
                        help="write the kc @forward instead of the Keras spec "
                             "(compile it with --loss/--optimizer: adam and "
                             "sparse categorical crossentropy are kcc's "
                             "defaults)")
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    args = parser.parse_args()
    if args.depth < 1:
        parser.error(f"depth must be at least 1, got {args.depth}")
    text = (forward_mlir(args.depth) if args.mlir
            else json.dumps(model(args.depth), indent=1) + "\n")
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
