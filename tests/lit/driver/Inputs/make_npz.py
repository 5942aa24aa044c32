#!/usr/bin/env python3
"""Writes the data files of train-data.mlir with the standard library only
(the .npy format by hand, zipfile for .npz):

    make_npz.py DIR MLP_JSON

DIR/good.npz      x float32 [64, 28, 28, 1], y uint8 [64] labels 0..9
DIR/f64.npz       the same as float64 / int64 (cast as Keras casts)
DIR/named.npz     the arrays under the model's input and output names
DIR/missing.npz   x only
DIR/rank.npz      x [64, 784]
DIR/length.npz    y [63]
DIR/label.npz     a label 10 for 10 classes
DIR/nan.npz       x with 3 NaN values
DIR/weights.npz   good + sample_weight [64], all 1
DIR/ramp.npz      good + sample_weight [64]: 0, 1/32, 2/32, ...
DIR/nanweight.npz good + sample_weight [64] with a NaN at example 7
DIR/notzip.npz    text; DIR/truncated.npz: half of good.npz
DIR/dir/          x.npy and y.npy of good (memory-mapped by --data DIR)
DIR/ae.json       MLP_JSON turned into an autoencoder: 784 sigmoid outputs,
                  loss mse and no metrics; DIR/ae.npz: x and y = flat x
"""
import json
import os
import struct
import sys
import zipfile


def npy(descr, shape, payload):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (11 + len(header)) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def floats(values, code="f"):
    return struct.pack("<%d%s" % (len(values), code), *values)


def npz(path, arrays):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in arrays.items():
            z.writestr(name + ".npy", data)


def main():
    out, mlp_json = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "dir"), exist_ok=True)
    n = 64
    pixels = [((i * 37) % 255) / 255.0 for i in range(n * 784)]
    labels = [i % 10 for i in range(n)]
    x = npy("<f4", (n, 28, 28, 1), floats(pixels))
    y = npy("|u1", (n,), bytes(labels))
    npz(os.path.join(out, "good.npz"), {"x": x, "y": y})
    npz(os.path.join(out, "f64.npz"), {
        "x": npy("<f8", (n, 28, 28, 1), floats(pixels, "d")),
        "y": npy("<i8", (n,), floats(labels, "q"))})
    npz(os.path.join(out, "named.npz"), {"input_layer": x, "dense_2": y})
    npz(os.path.join(out, "missing.npz"), {"x": x})
    npz(os.path.join(out, "rank.npz"), {"x": npy("<f4", (n, 784), floats(pixels)), "y": y})
    npz(os.path.join(out, "length.npz"), {"x": x, "y": npy("|u1", (n - 1,), bytes(labels[:-1]))})
    npz(os.path.join(out, "label.npz"), {"x": x, "y": npy("|u1", (n,), bytes(labels[:5] + [10] + labels[6:]))})
    nan = list(pixels)
    for i in (3, 500, 9000):
        nan[i] = float("nan")
    npz(os.path.join(out, "nan.npz"), {"x": npy("<f4", (n, 28, 28, 1), floats(nan)), "y": y})
    npz(os.path.join(out, "weights.npz"), {"x": x, "y": y, "sample_weight": npy("<f4", (n,), floats([1.0] * n))})
    npz(os.path.join(out, "ramp.npz"), {"x": x, "y": y, "sample_weight": npy("<f4", (n,), floats([i / 32 for i in range(n)]))})
    nanweight = [1.0] * n
    nanweight[7] = float("nan")
    npz(os.path.join(out, "nanweight.npz"), {"x": x, "y": y, "sample_weight": npy("<f4", (n,), floats(nanweight))})
    with open(os.path.join(out, "notzip.npz"), "w") as f:
        f.write("x,y\n1,2\n")
    good = open(os.path.join(out, "good.npz"), "rb").read()
    with open(os.path.join(out, "truncated.npz"), "wb") as f:
        f.write(good[: len(good) // 2])
    for name, data in (("x.npy", x), ("y.npy", y)):
        with open(os.path.join(out, "dir", name), "wb") as f:
            f.write(data)

    spec = json.load(open(mlp_json))
    last = spec["config"]["layers"][-1]["config"]
    last["units"], last["activation"] = 784, "sigmoid"
    spec["compile_config"]["loss"] = "mse"
    spec["compile_config"]["metrics"] = None
    json.dump(spec, open(os.path.join(out, "ae.json"), "w"))
    npz(os.path.join(out, "ae.npz"), {"x": x, "y": npy("<f4", (n, 784), floats(pixels))})


if __name__ == "__main__":
    main()
