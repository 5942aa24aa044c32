#!/usr/bin/env python3
"""The batch the Keras fixtures train on, as a .npz kcc reads, without
NumPy: the first N Fashion-MNIST training images (pixels / 255, float32,
flattened to 784) as x and their labels (int64) as y.

    fashion_batch.py OUT.npz [N]
"""
import gzip
import sys
import zipfile

from npy import npy_bytes

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(name, count, item):
    with gzip.open("%s/%s" % (DATA, name), "rb") as f:
        raw = f.read()
    header = 4 + 4 * raw[3]
    return raw[header:header + count * item]


def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32
    pixels = read_idx("train-images-idx3-ubyte.gz", n, 784)
    labels = read_idx("train-labels-idx1-ubyte.gz", n, 1)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("x.npy", npy_bytes("f4", (n, 784),
                                      [p / 255.0 for p in pixels]))
        z.writestr("y.npy", npy_bytes("i8", (n,), list(labels)))


if __name__ == "__main__":
    main()
