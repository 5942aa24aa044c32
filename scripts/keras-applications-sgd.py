#!/usr/bin/env python3
#===- keras-applications-sgd.py - One SGD step of every keras.applications net ===#
#
# For each network of keras.applications (weights=None, its smallest input,
# 10 classes), Keras (from a throwaway venv, never the build's) writes the
# .keras archive and takes one plain SGD step on a seeded batch; `kcc train`
# takes the same step from the same archive, compiled and interpreted, and
# saves its weights. The script compares every weight's update
# (-lr * gradient) as one relative norm over all trainable weights against
# Keras's own difference when the batch rows are reversed (its float32
# reordering noise), and the moving statistics as the worst absolute
# difference (relative where a statistic is over 1). Dropout rates are set to 0 first: a random layer makes one step
# incomparable. Where kcc is over 3x that noise, the same step is taken in
# float64 (Keras with JAX_ENABLE_X64, in a subprocess) as the exact answer:
# Keras's own float32 update can be the one far from it (a BatchNormalization
# whose float32 moments put an element exactly on ReLU's kink), and kcc
# passes when it is within 3x of Keras's float32 distance to it. Keras's step
# is also retaken with the input moved by about one ulp (3 seeded draws): a
# ReLU input a few ulps from its kink flips there (NASNetMobile's batch moves
# Keras's own update by 1.5e-2 so), and kcc passes when it is within 3x of
# the largest such move. It also times Keras's first train_on_batch (trace and jit)
# and its later steps, for the compile-time table of docs/benchmarks.md.
#
#   KERAS_BACKEND=jax /tmp/kerasvenv/bin/python scripts/keras-applications-sgd.py \
#       --kcc build/bin/kcc [--batch 8] [--only ResNet50 VGG16] [--out DIR]
#
# Prints one Markdown row per network; exits non-zero if any network is over
# 3x Keras's noise, its moving statistics are over 1e-3, or kcc failed.
#
#===----------------------------------------------------------------------===#

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras  # noqa: E402

NETWORKS = [
    "ConvNeXtTiny", "ConvNeXtSmall", "ConvNeXtBase", "ConvNeXtLarge",
    "ConvNeXtXLarge", "DenseNet121", "DenseNet169", "DenseNet201",
    "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
    "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
    "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2",
    "EfficientNetV2B3", "EfficientNetV2S", "EfficientNetV2M",
    "EfficientNetV2L", "InceptionResNetV2", "InceptionV3", "MobileNet",
    "MobileNetV2", "MobileNetV3Small", "MobileNetV3Large", "NASNetMobile",
    "NASNetLarge", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2",
    "ResNet101V2", "ResNet152V2", "VGG16", "VGG19", "Xception"]
# The smallest input each network accepts; 32x32 for the others.
SMALLEST = {"InceptionResNetV2": 75, "InceptionV3": 75, "Xception": 71}
RANDOM_LAYERS = ("Dropout", "SpatialDropout1D", "SpatialDropout2D",
                 "SpatialDropout3D", "StochasticDepth")
LEARNING_RATE = 0.05
NOISE_FACTOR = 3.0
MOVING_TOLERANCE = 1e-3


def deterministic(model):
    """The same network with every random layer's rate set to 0."""
    config = model.get_config()
    for layer in config["layers"]:
        if layer["class_name"] in RANDOM_LAYERS:
            layer["config"]["rate"] = 0.0
    return model.__class__.from_config(config)


def build(name, size):
    keras.utils.set_random_seed(0)
    model = getattr(keras.applications, name)(
        weights=None, input_shape=(size, size, 3), classes=10)
    return deterministic(model)


def rescales(model):
    """Whether the network takes pixels (0-255) and rescales them itself."""
    return any(layer.__class__.__name__ in ("Rescaling", "Normalization")
               for layer in model.layers[:4])


def batch(n, size, pixels):
    """Seeded images, as pixels or as the [-1, 1] range preprocess_input
    gives, and labels."""
    rng = np.random.default_rng(1)
    low, high = (0.0, 255.0) if pixels else (-1.0, 1.0)
    x = rng.uniform(low, high, (n, size, size, 3)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int32)
    return x, y


def keras_updates(model, initial, x, y):
    """Updates of one SGD step on x and on x's rows reversed, and the time of
    the first step (trace and jit) and the median of three later ones."""
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=LEARNING_RATE),
                  loss="sparse_categorical_crossentropy")
    start = time.perf_counter()
    model.train_on_batch(x[::-1], y[::-1])
    first = time.perf_counter() - start
    reversed_update = differences(model.get_weights(), initial)
    steps = []
    for _ in range(3):
        model.set_weights(initial)
        start = time.perf_counter()
        model.train_on_batch(x, y)
        steps.append(time.perf_counter() - start)
    update = differences(model.get_weights(), initial)
    return update, reversed_update, first, float(np.median(steps))


