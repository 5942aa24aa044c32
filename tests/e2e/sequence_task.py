#!/usr/bin/env python3
"""kcc learns a synthetic text-like task: `kcc train` on the data of
scripts/make-sequence-task.py (does the bigram (3, 7) occur in 40 token
ids), with the Keras-written seq_task.keras (Embedding, Conv1D,
GlobalMaxPooling1D, Dense sigmoid; Adam 1e-2, binary crossentropy,
binary_accuracy). After a few epochs val_binary_accuracy must reach the
stated bound on 1,000 held-out sequences (chance is 0.5)."""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kcc", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--mode", default="compiled")
    p.add_argument("--min-accuracy", type=float, default=0.95)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable,
                        os.path.join(a.source, "scripts/make-sequence-task.py"),
                        d], check=True)
        model = os.path.join(a.source,
                             "tests/fixtures/keras/sequence/seq_task.keras")
        out = subprocess.run(
            [a.kcc, "train", model, "--data", os.path.join(d, "train.npz"),
             "--validation-data", os.path.join(d, "test.npz"),
             "--epochs", str(a.epochs), "--mode=" + a.mode],
            capture_output=True, text=True)
        sys.stdout.write(out.stdout + out.stderr)
        if out.returncode != 0:
            sys.exit("kcc train failed")
        accs = re.findall(r"val_binary_accuracy[:=]\s*([0-9.]+)",
                          out.stdout + out.stderr)
        if not accs:
            sys.exit("no val_binary_accuracy in kcc train's output")
        final = float(accs[-1])
        print("sequence task: val_binary_accuracy %.4f after %d epochs "
              "(bound %.2f)" % (final, a.epochs, a.min_accuracy))
        if final < a.min_accuracy:
            sys.exit("accuracy below the bound")


if __name__ == "__main__":
    main()
