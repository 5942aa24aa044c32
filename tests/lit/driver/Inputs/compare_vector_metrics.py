#!/usr/bin/env python3
"""Compares kcc's logs of metrics whose value is a list with Keras's
(tests/fixtures/keras/metrics/stateful/vector/vector.json, written by
scripts/keras-fixtures/make_stateful_metric_fixtures.py).

    compare_vector_metrics.py VECTOR.JSON CASE history LOG.csv TOL
    compare_vector_metrics.py VECTOR.JSON CASE evaluate EVAL.json TOL

history: every column of kcc's --csv-log against Keras's history, each
epoch, every element of a list; a list cell must be written as Keras's
CSVLogger writes an array ("[v1, v2, ...]", quoted). evaluate: `kcc
evaluate --json`'s logs against Keras's evaluate(return_dict=True). Prints
the largest difference; fails on a missing or extra key, a list where Keras
has a number (or the other way), a length or a difference over TOL.
"""
import csv
import json
import re
import sys

NUMBER = r"(-?[0-9.]+(e[+-][0-9]+)?|nan|-?inf)"
LIST_CELL = re.compile(r'^"\[%s(, %s)*\]"$' % (NUMBER, NUMBER))


def parse_cell(cell):
    """A CSV cell as kcc wrote it: a float, or a list for a quoted array."""
    if cell.startswith('"'):
        if not LIST_CELL.match(cell):
            sys.exit("cell %r is not an array as Keras writes one" % cell)
        return [float(v) for v in cell[2:-2].split(", ")]
    return float(cell)


def difference(key, kcc, keras):
    if isinstance(keras, list) != isinstance(kcc, list):
        sys.exit("%s: Keras logs %r, kcc %r" % (key, keras, kcc))
    if not isinstance(keras, list):
        return abs(kcc - keras)
    if len(kcc) != len(keras):
        sys.exit("%s: Keras logs %d values, kcc %d" %
                 (key, len(keras), len(kcc)))
    return max(abs(a - b) for a, b in zip(kcc, keras))


def main():
    expected = json.load(open(sys.argv[1]))["cases"][sys.argv[2]]
    what, path, tol = sys.argv[3], sys.argv[4], float(sys.argv[5])
    if what == "history":
        rows = list(csv.DictReader(open(path, newline="")))
        keras = expected["history"]
        logged = {k: [parse_cell(r[k]) for r in rows]
                  for k in rows[0] if k != "epoch"}
    else:
        keras = {k: [v] for k, v in expected["evaluate"].items()}
        logged = {k: [v] for k, v in json.load(open(path))["logs"].items()}
    if sorted(logged) != sorted(keras):
        sys.exit("kcc logs %s, Keras %s" % (sorted(logged), sorted(keras)))
    worst, worst_key, lists = 0.0, "", 0
    for key, values in keras.items():
        if len(logged[key]) != len(values):
            sys.exit("%s: %d epochs logged, Keras ran %d" %
                     (key, len(logged[key]), len(values)))
        for a, b in zip(logged[key], values):
            d = difference(key, a, b)
            lists += isinstance(b, list)
            if d > worst:
                worst, worst_key = d, key
    print("%s %s: %d keys, %d list values, max difference %.2e (%s)" %
          (sys.argv[2], what, len(keras), lists, worst, worst_key))
    if worst > tol:
        sys.exit("over the tolerance %g" % tol)


if __name__ == "__main__":
    main()
