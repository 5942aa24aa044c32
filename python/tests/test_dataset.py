"""A keras.utils.PyDataset as x: kcc reads its batches one at a time, as
Keras's fit does, with the same History."""

import keras
import numpy as np

import kcc
from conftest import assert_history_close, twins


class Batches(keras.utils.PyDataset):
    """Batches drawn from (seed, index) on demand: nothing is held."""

    def __init__(self, batches, size, seed):
        super().__init__()
        self.batches, self.size, self.seed = batches, size, seed
        self.epochs_ended = 0

    def __len__(self):
        return self.batches

    def __getitem__(self, i):
        rng = np.random.default_rng([self.seed, i])
        x = rng.normal(size=(self.size, 5)).astype("float32")
        return {"features": x}, (x.sum(axis=1, keepdims=True) > 0).astype("float32")

    def on_epoch_end(self):
        self.epochs_ended += 1


def net():
    x = keras.Input((5,), name="features")
    h = keras.layers.Dense(8, activation="relu")(x)
    return keras.Model(x, keras.layers.Dense(1, activation="sigmoid")(h))


def compile_args():
    return dict(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy",
                metrics=["accuracy"])


def test_py_dataset_matches_keras():
    ours, theirs = twins(net, compile_args)
    train, val = Batches(6, 16, 1), Batches(2, 16, 2)
    fit = dict(epochs=3, validation_data=val, verbose=0, shuffle=False)
    expected = theirs.fit(train, **fit).history
    ours_train = Batches(6, 16, 1)
    got = kcc.fit(ours, ours_train, **fit).history
    diff = assert_history_close(got, expected)
    print(f"PyDataset: history max |kcc - keras| = {diff:.2e}")
    assert ours_train.epochs_ended == 3
    np.testing.assert_allclose(
        kcc.evaluate(ours, val), theirs.evaluate(val, verbose=0), atol=1e-5)


def test_shuffle_reorders_batches():
    model, _ = twins(net, compile_args)
    seen = []

    class Logged(Batches):
        def __getitem__(self, i):
            seen.append(i)
            return super().__getitem__(i)

    kcc.fit(model, Logged(8, 4, 1), epochs=2, verbose=0, seed=3)
    first, second = seen[:8], seen[8:]
    assert sorted(first) == sorted(second) == list(range(8))
    assert first != second  # a new order each epoch, from (seed, epoch)


def test_bad_batch_is_located():
    class Broken(Batches):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return ({"features": x["features"][:, :3]}, y) if i == 2 else (x, y)

    model, _ = twins(net, compile_args)
    try:
        kcc.fit(model, Broken(4, 8, 1), epochs=1, verbose=0)
    except kcc.Error as e:
        assert "x[2]" in str(e) and "features" in str(e), str(e)
    else:
        raise AssertionError("a batch of the wrong shape trained")
