"""Generators and iterators as x, steps_per_epoch continuing across epochs,
validation_steps and validation_freq: each against Keras's own fit."""

import warnings

import keras
import numpy as np
import pytest

import kcc
from conftest import assert_history_close, twins
from test_dataset import compile_args, net


def batch(seed, i, size=16):
    rng = np.random.default_rng([seed, i])
    x = rng.normal(size=(size, 5)).astype("float32")
    return x, (x.sum(axis=1, keepdims=True) > 0).astype("float32")


def endless(seed, taken=None):
    """An infinite generator of batches; `taken` records what was read."""
    i = 0
    while True:
        if taken is not None:
            taken.append(i)
        yield batch(seed, i)
        i += 1


def arrays(n=100, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5)).astype("float32")
    return x, (x.sum(axis=1, keepdims=True) > 0).astype("float32")


def keras_fit(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras's "ran out of data"
        return model.fit(*args, **kwargs).history


def test_steps_per_epoch_continues_the_pass_as_keras():
    # 10 batches, 3 an epoch: epochs read batches 0-2, 3-5, 6-8, then 9
    # alone (Keras cuts the epoch at the data's end), then 0-2 again.
    ours, theirs = twins(net, compile_args)
    x, y = arrays()
    fit = dict(batch_size=10, epochs=5, steps_per_epoch=3, shuffle=False,
               verbose=0)
    expected = keras_fit(theirs, x, y, **fit)
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"steps_per_epoch over arrays: history max |kcc - keras| = {diff:.2e}")


def test_endless_generator_with_steps_per_epoch_matches_keras():
    ours, theirs = twins(net, compile_args)
    fit = dict(epochs=3, steps_per_epoch=4, verbose=0)
    expected = keras_fit(theirs, endless(1), **fit)
    taken = []
    got = kcc.fit(ours, endless(1, taken), **fit).history
    diff = assert_history_close(got, expected)
    print(f"generator: history max |kcc - keras| = {diff:.2e}")
    # Read once, in order, and no further than the fit needs (plus the
    # read-ahead, which never exceeds a few batches).
    assert taken[:12] == list(range(12)) and len(taken) <= 12 + 4


def test_generator_validation_steps_and_freq_match_keras():
    ours, theirs = twins(net, compile_args)
    fit = dict(epochs=4, steps_per_epoch=3, validation_steps=2,
               validation_freq=2, verbose=0)
    expected = keras_fit(theirs, endless(1), validation_data=endless(2), **fit)
    got = kcc.fit(ours, endless(1), validation_data=endless(2), **fit).history
    assert len(got["val_loss"]) == 2  # after epochs 2 and 4 only
    diff = assert_history_close(got, expected)
    print(f"generator validation: history max |kcc - keras| = {diff:.2e}")


def test_validation_steps_and_freq_list_over_arrays():
    ours, theirs = twins(net, compile_args)
    x, y = arrays()
    vx, vy = arrays(60, seed=6)
    fit = dict(batch_size=10, epochs=3, shuffle=False, verbose=0,
               validation_data=(vx, vy), validation_steps=2,
               validation_batch_size=20, validation_freq=[1, 3])
    expected = keras_fit(theirs, x, y, **fit)
    got = kcc.fit(ours, x, y, **fit).history
    assert len(got["val_loss"]) == 2
    assert_history_close(got, expected)


def test_iterable_with_length_is_read_anew_each_epoch():
    class Loader:
        """Re-iterable with a length, as a torch DataLoader."""

        def __len__(self):
            return 5

        def __iter__(self):
            return (batch(3, i) for i in range(5))

    class Indexed(keras.utils.PyDataset):
        """The same batches for Keras (which takes no bare iterables)."""

        def __len__(self):
            return 5

        def __getitem__(self, i):
            return batch(3, i)

    ours, theirs = twins(net, compile_args)
    expected = keras_fit(theirs, Indexed(), epochs=2, shuffle=False, verbose=0)
    got = kcc.fit(ours, Loader(), epochs=2, verbose=0).history
    assert_history_close(got, expected)


def test_evaluate_a_generator():
    ours, theirs = twins(net, compile_args)
    expected = theirs.evaluate(endless(4), steps=3, verbose=0)
    np.testing.assert_allclose(kcc.evaluate(ours, endless(4), steps=3),
                               expected, atol=1e-5)


def test_predict_generators_and_datasets_as_keras():
    from test_dataset import Batches

    ours, theirs = twins(net, compile_args)

    def finite(n, last=16):
        for i in range(n):  # (x,) batches as Keras wants, a short last one
            x, _ = batch(6, i, last if i == n - 1 else 16)
            yield (x,)

    for data, steps in ((lambda: finite(4, last=5), None),
                        (lambda: endless(7), 3),
                        (lambda: Batches(5, 8, 2), None),
                        (lambda: Batches(5, 8, 2), 2)):
        expected = theirs.predict(data(), steps=steps, verbose=0)
        got = kcc.predict(ours, data(), steps=steps)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_generators_refused_clearly():
    model, _ = twins(net, compile_args)
    with pytest.raises(ValueError, match="without a length: give steps_per_epoch"):
        kcc.fit(model, endless(1), epochs=1, verbose=0)

    def three():
        for i in range(3):
            yield batch(1, i)

    with pytest.raises(ValueError, match="ran out after 3 batches"):
        kcc.fit(model, three(), epochs=2, steps_per_epoch=2, verbose=0)
    with pytest.raises(ValueError, match="validation_freq"):
        kcc.fit(model, *arrays(), epochs=1, verbose=0, validation_freq="2")


def test_backend_tensors_cross_through_dlpack():
    # The backend's own tensors as x and y (JAX arrays under JAX, tf or
    # torch tensors under the others): read through DLPack, same history.
    ours, theirs = twins(net, compile_args)
    x, y = arrays()
    fit = dict(batch_size=10, epochs=2, shuffle=False, verbose=0)
    expected = keras_fit(theirs, x, y, **fit)
    tx, ty = keras.ops.convert_to_tensor(x), keras.ops.convert_to_tensor(y)
    got = kcc.fit(ours, tx, ty, **fit).history
    assert_history_close(got, expected)
    view = kcc._data._array(tx, "x")
    np.testing.assert_array_equal(view, x)