def ulp_noise(model, initial, x, y, update, trained):
    """The largest distance of Keras's update from `update` when the input
    is moved by about one ulp (relative 2^-24, 3 seeded draws): where an
    activation sits a few ulps from ReLU's kink, float32 itself cannot say
    which side it is on, and the step's gradient jumps with it."""
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(3):
        nudged = (x * (1 + rng.uniform(-1, 1, x.shape) * 2.0**-24)).astype(
            np.float32)
        model.set_weights(initial)
        model.train_on_batch(nudged, y)
        moved = differences(model.get_weights(), initial)
        worst = max(worst, relative_norm(trained(moved), trained(update)))
    return worst


def differences(after, before):
    """after - before, each taken in float64 and kept in float32 (the updates
    of the largest networks would not fit in memory twice in float64)."""
    return [(np.asarray(a, np.float64) - b).astype(np.float32)
            for a, b in zip(after, before)]


def relative_norm(a, b):
    diff = sum(float(((np.asarray(u, np.float64) - v) ** 2).sum())
               for u, v in zip(a, b))
    norm = sum(float((np.asarray(v, np.float64) ** 2).sum()) for v in b)
    return (diff / norm) ** 0.5 if norm > 0 else float("nan")


def float64_update(archive, data, out):
    """This script's own subprocess: one SGD step of the archive's network
    in float64, the update of every weight saved to `out` (.npz)."""
    keras.config.set_floatx("float64")
    model32 = keras.saving.load_model(archive)
    initial = [np.asarray(w, np.float64) for w in model32.get_weights()]
    config = json.loads(model32.to_json())

    def float64_dtypes(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "dtype" and (value == "float32" or (
                        isinstance(value, dict) and
                        value.get("class_name") == "DTypePolicy")):
                    node[key] = "float64"
                else:
                    float64_dtypes(value)
        elif isinstance(node, list):
            for value in node:
                float64_dtypes(value)

    float64_dtypes(config)
    model = keras.models.model_from_json(json.dumps(config))
    model.set_weights(initial)
    batch = np.load(data)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=LEARNING_RATE),
                  loss="sparse_categorical_crossentropy")
    model.train_on_batch(batch["x"].astype(np.float64), batch["y"])
    np.savez(out, *[np.asarray(w, np.float64) - i
                    for w, i in zip(model.get_weights(), initial)])


def float64_reference(args, archive, data, work):
    """The float64 update of every weight, from a subprocess with JAX's
    64-bit mode on (it cannot be turned on in this one)."""
    out = os.path.join(work, "float64_update.npz")
    run = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--float64-update",
         archive, data, out], capture_output=True, text=True,
        env=dict(os.environ, JAX_ENABLE_X64="1"), timeout=args.timeout)
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        raise RuntimeError(f"float64 reference: {lines[-1] if lines else ''}")
    with np.load(out) as f:
        return [f[f"arr_{i}"] for i in range(len(f.files))]


def kcc_weights(args, model, archive, data, mode, work):
    """The weights after kcc's SGD step, read back through Keras."""
    out = os.path.join(work, f"kcc_{mode}.weights.h5")
    command = [args.kcc, "train", archive, "--data", data,
               "--batch", str(args.batch), "--epochs", "1", "--shuffle=false",
               "--optimizer", "sgd", "--lr", str(LEARNING_RATE),
               "--loss", "sparse_categorical_crossentropy", "--mode", mode,
               "--verbose", "0", "--save-weights", out]
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True,
                         env=dict(os.environ, KCC_CACHE_DIR="off"),
                         timeout=args.timeout)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        raise RuntimeError(f"kcc {mode} exit {run.returncode}: "
                           f"{lines[-1][:200] if lines else ''}")
    model.load_weights(out)
    return model.get_weights(), seconds


