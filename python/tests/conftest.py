"""Fixtures for the kcc package's tests: tiny Keras models, written by Keras
itself in each test, trained side by side by Keras and by kcc from the
same initial weights on the same batches (shuffle=False)."""

import os

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
