#!/usr/bin/env python3
"""Writes the hostile inputs of hostile-input.mlir at test time (none is
committed: some are large, all are cheap to make).

    hostile.py deep-json N OUT      '[' nested N deep
    hostile.py deep-mlir N OUT      a module attribute nested N deep
    hostile.py chain N OUT          a functional Keras 3 spec: N relu Activations in a chain
    hostile.py zip-lie OUT          a .keras whose config.json declares 200 MB
    hostile.py idx-empty DIR        Fashion-MNIST IDX files with 0 examples
    hostile.py idx-huge DIR         an IDX header declaring 2^31 x 2^31 x 2
"""
import gzip
import json
import struct
import sys
import zipfile


def deep_json(n, out):
    with open(out, "w") as f:
        f.write("[" * n + "]" * n + "\n")


def deep_mlir(n, out):
    with open(out, "w") as f:
        f.write("module attributes {kc.deep = " + "[" * n + "]" * n + "} {\n}\n")


def tensor(shape, history):
    return {"class_name": "__keras_tensor__",
            "config": {"shape": shape, "dtype": "float32",
                       "keras_history": history}}


def chain(n, out):
    layers = [{"module": "keras.layers", "class_name": "InputLayer",
               "config": {"batch_shape": [None, 4], "dtype": "float32",
                          "name": "input_layer"},
               "name": "input_layer", "inbound_nodes": []}]
    prev = "input_layer"
    for i in range(n):
        name = "activation_%d" % i
        layers.append({"module": "keras.layers", "class_name": "Activation",
                       "config": {"name": name, "trainable": True,
                                  "activation": "relu"},
                       "name": name,
                       "inbound_nodes": [{"args": [tensor([None, 4], [prev, 0, 0])],
                                          "kwargs": {}}]})
        prev = name
    spec = {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": "chain", "trainable": True, "layers": layers,
                       "input_layers": ["input_layer", 0, 0],
                       "output_layers": [prev, 0, 0]}}
    with open(out, "w") as f:
        json.dump(spec, f)


def zip_lie(out):
    # A real archive, then the uncompressed size of config.json (local
    # header offset 22, central directory offset 24) rewritten to 200 MB.
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", "{}" * 100)
    data = bytearray(open(out, "rb").read())
    lie = struct.pack("<I", 200 << 20)
    data[22:26] = lie
    central = data.find(b"PK\x01\x02")
    data[central + 24:central + 28] = lie
    open(out, "wb").write(bytes(data))


def idx(path, dims, payload=b""):
    header = bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
    with gzip.open(path, "wb") as f:
        f.write(header + payload)


def idx_split(d, prefix, images, labels):
    idx("%s/%s-images-idx3-ubyte.gz" % (d, prefix), images)
    idx("%s/%s-labels-idx1-ubyte.gz" % (d, prefix), labels)


def main():
    cmd = sys.argv[1]
    if cmd == "deep-json":
        deep_json(int(sys.argv[2]), sys.argv[3])
    elif cmd == "deep-mlir":
        deep_mlir(int(sys.argv[2]), sys.argv[3])
    elif cmd == "chain":
        chain(int(sys.argv[2]), sys.argv[3])
    elif cmd == "zip-lie":
        zip_lie(sys.argv[2])
    elif cmd == "idx-empty":
        for prefix in ("train", "t10k"):
            idx_split(sys.argv[2], prefix, [0, 28, 28], [0])
    elif cmd == "idx-huge":
        for prefix in ("train", "t10k"):
            idx_split(sys.argv[2], prefix, [1 << 31, 1 << 31, 2], [1 << 31])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
