#!/usr/bin/env python3
"""Exits 0 when the second IR file has at most 5% more lines than the
first. Used on the same model lowered for a short and a long sequence: a
loop over time keeps the module's size (the planner and the fusions may
choose a little differently for other sizes); unrolled steps would
multiply it."""
import sys

short, long_ = (sum(1 for _ in open(path)) for path in sys.argv[1:3])
print(f"{sys.argv[1]}: {short} lines, {sys.argv[2]}: {long_} lines")
if long_ > short * 1.05:
    sys.exit("the module grows with the sequence length")
