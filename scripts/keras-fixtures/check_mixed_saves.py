#!/usr/bin/env python3
"""Checks that a mixed_bfloat16 model makes the round trip Keras -> kcc ->
Keras with its dtype policies.

For each fixture of make_mixed_fixtures.py: `kcc train` 20 steps from
Keras's weights (on the fixture's data, Fashion-MNIST for the image and
sequence-of-rows models) and --save a .keras; Keras's load_model reads it,
every layer's dtype policy is the one Keras wrote (mixed_bfloat16, the
float32 softmax layers float32), and Keras's predict of the saved file is
within --tolerance of `kcc predict` of the same file (bfloat16 rounding:
the two compute different intermediate values). Needs the venv of
make_fixtures.py:

    KERAS_BACKEND=jax /tmp/kerasvenv/bin/python \\
        scripts/keras-fixtures/check_mixed_saves.py --kcc build/bin/kcc
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_mixed_fixtures as mm  # noqa: E402

import numpy as np  # noqa: E402


def policies(model):
    return {layer.name: layer.dtype_policy.name for layer in model.layers}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kcc", required=True)
    parser.add_argument("--tolerance", type=float, default=2e-2)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, _, data in mm.MODELS:
            source = os.path.join(mf.OUT, name + ".keras")
            if data is None:
                _, x, y = mf.batch()
            else:
                x, y = data()
            batch = os.path.join(tmp, name + ".npz")
            np.savez(batch, x=x, y=y)
            trip = mf.RoundTrip(args.kcc, source, batch, x, tmp,
                                ["--data", batch, "--batch=8", "--epochs=5"])
            model, moved, diff = trip.model, trip.moved, trip.diff
            same_policies = policies(model) == policies(trip.original)
            mixed = sum(p == "mixed_bfloat16"
                        for p in policies(model).values())
            ok = same_policies and moved > 0 and diff <= args.tolerance
            failed |= not ok
            print(f"{name}: {mixed} mixed_bfloat16 layers, policies "
                  f"{'kept' if same_policies else 'CHANGED'}, weights moved "
                  f"by training {moved:.3g}, |kcc predict - Keras predict| "
                  f"{diff:.3g} {'ok' if ok else 'FAILED'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
