#!/usr/bin/env python3
"""Compares `kcc train saved.keras`'s continuation with Keras's load_model
+ fit (tests/fixtures/keras/continue/continue.json): each epoch's loss from
kcc's --csv-log and the continued model's outputs (kcc predict's .npy) on
the first 4 examples, within TOL; prints the largest differences.

    compare_continue.py CONTINUE.JSON OPTIMIZER LOG.csv OUTPUTS.npy TOL
"""
import csv
import json
import sys

from npy import parse_npy


def main():
    expected = json.load(open(sys.argv[1]))[sys.argv[2]]
    rows = list(csv.DictReader(open(sys.argv[3])))
    tol = float(sys.argv[5])
    losses = [float(r["loss"]) for r in rows]
    if len(losses) != len(expected["losses"]):
        sys.exit("%d epochs logged, Keras ran %d" %
                 (len(losses), len(expected["losses"])))
    loss_diff = max(abs(a - b) for a, b in zip(losses, expected["losses"]))
    _, shape, values = parse_npy(open(sys.argv[4], "rb").read())
    want = [v for row in expected["outputs"] for v in row]
    out_diff = max(abs(a - b) for a, b in zip(values[:len(want)], want))
    print("%s: %d epochs, max loss difference %.2e, max output difference "
          "%.2e" % (sys.argv[2], len(losses), loss_diff, out_diff))
    if loss_diff > tol or out_diff > tol:
        sys.exit("over the tolerance %g" % tol)


if __name__ == "__main__":
    main()
