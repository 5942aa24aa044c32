#!/usr/bin/env python3
"""Writes a synthetic text-like task as .npz (standard library only, nothing
downloaded).

Sequences of 40 token ids from a vocabulary of 20; the label is 1 when the
bigram (3, 7) occurs somewhere in the sequence, 0 otherwise. Half of the
examples have the bigram planted at a random position; in the other half
every occurrence is broken up. Both classes hold 3s and 7s, so a bag of
tokens cannot tell them apart: the model must see order (a Conv1D of width
2 and a global max pooling can).

    python3 scripts/make-sequence-task.py OUT_DIR [--train N] [--test N]

writes OUT_DIR/train.npz and OUT_DIR/test.npz with x (int32 [N, 40]) and
y (float32 [N, 1]).
"""

import argparse
import os
import random
import struct
import zipfile

VOCAB, STEPS, FIRST, SECOND = 20, 40, 3, 7


def has_bigram(row):
    return any(a == FIRST and b == SECOND for a, b in zip(row, row[1:]))


def make(n, rng):
    xs, ys = [], []
    for i in range(n):
        row = [rng.randrange(VOCAB) for _ in range(STEPS)]
        if i % 2 == 0:
            at = rng.randrange(STEPS - 1)
            row[at], row[at + 1] = FIRST, SECOND
        else:
            for j in range(STEPS - 1):
                while row[j] == FIRST and row[j + 1] == SECOND:
                    row[j + 1] = rng.randrange(VOCAB)
        xs.append(row)
        ys.append(1.0 if i % 2 == 0 else 0.0)
        assert has_bigram(row) == (i % 2 == 0)
    order = list(range(n))
    rng.shuffle(order)
    return [xs[k] for k in order], [ys[k] for k in order]


def npy(descr, shape, payload):
    """NumPy's .npy format, version 1.0."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + payload)


def write(path, xs, ys):
    n = len(xs)
    x = struct.pack("<%di" % (n * STEPS), *[t for row in xs for t in row])
    y = struct.pack("<%df" % n, *ys)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", npy("<i4", (n, STEPS), x))
        z.writestr("y.npy", npy("<f4", (n, 1), y))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--train", type=int, default=4000)
    p.add_argument("--test", type=int, default=1000)
    p.add_argument("--seed", type=int, default=5)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    for name, n in (("train", a.train), ("test", a.test)):
        write(os.path.join(a.out, name + ".npz"), *make(n, rng))


if __name__ == "__main__":
    main()
