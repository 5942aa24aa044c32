"""Keras's callbacks driven by kcc.fit fire where Keras's model.fit fires
them, with the same logs, and see kcc's weights in self.model."""

import csv

import keras
import numpy as np

import kcc
from conftest import last_progress_line, twins


def mlp():
    return keras.Sequential([
        keras.Input((5,)),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(1),
    ])


def COMPILE():
    return dict(optimizer=keras.optimizers.SGD(0.05), loss="mse")


def data(rng, n=32):
    x = rng.normal(size=(n, 5)).astype("float32")
    return x, (x[:, :1] * 2 - x[:, 1:2]).astype("float32")


class Recorder(keras.callbacks.Callback):
    """Records hooks with rounded logs and a weight checksum; stops
    training at epoch `stop_at`."""

    def __init__(self, stop_at=None):
        super().__init__()
        self.events, self.stop_at = [], stop_at

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin",))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        kernel = float(np.sum(self.model.get_weights()[0]))
        self.events.append(("epoch_end", epoch, sorted(logs),
                            round(logs["loss"], 4), round(kernel, 4)))
        if epoch == self.stop_at:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.events.append(("train_end", sorted(logs or {})))


def test_user_callback_sees_the_same_hooks_logs_and_weights(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)
    fit = dict(batch_size=8, epochs=5, validation_split=0.25, shuffle=False,
               verbose=0)
    expected, got = Recorder(stop_at=2), Recorder(stop_at=2)
    theirs.fit(x, y, callbacks=[expected], **fit)
    history = kcc.fit(ours, x, y, callbacks=[got], **fit)
    assert got.events == expected.events
    assert history.epoch == [0, 1, 2]


class BatchCounter(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.batches = []

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append((batch, round(logs["loss"], 4)))


def test_batch_hooks_when_overridden(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng, 20)
    expected, got = BatchCounter(), BatchCounter()
    theirs.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
               callbacks=[expected])
    kcc.fit(ours, x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
            callbacks=[got])
    assert got.batches == expected.batches


def test_early_stopping_stops_where_keras_stops(rng):
    ours, theirs = twins(mlp, COMPILE)
    # Initial weights drawn here, not by the backend's initializers, so
    # Keras stops at the same epoch on every backend.
    draw = np.random.default_rng(7)
    start = [draw.uniform(-1, 1, w.shape).astype("float32") / np.sqrt(w.shape[0])
             if w.ndim == 2 else np.zeros_like(w) for w in ours.get_weights()]
    ours.set_weights(start)
    theirs.set_weights(start)
    x, y = data(rng)
    fit = dict(batch_size=8, epochs=20, validation_split=0.25, shuffle=False,
               verbose=0)

    def stopper():
        return keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0.05,
                                             patience=1, restore_best_weights=True)

    expected, got = stopper(), stopper()
    keras_history = theirs.fit(x, y, callbacks=[expected], **fit)
    kcc_history = kcc.fit(ours, x, y, callbacks=[got], **fit)
    assert 0 < expected.stopped_epoch < 19
    assert got.stopped_epoch == expected.stopped_epoch
    assert got.best_epoch == expected.best_epoch
    assert kcc_history.epoch == keras_history.epoch
    # restore_best_weights: both models end at the best epoch's weights.
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=0)


def test_learning_rate_callbacks_reach_the_step(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)

    def callbacks():
        return [keras.callbacks.LearningRateScheduler(
                    lambda epoch, lr: lr * 0.5 if epoch else lr),
                keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5,
                                                  patience=0, min_delta=10)]

    fit = dict(batch_size=8, epochs=4, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, callbacks=callbacks(), **fit).history
    got = kcc.fit(ours, x, y, callbacks=callbacks(), **fit).history
    np.testing.assert_allclose(got["learning_rate"], expected["learning_rate"],
                               rtol=1e-6)
    np.testing.assert_allclose(got["loss"], expected["loss"], atol=1e-4, rtol=0)
    assert float(ours.optimizer.learning_rate) == float(
        theirs.optimizer.learning_rate)


