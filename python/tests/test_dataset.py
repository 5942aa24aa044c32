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


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_py_dataset_larger_than_memory_held():
    """256 MB of examples, drawn batch by batch: the process's resident
    memory grows by a small multiple of a 4 MB batch (the batches in
    flight), never by the data set."""

    class Big(keras.utils.PyDataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            rng = np.random.default_rng(i)
            x = rng.standard_normal((4096, 256), dtype=np.float32)
            return x, x[:, :1] * 0.5

    class Peak(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.peak = 0

        def on_train_batch_end(self, batch, logs=None):
            self.peak = max(self.peak, resident_bytes())

    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    kcc.predict(model, np.zeros((1, 256), "float32"))  # warm up the import
    start, peak = resident_bytes(), Peak()
    history = kcc.fit(model, Big(), epochs=1, verbose=0, callbacks=[peak])
    growth = peak.peak - start
    print(f"PyDataset of 256 MB: resident growth {growth / 2**20:.0f} MB")
    assert growth < 96 * 2**20
    assert np.isfinite(history.history["loss"][0])
