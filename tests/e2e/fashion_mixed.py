#!/usr/bin/env python3
"""One epoch of Fashion-MNIST under `--dtype-policy=mixed_bfloat16` learns as
float32 does: the reference model (examples/mlp.json unless --model says
otherwise), trained once in float32 and once under the policy from each of
--seeds (same initial weights, same batches per seed); the mean test
accuracies may differ by at most --max-gap points. One seed is not enough:
one epoch's test accuracy moves by about 0.5 points from seed to seed in
float32 alone, and bfloat16 rounding changes the weights' path as much as
another shuffle does."""

import argparse
import os
import sys

from fashion_mnist_npz import last, train


def test_accuracy(kcc, args):
    return last(r"test accuracy:? ([0-9.]+)", train(kcc, args),
                "test accuracy")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kcc", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--model", default="examples/mlp.json")
    p.add_argument("--mode", default="compiled")
    p.add_argument("--max-gap", type=float, default=0.5)
    p.add_argument("--seeds", default="1,2,3")
    a = p.parse_args()
    seeds = a.seeds.split(",")
    f32, mixed = [], []
    for seed in seeds:
        common = [os.path.join(a.source, a.model), "--data", "fashion-mnist",
                  "--epochs", "1", "--mode", a.mode, "--seed", seed]
        f32.append(test_accuracy(a.kcc, common))
        mixed.append(test_accuracy(
            a.kcc, common + ["--dtype-policy", "mixed_bfloat16"]))
    for seed, f, m in zip(seeds, f32, mixed):
        print("seed %s: float32 %.4f, mixed_bfloat16 %.4f" % (seed, f, m))
    f32_mean = sum(f32) / len(f32)
    mixed_mean = sum(mixed) / len(mixed)
    gap = 100 * abs(mixed_mean - f32_mean)
    print("%s, 1 epoch (%s), mean of %d seeds: test accuracy float32 %.4f, "
          "mixed_bfloat16 %.4f: %.2f points apart (bound %.2f)"
          % (a.model, a.mode, len(seeds), f32_mean, mixed_mean, gap,
             a.max_gap))
    if gap > a.max_gap:
        sys.exit("mixed_bfloat16 is more than %.2f points from float32"
                 % a.max_gap)


if __name__ == "__main__":
    main()
