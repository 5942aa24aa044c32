#!/usr/bin/env python3
"""Checks that Keras loads what kcc saves of a model holding nested models.

For each of make_nested_fixtures.py's siamese, transfer and two_level:
`kcc train` 20 steps from Keras's weights and --save a .keras; Keras's
load_model reads it (the nested Sequential and Functional models kept in
its config, the trained weights in their nested groups), and its predict
equals `kcc predict` of the same file. Needs the venv of make_fixtures.py:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/check_nested_saves.py --kcc build/bin/kcc
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

NESTED = ("Sequential", "Functional")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kcc", required=True)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    _, x, _ = mf.batch()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "x.npz")
        np.savez(data, x=x)
        for name in ("siamese", "transfer", "two_level"):
            source = os.path.join(mf.OUT, "nested", name + ".keras")
            trip = mf.RoundTrip(args.kcc, source, data, x, tmp,
                                ["--epochs=1", "--steps-per-epoch=20"])
            moved, diff = trip.moved, trip.diff
            config = json.loads(zipfile.ZipFile(trip.saved).read("config.json"))
            nested = [layer["config"]["name"] for layer in config["config"]["layers"]
                      if layer["class_name"] in NESTED]
            ok = nested and moved > 0 and diff <= args.tolerance
            failed |= not ok
            print(f"{name}: nested models {nested}, weights moved by "
                  f"training {moved:.3g}, |kcc predict - Keras predict| "
                  f"{diff:.3g} {'ok' if ok else 'FAILED'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
