#!/usr/bin/env python3
"""Fits the two polynomials of runtime/kernels/Erf.h (numpy, scipy).

Minimax by Lawson's iteration (reweighted least squares) on Chebyshev
points, each error weighted to what it costs in the f32 result:
  Q(s) ~ erf(x)/x - 1 in s = x^2 on [0, SPLIT^2]: erf(x) = x + x Q, so an
    absolute error in Q is a relative one in erf;
  L(t) ~ log(erfc(t)) on [SPLIT, 4]: erf = 1 - exp(L), so an error in L
    reaches erf times erfc(t).
Prints the coefficients as f32, highest power first, and the weighted error
in units of 2^-24.
"""
import numpy as np
from scipy.special import erf, erfc

SPLIT, CLAMP, SMALL_DEGREE, LARGE_DEGREE = 0.921875, 4.0, 5, 6


def lawson(xs, target, weight, degree, iterations=300):
    vander = np.vander(xs, degree + 1, increasing=True)
    w = np.ones_like(xs)
    for _ in range(iterations):
        root = np.sqrt(w)
        c, *_ = np.linalg.lstsq(vander * (weight * root)[:, None],
                                target * weight * root, rcond=None)
        err = np.abs(weight * (vander @ c - target))
        w = w * err
        w /= w.sum()
    return c, err.max()


def chebyshev(lo, hi, n=4000):
    return lo + (1 - np.cos(np.linspace(0, np.pi, n))) / 2 * (hi - lo)


def show(name, c, err):
    print(f"{name}: max weighted error {err:.3g} x 2^-24")
    print(", ".join("%.9ef" % np.float32(v) for v in c[::-1]))


s = chebyshev(1e-12, SPLIT * SPLIT)
x = np.sqrt(s)
show("Q", *lawson(s, erf(x) / x - 1, np.full_like(s, 2.0**24), SMALL_DEGREE))
t = chebyshev(SPLIT, CLAMP)
show("L", *lawson(t, np.log(erfc(t)), erfc(t) * 2.0**24, LARGE_DEGREE))
