#!/usr/bin/env python3
"""Fills tests/fuzz/corpus/<target>/ with small seeds from the test fixtures.

    /tmp/npvenv/bin/python tests/fuzz/make_seeds.py   # needs numpy and h5py

keras-json     the Keras to_json() fixtures (tests/fixtures/keras/*.json)
keras-archive  the MLP .keras fixture shrunk to a 4-3-2-2 network (the same
               config.json, metadata.json and model.weights.h5 layout, the
               weight datasets cut down), config-only archives of the CNN
               and residual fixtures, and bad_no_config.keras
keras-h5       the legacy .h5 fixtures (Keras 2 and 3) shrunk the same way
npz            the .npy / .npz fixtures of tests/fixtures/npz
mlir           the lit tests' .mlir inputs, one seed per split-input-file
               chunk, comment lines dropped
The real fixtures hold 100 K-float weights; seeds this small keep each
fuzzing execution fast.
"""
import hashlib
import io
import json
import pathlib
import shutil
import zipfile

import h5py
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERAS = ROOT / "tests" / "fixtures" / "keras"
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
# The MLP fixtures' sizes and what they shrink to.
SHRINK = {28: 2, 784: 4, 128: 3, 64: 2, 10: 2}
SHAPE_KEYS = {"batch_shape", "batch_input_shape", "input_shape", "shape"}


def shrink_config(value, key=None):
    if isinstance(value, dict):
        return {k: shrink_config(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if key in SHAPE_KEYS and all(v is None or isinstance(v, int)
                                     for v in value):
            return [SHRINK.get(v, v) if v is not None else None for v in value]
        return [shrink_config(v, key) for v in value]
    if key == "units" and isinstance(value, int):
        return SHRINK.get(value, value)
    return value


def copy_h5(src, dst):
    """Copies groups and attributes; datasets are cut down to SHRINK."""
    for k, v in src.attrs.items():
        if k in ("model_config", "training_config") and isinstance(v, (str, bytes)):
            text = v.decode() if isinstance(v, bytes) else v
            if k == "model_config":
                text = json.dumps(shrink_config(json.loads(text)))
            dst.attrs[k] = text
        else:
            dst.attrs[k] = v
    for name, obj in src.items():
        if isinstance(obj, h5py.Group):
            copy_h5(obj, dst.create_group(name))
        else:
            shape = tuple(SHRINK.get(d, d) for d in obj.shape)
            n = int(np.prod(shape, dtype=np.int64))
            data = (np.arange(n) % 7 * 0.125).astype(obj.dtype).reshape(shape)
            ds = dst.create_dataset(name, data=data)
            for k, v in obj.attrs.items():
                ds.attrs[k] = v


def shrunk_h5(src_bytes):
    out = io.BytesIO()
    with h5py.File(io.BytesIO(src_bytes), "r") as src, \
            h5py.File(out, "w", libver="earliest") as dst:
        copy_h5(src, dst)
    return out.getvalue()


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def keras_seeds():
    for path in sorted(KERAS.glob("*.json")):
        if path.name != "training.json":
            write("keras-json", path.name, path.read_bytes())
    with zipfile.ZipFile(KERAS / "mlp.keras") as z:
        config = shrink_config(json.loads(z.read("config.json")))
        members = {"metadata.json": z.read("metadata.json"),
                   "config.json": json.dumps(config).encode(),
                   "model.weights.h5": shrunk_h5(z.read("model.weights.h5"))}
    for method, suffix in ((zipfile.ZIP_DEFLATED, ""),
                           (zipfile.ZIP_STORED, "_stored")):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as z:
            for name, data in members.items():
                z.writestr(name, data)
        write("keras-archive", f"mlp_small{suffix}.keras", buf.getvalue())
    for fixture in ("cnn.keras", "residual.keras"):
        buf = io.BytesIO()
        with zipfile.ZipFile(KERAS / fixture) as src, \
                zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name in ("metadata.json", "config.json"):
                z.writestr(name, src.read(name))
        write("keras-archive", fixture.replace(".keras", "_config_only.keras"),
              buf.getvalue())
    write("keras-archive", "bad_no_config.keras",
          (KERAS / "bad_no_config.keras").read_bytes())
    for fixture in ("mlp_legacy.h5", "mlp_keras2.h5"):
        write("keras-h5", fixture.replace(".h5", "_small.h5"),
              shrunk_h5((KERAS / fixture).read_bytes()))


def npz_seeds():
    for path in sorted((ROOT / "tests" / "fixtures" / "npz").iterdir()):
        write("npz", path.name, path.read_bytes())


def mlir_seeds():
    seen = set()
    for path in sorted((ROOT / "tests" / "lit").rglob("*.mlir")):
        for chunk in path.read_text().split("// -----"):
            text = "".join(line + "\n" for line in chunk.splitlines()
                           if line.strip() and
                           not line.lstrip().startswith("//"))
            digest = hashlib.sha1(text.encode()).hexdigest()[:12]
            if text and digest not in seen:
                seen.add(digest)
                write("mlir", f"{path.stem}-{digest}.mlir", text.encode())


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    keras_seeds()
    npz_seeds()
    mlir_seeds()


if __name__ == "__main__":
    main()
