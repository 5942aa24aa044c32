#!/usr/bin/env python3
"""Compares `kcc train`'s --csv-log and `kcc evaluate`'s output with Keras's
history and evaluate() of one case of tests/fixtures/keras/ctc/fit.json
(scripts/keras-fixtures/make_ctc_fixtures.py): each epoch's loss within
1e-4 relative, evaluate's within 1e-5; prints the largest differences.

    compare_ctc.py FIT.JSON CASE LOG.csv EVALUATE.txt
"""
import csv
import json
import re
import sys


def rel(a, b):
    return abs(a - b) / max(1e-3, abs(b))


def main():
    case = json.load(open(sys.argv[1]))["cases"][sys.argv[2]]
    losses = [float(r["loss"]) for r in csv.DictReader(open(sys.argv[3]))]
    if len(losses) != len(case["loss"]):
        sys.exit("%d epochs logged, Keras ran %d" %
                 (len(losses), len(case["loss"])))
    fit = max(rel(a, b) for a, b in zip(losses, case["loss"]))
    found = re.findall(r"^loss: ([0-9.e+-]+)$", open(sys.argv[4]).read(),
                       re.M)
    if not found:
        sys.exit("no loss in kcc evaluate's output")
    evaluate = rel(float(found[-1]), case["evaluate"])
    print("%s: %d epochs, max loss rel difference %.1e, evaluate %.1e" %
          (sys.argv[2], len(losses), fit, evaluate))
    if fit > 1e-4 or evaluate > 1e-5:
        sys.exit("over the tolerance")


if __name__ == "__main__":
    main()
