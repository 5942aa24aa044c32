"""Fixtures for the kcc package's tests: tiny Keras models, written by Keras
itself in each test, trained side by side by Keras and by kcc from the
same initial weights on the same batches (shuffle=False)."""

import os
import re

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402


def twins(build, compile_args):
    """Two models of `build()` holding the same weights, each compiled with
    its own optimizer from `compile_args()`."""
    keras.utils.set_random_seed(1)
    a = build()
    b = build()
    b.set_weights(a.get_weights())
    a.compile(**compile_args())
    b.compile(**compile_args())
    return a, b


def assert_history_close(kcc_history, keras_history, atol=1e-4):
    assert kcc_history.keys() == keras_history.keys()
    for key, values in keras_history.items():
        np.testing.assert_allclose(
            kcc_history[key], values, atol=atol, rtol=0, err_msg=key)
    return max(
        float(np.max(np.abs(np.subtract(kcc_history[k], v))))
        for k, v in keras_history.items())


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def last_progress_line(text):
    """The last line a Keras progress bar left in `text`, every number
    (times, rates, values) as # and time units as #/step: the layout left
    must be Keras's. Trailing spaces go too: Progbar pads a line shorter
    than the one it overwrites, by as much as the timings printed before."""
    text = re.sub(r"\x08+", "", text).replace("\r", "\n")
    last = text.strip("\n").splitlines()[-1].rstrip(" ")
    last = re.sub(r"(us|ms|s)/step", "#/step", last)
    return re.sub(r"[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?", "#", last)