def test_csv_logger_and_checkpoint(rng, tmp_path):
    ours, _ = twins(mlp, COMPILE)
    x, y = data(rng)
    path = tmp_path / "log.csv"
    ckpt = tmp_path / "best.keras"
    kcc.fit(ours, x, y, batch_size=8, epochs=2, verbose=0,
            callbacks=[keras.callbacks.CSVLogger(str(path)),
                       keras.callbacks.ModelCheckpoint(str(ckpt), monitor="loss")])
    rows = list(csv.DictReader(open(path)))
    assert [r["epoch"] for r in rows] == ["0", "1"]
    # The checkpoint holds kcc's weights at the last epoch.
    saved = keras.saving.load_model(ckpt)
    for a, b in zip(saved.get_weights(), ours.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_terminate_on_nan_and_lambda_callback(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)
    # A NaN target in batch 1 of epoch 0 (batch size 8, unshuffled): a NaN
    # loss on every backend (TensorFlow's relu maps a NaN input to 0).
    y[13, 0] = np.nan

    def callbacks(seen):
        return [keras.callbacks.LambdaCallback(
                    on_epoch_end=lambda epoch, logs: seen.append(
                        (epoch, round(logs["loss"], 4)))),
                keras.callbacks.TerminateOnNaN()]

    seen_keras, seen_kcc = [], []
    fit = dict(batch_size=8, epochs=3, shuffle=False, verbose=0)
    theirs.fit(x, y, callbacks=callbacks(seen_keras), **fit)
    kcc.fit(ours, x, y, callbacks=callbacks(seen_kcc), **fit)
    # Both stop after the NaN batch, in epoch 0, after the same steps.
    assert int(ours.optimizer.iterations) == int(theirs.optimizer.iterations) == 2
    assert [e for e, _ in seen_kcc] == [e for e, _ in seen_keras] == [0]
    assert np.isnan(seen_kcc[0][1]) and np.isnan(seen_keras[0][1])

    y[13, 0] = 0.0
    seen_keras, seen_kcc = [], []
    ours, theirs = twins(mlp, COMPILE)
    theirs.fit(x, y, callbacks=callbacks(seen_keras), **fit)
    kcc.fit(ours, x, y, callbacks=callbacks(seen_kcc), **fit)
    assert seen_kcc == seen_keras and len(seen_kcc) == 3


def _progress_shape(text):
    """Each epoch's last progress line, as last_progress_line gives it.
    (How many intermediate updates print depends on the step's speed.)"""
    import re

    text = re.sub(r"\x08+", "", text)
    return [last_progress_line(epoch)
            for epoch in re.split(r"Epoch [0-9]+/[0-9]+\n", text)[1:]]


def test_progress_output_is_keras_s(rng, capfd):
    for verbose in (1, 2):
        ours, theirs = twins(mlp, COMPILE)
        x, y = data(rng)
        fit = dict(batch_size=8, epochs=2, validation_split=0.25,
                   shuffle=False, verbose=verbose)
        capfd.readouterr()
        theirs.fit(x, y, **fit)
        expected = capfd.readouterr().out
        kcc.fit(ours, x, y, **fit)
        got = capfd.readouterr().out
        shape = _progress_shape(got)
        assert len(shape) == 2 and "val_loss: #" in shape[-1]
        assert shape == _progress_shape(expected), (got, expected)


def test_weights_sync_at_epoch_ends_only_for_callbacks_that_look():
    """Syncing kcc's state into the Keras model costs a copy of every
    variable: a fit whose callbacks only read logs skips it until the end;
    a callback that may read self.model gets it at every epoch's end."""
    from kcc import _callbacks

    def needs(*callbacks):
        return _callbacks.needs_epoch_sync(keras.callbacks.CallbackList(
            list(callbacks), add_history=True, add_progbar=True))

    assert not needs()
    assert not needs(keras.callbacks.CSVLogger("/dev/null"),
                     keras.callbacks.TerminateOnNaN(),
                     keras.callbacks.ReduceLROnPlateau(),
                     keras.callbacks.LearningRateScheduler(lambda e, lr: lr),
                     keras.callbacks.EarlyStopping())
    assert needs(keras.callbacks.EarlyStopping(restore_best_weights=True))
    assert needs(keras.callbacks.ModelCheckpoint("/tmp/unused.keras"))
    assert needs(Recorder())
    assert needs(keras.callbacks.LambdaCallback())


def test_batch_hooks_and_learning_rate_reads_only_where_needed():
    """The progress bar alone gets a few batch ends a second, a callback
    overriding a batch hook every one; the learning rate is read back at
    epoch boundaries only when a callback may have changed it."""
    from kcc import _callbacks

    def listed(*callbacks, verbose=0):
        return keras.callbacks.CallbackList(
            list(callbacks), add_history=True, add_progbar=verbose != 0,
            verbose=verbose, epochs=2, steps=4)

    assert _callbacks.batch_hooks(listed()) == "none"
    assert _callbacks.batch_hooks(listed(verbose=1)) == "progress"
    assert _callbacks.batch_hooks(listed(verbose=2)) == "first"
    assert _callbacks.batch_hooks(listed(verbose="auto")) == "progress"
    assert _callbacks.batch_hooks(listed(BatchCounter(), verbose=1)) == "every"
    assert not _callbacks.may_set_learning_rate(listed(
        keras.callbacks.EarlyStopping(), verbose=1))
    assert _callbacks.may_set_learning_rate(listed(
        keras.callbacks.ReduceLROnPlateau()))
    assert _callbacks.may_set_learning_rate(listed(Recorder()))
