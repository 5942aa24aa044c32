"""The package compiles the training step the kcc tool compiles: the same IR
into the pipeline and the same kernels out of it (a module that linked MLIR
apart from libMLIR once left its steps unfolded, 8% slower, and nothing but
the speed showed it)."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys

import keras
import numpy as np


def kcc_tool():
    path = os.environ.get("KCC_BIN") or shutil.which("kcc")
    assert path, "the kcc tool was not found: set KCC_BIN " \
        "(scripts/python-tests.sh sets it to the build's bin/kcc)"
    return path


def cached_train_steps(folder):
    """Each cached train step's key (without the build's id, which differs
    between the tool and the module) and kernel counts."""
    steps = []
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        # DiskCache's entry: magic, two u32, the metadata's u64 size, the
        # objects' size and a checksum, then the metadata's JSON.
        assert data.startswith(b"KCCCACHE"), name
        size = struct.unpack_from("<Q", data, 16)[0]
        header = json.loads(data[40:40 + size])
        if header["name"] == "train_step":
            key = re.sub(r" \(build-id:[0-9a-f]+\)", "", header["key"])
            steps.append((key, header["kernels"]))
    return steps


def test_package_compiles_the_tools_step(tmp_path):
    model = keras.Sequential([
        keras.Input((12, 12, 1)),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.Conv2D(4, 3, groups=2, padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dense(5),
    ])
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    archive = str(tmp_path / "model.keras")
    model.save(archive)
    data = str(tmp_path / "data.npz")
    np.savez(data, x=np.zeros((8, 12, 12, 1), "float32"),
             y=np.zeros(8, "int32"))
    tool_cache, package_cache = tmp_path / "tool", tmp_path / "package"
    subprocess.run(
        [kcc_tool(), "train", archive, "--data", data, "--batch", "8",
         "--epochs", "1", "--verbose", "0"],
        env=dict(os.environ, KCC_CACHE_DIR=str(tool_cache)), check=True)
    # Its own process: the compile cache's folder is read once a process.
    subprocess.run(
        [sys.executable, "-c",
         "import sys, keras, numpy as np, kcc\n"
         "d = np.load(sys.argv[2])\n"
         "kcc.fit(keras.saving.load_model(sys.argv[1]), d['x'], d['y'], "
         "batch_size=8, verbose=0)", archive, data],
        env=dict(os.environ, KCC_CACHE_DIR=str(package_cache)), check=True)
    tool, package = cached_train_steps(tool_cache), cached_train_steps(
        package_cache)
    assert len(tool) == 1
    assert package == tool
