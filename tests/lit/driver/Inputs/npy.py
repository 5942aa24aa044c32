#!/usr/bin/env python3
"""NumPy files for predict.mlir and evaluate.mlir, without NumPy (the
system Python of the tests has none): the .npy format written and read by
hand.

    npy.py write OUT.npz NAME=DTYPE:D0,D1,...[:FILL] ...
        one array per argument; DTYPE f4|f8|i4|i8; FILL 'ramp' (default:
        element i holds (i * 37 % 101) / 101), 'labels:K' (i % K) or
        'const:V' (every element V)
    npy.py show FILE.npy|FILE.npz
        per array: name, descr, shape, and the sum of each row
"""
import struct
import sys
import zipfile

CODES = {"f4": "f", "f8": "d", "i4": "i", "i8": "q"}


def npy_bytes(descr, shape, values):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = ("{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }"
              % (descr, dims))
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    data = struct.pack("<%d%s" % (len(values), CODES[descr]), *values)
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode() + data)


def parse_npy(data):
    assert data[:6] == b"\x93NUMPY", "not a .npy"
    major = data[6]
    if major == 1:
        n, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        n, start = struct.unpack("<I", data[8:12])[0], 12
    header = eval(data[start:start + n].decode())  # a dict literal
    descr, shape = header["descr"], header["shape"]
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack("<%d%s" % (count, CODES[descr[1:]]),
                           data[start + n:])
    return descr, shape, values


def write(out, specs):
    with zipfile.ZipFile(out, "w") as z:
        for spec in specs:
            name, rest = spec.split("=", 1)
            parts = rest.split(":")
            descr, shape = parts[0], [int(d) for d in parts[1].split(",") if d]
            fill = ":".join(parts[2:]) or "ramp"
            count = 1
            for d in shape:
                count *= d
            if fill.startswith("labels:"):
                k = int(fill.split(":")[1])
                values = [i % k for i in range(count)]
            elif fill.startswith("const:"):
                values = [float(fill.split(":")[1])] * count
            else:
                values = [(i * 37 % 101) / 101 for i in range(count)]
            if descr.startswith("i"):
                values = [int(v) for v in values]
            z.writestr(name + ".npy", npy_bytes(descr, shape, values))


def show(path):
    if path.endswith(".npz"):
        with zipfile.ZipFile(path) as z:
            arrays = [(n[:-4], z.read(n)) for n in sorted(z.namelist())]
    else:
        with open(path, "rb") as f:
            arrays = [("-", f.read())]
    for name, data in arrays:
        descr, shape, values = parse_npy(data)
        row = len(values) // shape[0] if shape and shape[0] else 0
        sums = [sum(values[i * row:(i + 1) * row]) for i in range(shape[0])]
        print("%s %s %s rows %s" % (name, descr, tuple(shape),
                                    " ".join("%.4f" % s for s in sums)))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3:])
    else:
        show(sys.argv[2])
