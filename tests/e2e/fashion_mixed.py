#!/usr/bin/env python3
"""One epoch of Fashion-MNIST under `--dtype-policy=mixed_bfloat16` learns as
float32 does: the reference model (examples/mlp.json unless --model says
otherwise), same seed, same initial weights, same batches, trained once in
float32 and once under the policy; the test accuracies may differ by at
most --max-gap points (bfloat16 products and activations change the
weights' path, not what the model learns)."""

import argparse
import os
import re
import subprocess
import sys


def test_accuracy(kcc, args):
    out = subprocess.run([kcc, "train"] + args + ["--verbose", "2"],
                         capture_output=True, text=True)
    sys.stdout.write(out.stdout + out.stderr)
    if out.returncode != 0:
        sys.exit("kcc train %s failed" % " ".join(args))
    found = re.findall(r"test accuracy:? ([0-9.]+)", out.stdout)
    if not found:
        sys.exit("no test accuracy in kcc train's output")
    return float(found[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kcc", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--model", default="examples/mlp.json")
    p.add_argument("--mode", default="compiled")
    p.add_argument("--max-gap", type=float, default=0.5)
    a = p.parse_args()
    common = [os.path.join(a.source, a.model), "--data", "fashion-mnist",
              "--epochs", "1", "--mode", a.mode]
    f32 = test_accuracy(a.kcc, common)
    mixed = test_accuracy(a.kcc, common + ["--dtype-policy", "mixed_bfloat16"])
    gap = 100 * abs(mixed - f32)
    print("%s, 1 epoch (%s): test accuracy float32 %.4f, mixed_bfloat16 "
          "%.4f: %.2f points apart (bound %.2f)"
          % (a.model, a.mode, f32, mixed, gap, a.max_gap))
    if gap > a.max_gap:
        sys.exit("mixed_bfloat16 is more than %.2f points from float32"
                 % a.max_gap)


if __name__ == "__main__":
    main()
