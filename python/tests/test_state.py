"""After kcc.fit the Keras model continues where kcc left off: weights,
optimizer slots and step count; errors carry kcc's located message."""

import keras
import numpy as np
import pytest

import kcc
from conftest import twins


def net():
    return keras.Sequential([
        keras.Input((4,)),
        keras.layers.Dense(6, activation="tanh"),
        keras.layers.Dense(2, activation="softmax"),
    ])


def COMPILE():
    return dict(optimizer=keras.optimizers.Adam(0.02),
                loss="sparse_categorical_crossentropy", metrics=["accuracy"])


def data(rng, n=24):
    return (rng.normal(size=(n, 4)).astype("float32"),
            rng.integers(0, 2, size=n).astype("int32"))


def test_keras_continues_from_kcc_optimizer_state(rng):
    ours, theirs = twins(net, COMPILE)
    x, y = data(rng)
    fit = dict(batch_size=8, shuffle=False, verbose=0)
    theirs.fit(x, y, epochs=2, **fit)
    kcc.fit(ours, x, y, epochs=1, **fit)
    assert int(ours.optimizer.iterations) == 3
    ours.fit(x, y, epochs=1, **fit)  # Keras's second epoch, kcc's Adam state
    assert int(ours.optimizer.iterations) == int(theirs.optimizer.iterations)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_kcc_continues_from_keras_optimizer_state(rng):
    ours, theirs = twins(net, COMPILE)
    x, y = data(rng)
    fit = dict(batch_size=8, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, epochs=2, **fit).history["loss"][1]
    ours.fit(x, y, epochs=1, **fit)
    got = kcc.fit(ours, x, y, epochs=2, initial_epoch=1, **fit).history["loss"]
    assert got == pytest.approx([expected], abs=1e-5)


def test_interpreted_mode_agrees(rng):
    ours, theirs = twins(net, COMPILE)
    x, y = data(rng)
    fit = dict(batch_size=8, epochs=2, shuffle=False, verbose=0)
    a = kcc.fit(ours, x, y, **fit).history
    b = kcc.fit(theirs, x, y, mode="interpreted", **fit).history
    np.testing.assert_allclose(a["loss"], b["loss"], atol=1e-5, rtol=0)


def test_keras_file_path(rng, tmp_path):
    model, _ = twins(net, COMPILE)
    path = tmp_path / "net.keras"
    model.save(path)
    x, y = data(rng)
    history = kcc.fit(str(path), x, y, epochs=1, verbose=0)
    assert history.model is not None and len(history.history["loss"]) == 1


def test_errors_are_located(rng):
    model, _ = twins(net, COMPILE)
    with pytest.raises(kcc.Error, match="x|numbers|input"):
        kcc.fit(model, np.zeros((8, 5), "float32"), np.zeros(8, "int32"),
                verbose=0)


def test_version():
    assert kcc.__version__.count(".") == 2


def _interrupted(run):
    """Runs `run()` while Ctrl-C is pressed every second (again and again,
    as a user would: Python drops an interrupt that lands in a finalizer,
    "Exception ignored in ..."); it must raise KeyboardInterrupt."""
    import os
    import signal
    import threading

    done = threading.Event()

    def press():
        while not done.wait(1.0):
            os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        done.set()
        presser.join()


def test_ctrl_c_stops_at_a_step_boundary(rng):
    model, _ = twins(net, COMPILE)
    x, y = data(rng)
    _interrupted(lambda: kcc.fit(model, x, y, batch_size=8, epochs=10**6,
                                 verbose=0))
    # What was trained so far is in the Keras model.
    assert int(model.optimizer.iterations) > 0


def test_ctrl_c_stops_evaluate_and_predict(rng):
    model, _ = twins(net, COMPILE)
    x, y = data(rng)

    class Endless(keras.utils.PyDataset):
        """A million batches: only Ctrl-C ends a run over it."""

        def __len__(self):
            return 10**6

        def __getitem__(self, i):
            return x[:8], y[:8]

    _interrupted(lambda: kcc.evaluate(model, Endless(), verbose=0))
    _interrupted(lambda: kcc.predict(model, Endless(), verbose=0))
