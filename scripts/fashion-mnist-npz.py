#!/usr/bin/env python3
"""Writes Fashion-MNIST as NumPy archives, with the standard library only:
train.npz and test.npz, each holding x (float32 [N, 28, 28, 1], pixels
scaled to [0, 1] as keras.datasets tutorials do) and y (uint8 [N] labels),
in the .npy format NumPy writes (version 1.0, header padded to 64 bytes).

    python3 scripts/fashion-mnist-npz.py OUT_DIR [IDX_DIR]
    kcc train examples/mlp.json --data OUT_DIR/train.npz \\
        --validation-data OUT_DIR/test.npz --epochs 1

With --dir, writes OUT_DIR/train/{x,y}.npy and OUT_DIR/test/{x,y}.npy
instead: folders `kcc train --data DIR` memory-maps.
"""
import array
import gzip
import os
import struct
import sys
import zipfile

IDX_DIR = "/usr/share/datasets/fashion-mnist"


def npy_bytes(descr, shape, payload):
    """A .npy 1.0 file: magic, version, header dict padded to 64, data."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    rank = magic & 0xFF
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return dims, data[4 + 4 * rank:]


def split(idx_dir, prefix):
    dims, pixels = read_idx(os.path.join(idx_dir, prefix + "-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(idx_dir, prefix + "-labels-idx1-ubyte.gz"))
    scaled = array.array("f", (p / 255.0 for p in pixels))
    if sys.byteorder != "little":
        scaled.byteswap()
    x = npy_bytes("<f4", (dims[0], dims[1], dims[2], 1), scaled.tobytes())
    y = npy_bytes("|u1", (dims[0],), bytes(labels))
    return x, y


def main():
    args = [a for a in sys.argv[1:] if a != "--dir"]
    as_dirs = "--dir" in sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    idx_dir = args[1] if len(args) > 1 else IDX_DIR
    os.makedirs(out, exist_ok=True)
    for name, prefix in (("train", "train"), ("test", "t10k")):
        x, y = split(idx_dir, prefix)
        if as_dirs:
            os.makedirs(os.path.join(out, name), exist_ok=True)
            for member, data in (("x.npy", x), ("y.npy", y)):
                with open(os.path.join(out, name, member), "wb") as f:
                    f.write(data)
        else:
            with zipfile.ZipFile(os.path.join(out, name + ".npz"), "w") as z:
                z.writestr("x.npy", x)
                z.writestr("y.npy", y)


if __name__ == "__main__":
    main()
