#!/usr/bin/env python3
"""Checks that Keras loads what kcc saves of TimeDistributed and 3-D models.

For each fixture of make_shape3d_fixtures.py: `kcc train` 20 steps from
Keras's weights and --save a .keras; Keras's load_model reads it (the
TimeDistributed wrappers, a Sequential inside one, the 3-D layers, the
trained weights under their groups), and its predict equals `kcc predict`
of the same file. Needs the venv of make_fixtures.py:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/check_shape3d_saves.py --kcc build/bin/kcc
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_shape3d_fixtures as ms  # noqa: E402

import numpy as np  # noqa: E402


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
        for name in ms.MODELS:
            source = os.path.join(mf.OUT, name + ".keras")
            trip = mf.RoundTrip(args.kcc, source, data, x, tmp,
                                ["--epochs=1", "--steps-per-epoch=20"])
            moved, diff = trip.moved, trip.diff
            ok = moved > 0 and diff <= args.tolerance
            failed |= not ok
            print(f"{name}: weights moved by training {moved:.3g}, "
                  f"|kcc predict - Keras predict| {diff:.3g} "
                  f"{'ok' if ok else 'FAILED'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
