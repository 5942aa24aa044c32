"""kcc.compile(model): Keras's *_on_batch methods on kcc's step; kcc.bench."""

import keras
import numpy as np

import kcc
from conftest import twins


def net():
    return keras.Sequential([
        keras.Input((4,)),
        keras.layers.Dense(6, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])


def compile_args():
    return dict(optimizer=keras.optimizers.Adam(0.02),
                loss="sparse_categorical_crossentropy", metrics=["accuracy"])


def test_on_batch_methods_match_keras(rng):
    ours, theirs = twins(net, compile_args)
    step = kcc.compile(ours)
    batches = [(rng.normal(size=(n, 4)).astype("float32"),
                rng.integers(0, 3, size=n).astype("int32")) for n in (8, 5)]
    for x, y in batches:  # each batch's own logs, as Keras 3's
        expected = theirs.train_on_batch(x, y, return_dict=True)
        got = step.train_on_batch(x, y, return_dict=True)
        assert got.keys() == expected.keys()
        for k in expected:
            assert abs(got[k] - float(expected[k])) < 1e-5, k
    x, y = batches[0]
    np.testing.assert_allclose(step.predict_on_batch(x),
                               theirs.predict_on_batch(x), atol=1e-5)
    np.testing.assert_allclose(step.test_on_batch(x, y),
                               theirs.test_on_batch(x, y), atol=1e-5)
    step.update_model()
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)
    assert int(ours.optimizer.iterations) == 2


def test_bench_times_both_modes():
    model, _ = twins(net, compile_args)
    before = [w.copy() for w in model.get_weights()]
    r = kcc.bench(model, batch_size=16, steps=3, warmup=1)
    assert r["compiled"] > 0 and r["interpreted"] > 0
    assert r["speedup"] == r["interpreted"] / r["compiled"]
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