def compare(name, args):
    size = SMALLEST.get(name, 32)
    work = os.path.join(args.out, name)
    os.makedirs(work, exist_ok=True)
    model = build(name, size)
    archive = os.path.join(work, "model.keras")
    model.save(archive)
    x, y = batch(args.batch, size, rescales(model))
    data = os.path.join(work, "batch.npz")
    np.savez(data, x=x, y=y)
    initial = model.get_weights()
    trainable = {id(v) for v in model.trainable_weights}
    moving = [i for i, v in enumerate(model.weights) if id(v) not in trainable]
    update, reversed_update, first, step = keras_updates(
        model, initial, x, y)

    def trained(values):
        return [v for i, v in enumerate(values) if i not in moving]

    row = {"network": name, "input": size,
           "weights": int(sum(w.size for w in initial)),
           "keras_first_step_s": first, "keras_step_ms": step * 1e3,
           "keras_noise": relative_norm(trained(reversed_update),
                                        trained(update))}
    del reversed_update
    kept = {}
    for mode in ("compiled", "interpreted"):
        model.set_weights(initial)
        try:
            after, seconds = kcc_weights(args, model, archive, data, mode,
                                         work)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            row[mode] = {"error": str(error)}
            continue
        ours = differences(after, initial)
        # Relative to the statistic where it is over 1 (EfficientNetV2L's
        # variances reach the thousands).
        worst_moving = max((float((np.abs(ours[i].astype(np.float64) -
                                          update[i]) /
                                   np.maximum(1.0, np.abs(initial[i] +
                                                          update[i]))).max())
                            for i in moving), default=0.0)
        del after
        row[mode] = {"relative": relative_norm(trained(ours), trained(update)),
                     "moving": worst_moving, "seconds": seconds}
        kept[mode] = ours
    if any("relative" in row[m] and row[m]["relative"] > NOISE_FACTOR *
           row["keras_noise"] for m in kept):
        try:
            exact = trained(float64_reference(args, archive, data, work))
            row["float64"] = {"keras": relative_norm(trained(update), exact)}
            for mode, ours in kept.items():
                row["float64"][mode] = relative_norm(trained(ours), exact)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            row["float64"] = {"error": str(error)}
        row["ulp_noise"] = ulp_noise(model, initial, x, y, update, trained)
    if not args.keep:
        shutil.rmtree(work)
    return row


def passes(row):
    """Within 3x Keras's reordering noise of Keras's update, within 3x
    Keras's float32 distance of the float64 update, or within 3x of how far
    Keras's own update moves when its input moves by one ulp."""
    exact = row.get("float64", {})
    for mode in ("compiled", "interpreted"):
        r = row.get(mode, {})
        if "error" in r or r["moving"] > MOVING_TOLERANCE:
            return False
        near_keras = r["relative"] <= NOISE_FACTOR * row["keras_noise"]
        near_exact = mode in exact and exact[mode] <= NOISE_FACTOR * max(
            exact["keras"], row["keras_noise"])
        near_kink = r["relative"] <= NOISE_FACTOR * row.get("ulp_noise", 0.0)
        if not (near_keras or near_exact or near_kink):
            return False
    return True


def markdown(row):
    cells = [row["network"], f"{row['input']}x{row['input']}",
             f"{row['weights'] / 1e6:.1f} M", f"{row['keras_noise']:.2e}"]
    for mode in ("compiled", "interpreted"):
        r = row[mode]
        if "error" in r:
            cells += [f"**{r['error']}**", ""]
        else:
            cells += [f"{r['relative']:.2e} ({r['relative'] / row['keras_noise']:.2f}x)",
                      f"{r['moving']:.1e}"]
    exact = row.get("float64")
    if not exact:
        cells.append("")
    elif "error" in exact:
        cells.append(f"**{exact['error'][:80]}**")
    else:
        cells.append(f"Keras {exact['keras']:.1e}, kcc " + ", ".join(
            f"{exact[m]:.1e}" for m in ("compiled", "interpreted")
            if m in exact))
    if "ulp_noise" in row:
        cells[-1] += f"; Keras at 1-ulp input: {row['ulp_noise']:.1e}"
    cells += [f"{row['keras_first_step_s']:.1f} s",
              f"{row['keras_step_ms']:.0f}", "yes" if passes(row) else "**no**"]
    return "| " + " | ".join(cells) + " |"


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--float64-update":
        float64_update(*sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kcc", default="build/bin/kcc")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", default="/tmp/kcc-applications-sgd")
    parser.add_argument("--json", help="also append each row to this file")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--keep", action="store_true",
                        help="keep each network's archive, batch and weights")
    args = parser.parse_args()
    args.kcc = os.path.abspath(args.kcc)
    print(f"One SGD step (lr {LEARNING_RATE}), batch {args.batch}: update "
          f"relative difference to Keras's over all trainable weights "
          f"(and as a multiple of Keras's own reordering noise), worst moving "
          f"statistic difference; Keras {keras.__version__} on "
          f"{keras.backend.backend()}")
    print("| network | input | weights | Keras reordered | compiled | "
          "moving | interpreted | moving | from float64; 1-ulp input | "
          "Keras jit + first step | Keras step ms | within 3x |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
    failures = 0
    for name in args.only or NETWORKS:
        keras.backend.clear_session()
        try:
            row = compare(name, args)
        except Exception as error:  # Keras refusing a network is a row too.
            row = {"network": name, "error": f"{type(error).__name__}: "
                                             f"{str(error)[:200]}"}
            print(f"| {name} | **{row['error']}** |", flush=True)
            failures += 1
        else:
            print(markdown(row), flush=True)
            failures += not passes(row)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
