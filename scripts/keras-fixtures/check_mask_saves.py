#!/usr/bin/env python3
"""Checks that Keras loads what kcc saves of a masked model.

For each of make_mask_fixtures.py's models: `kcc train` 5 steps on the
fixture's batch from Keras's weights and --save a .keras; its config keeps
Embedding's mask_zero and Masking's mask_value, Keras's load_model reads it
(deriving the masks again), and its predict equals `kcc predict` of the
same file. (kcc keeps a Keras 3 archive's config text; the config kcc
generates for a model is checked by FixtureRoundTripTest, which saves and
reloads these fixtures through it.) Needs the venv of make_fixtures.py:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/check_mask_saves.py --kcc build/bin/kcc
"""

import argparse
import json
import os
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)

import numpy as np  # noqa: E402

NAMES = ("mask_lstm", "mask_gru", "mask_bidir", "mask_simple", "mask_gap",
         "mask_transformer", "mask_tagger")


def mask_settings(path):
    """(layer, mask_zero or mask_value) of the archive's masking layers."""
    config = json.loads(zipfile.ZipFile(path).read("config.json"))
    found = []
    for layer in config["config"]["layers"]:
        if layer["class_name"] == "Embedding":
            found.append((layer["config"]["name"],
                          layer["config"].get("mask_zero")))
        if layer["class_name"] == "Masking":
            found.append((layer["config"]["name"],
                          layer["config"].get("mask_value")))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kcc", required=True)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    failed = False
    masks = os.path.join(mf.OUT, "masks")
    with open(os.path.join(masks, "masks.json")) as f:
        records = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        for name in NAMES:
            source = os.path.join(masks, name + ".keras")
            data = os.path.join(masks, name + ".npz")
            record = records[name]
            trip = mf.RoundTrip(
                args.kcc, source, data, np.load(data)["x"], tmp,
                ["--data", data, "--loss=" + record["loss"],
                 "--from-logits=" + str(record["from_logits"]).lower(),
                 "--batch-size=32", "--epochs=5"])
            moved, diff = trip.moved, trip.diff
            settings = mask_settings(trip.saved)
            ok = (settings == mask_settings(source) and moved > 0 and
                  diff <= args.tolerance)
            failed |= not ok
            print(f"{name}: {settings}, weights moved by training "
                  f"{moved:.3g}, |kcc predict - Keras predict| {diff:.3g} "
                  f"{'ok' if ok else 'FAILED'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
