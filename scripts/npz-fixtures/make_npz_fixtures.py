#!/usr/bin/env python3
"""Writes the .npy / .npz fixtures of tests/unit/runtime/NpzTest.cpp with
NumPy itself, so the reader is checked against what NumPy really writes.

    python3 -m venv /tmp/npvenv && /tmp/npvenv/bin/pip install -q numpy
    /tmp/npvenv/bin/python scripts/npz-fixtures/make_npz_fixtures.py

Values follow formulas the test recomputes (no numbers copied by hand):
value(i) = 0.5 * i - 1 for floats, 7 * i - 3 for signed ints, (37 * i) % 256
for uint8 and i % 3 == 0 for bool, with i the flat C-order index.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "tests", "fixtures", "npz")


def values(dtype, shape):
    i = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    kind = np.dtype(dtype).kind
    if kind == "f":
        v = 0.5 * i - 1
    elif kind == "i":
        v = 7 * i - 3
    elif kind == "u":
        v = (37 * i) % 256
    else:
        v = i % 3 == 0
    return v.astype(dtype).reshape(shape)


def save(name, array, version=None):
    path = os.path.join(OUT, name)
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)


def main():
    os.makedirs(OUT, exist_ok=True)
    save("f32.npy", values("<f4", (2, 3)))
    save("f64_be.npy", values(">f8", (3, 2)))
    save("i32_be.npy", values(">i4", (5,)))
    save("i64.npy", values("<i8", (2, 2, 2)))
    save("u8.npy", values("u1", (4, 4)))
    save("bool.npy", values("?", (7,)))
    save("scalar.npy", np.array(2.5, dtype="<f8"))
    save("empty.npy", np.zeros((0, 3), dtype="<f4"))
    save("f32_v2.npy", values("<f4", (2, 3)), version=(2, 0))
    save("f32_v3.npy", values("<f4", (2, 3)), version=(3, 0))
    save("fortran.npy", np.asfortranarray(values("<f4", (2, 3))))
    save("f16.npy", values("<f2", (2,)))
    arrays = {"x": values("<f4", (4, 3)), "y": values("<i8", (4,)),
              "mask": values("?", (4,))}
    np.savez(os.path.join(OUT, "stored.npz"), **arrays)
    np.savez_compressed(os.path.join(OUT, "deflated.npz"), **arrays)


if __name__ == "__main__":
    main()
