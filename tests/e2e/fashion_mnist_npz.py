#!/usr/bin/env python3
"""A user's own data trains as the bundled data does: Fashion-MNIST written
as .npz files (scripts/fashion-mnist-npz.py) and given to `kcc train --data
train.npz --validation-data test.npz` reaches the validation accuracy of
`kcc train --data fashion-mnist` on the reference MLP (same seed, same
initial weights, same batches: the same number), and at least the bound."""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def train(kcc, args):
    out = subprocess.run([kcc, "train"] + args + ["--verbose", "2"],
                         capture_output=True, text=True)
    sys.stdout.write(out.stdout + out.stderr)
    if out.returncode != 0:
        sys.exit("kcc train %s failed" % " ".join(args))
    return out.stdout


def last(pattern, text, what):
    found = re.findall(pattern, text)
    if not found:
        sys.exit("no %s in kcc train's output" % what)
    return float(found[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kcc", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--min-accuracy", type=float, default=0.83)
    a = p.parse_args()
    model = os.path.join(a.source, "examples/mlp.json")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable,
                        os.path.join(a.source, "scripts/fashion-mnist-npz.py"),
                        d], check=True)
        files = train(a.kcc, [model, "--data", os.path.join(d, "train.npz"),
                              "--validation-data",
                              os.path.join(d, "test.npz"), "--epochs", "1"])
    bundled = train(a.kcc, [model, "--data", "fashion-mnist", "--epochs", "1"])
    val = last(r"val_accuracy: ([0-9.]+)", files, "val_accuracy")
    test = last(r"test accuracy:? ([0-9.]+)", bundled, "test accuracy")
    print("fashion-mnist as .npz: val_accuracy %.4f; --data fashion-mnist: "
          "test accuracy %.4f (bound %.2f)" % (val, test, a.min_accuracy))
    if val < a.min_accuracy:
        sys.exit("val_accuracy below the bound")
    if abs(val - test) > 1e-4:
        sys.exit("the .npz files and the bundled data train differently")


if __name__ == "__main__":
    main()
