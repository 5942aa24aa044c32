"""kcc.evaluate's and kcc.predict's callbacks, and fit's validation hooks,
fire as Keras's model.evaluate, model.predict and model.fit fire them, with
the same logs and outputs; the progress bars print as Keras's."""

import keras
import numpy as np

import kcc
from conftest import last_progress_line, twins


def mlp():
    return keras.Sequential([
        keras.Input((5,)),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])


def COMPILE():
    return dict(optimizer=keras.optimizers.SGD(0.05),
                loss="sparse_categorical_crossentropy", metrics=["accuracy"])


def data(rng, n=30):
    x = rng.normal(size=(n, 5)).astype("float32")
    return x, (np.argmax(x[:, :3], axis=1)).astype("int32")


def _rounded(logs):
    return sorted((k, round(float(v), 4)) for k, v in (logs or {}).items())


class RunRecorder(keras.callbacks.Callback):
    """Every test and predict hook, the train batch ends and the epoch
    ends, with rounded logs (a predict batch: its rows and rounded sum);
    sets stop_evaluating / stop_predicting after batch `stop_after`."""

    def __init__(self, stop_after=None):
        super().__init__()
        self.events, self.stop_after = [], stop_after

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("train_batch_end", batch))

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch_end", epoch, _rounded(logs)))

    def on_test_begin(self, logs=None):
        self.events.append(("test_begin",))

    def on_test_batch_begin(self, batch, logs=None):
        self.events.append(("test_batch_begin", batch))

    def on_test_batch_end(self, batch, logs=None):
        self.events.append(("test_batch_end", batch, _rounded(logs)))
        if batch == self.stop_after:
            self.model.stop_evaluating = True

    def on_test_end(self, logs=None):
        self.events.append(("test_end", _rounded(logs)))

    def on_predict_begin(self, logs=None):
        self.events.append(("predict_begin",))

    def on_predict_batch_begin(self, batch, logs=None):
        self.events.append(("predict_batch_begin", batch))

    def on_predict_batch_end(self, batch, logs=None):
        out = np.asarray(logs["outputs"])
        self.events.append(("predict_batch_end", batch, out.shape,
                            round(float(out.sum()), 4)))
        if batch == self.stop_after:
            self.model.stop_predicting = True

    def on_predict_end(self, logs=None):
        self.events.append(("predict_end",))


def test_evaluate_hooks_and_running_logs_are_keras_s(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)
    expected, got = RunRecorder(), RunRecorder()
    want = theirs.evaluate(x, y, batch_size=8, verbose=0,
                           callbacks=[expected], return_dict=True)
    have = kcc.evaluate(ours, x, y, batch_size=8, verbose=0, callbacks=[got],
                        return_dict=True)
    assert got.events == expected.events
    assert len(got.events) == 2 + 2 * 4
    assert _rounded(have) == _rounded(want)


def test_stop_evaluating_and_stop_predicting(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)
    expected, got = RunRecorder(stop_after=1), RunRecorder(stop_after=1)
    want = theirs.evaluate(x, y, batch_size=8, verbose=0,
                           callbacks=[expected], return_dict=True)
    have = kcc.evaluate(ours, x, y, batch_size=8, verbose=0, callbacks=[got],
                        return_dict=True)
    assert got.events == expected.events
    assert _rounded(have) == _rounded(want)

    expected, got = RunRecorder(stop_after=1), RunRecorder(stop_after=1)
    theirs.predict(x, batch_size=8, verbose=0, callbacks=[expected])
    cut = kcc.predict(ours, x, batch_size=8, verbose=0, callbacks=[got])
    assert got.events == expected.events
    assert cut.shape == (16, 3)


def test_predict_hooks_see_each_batch_s_outputs(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, _ = data(rng)
    expected, got = RunRecorder(), RunRecorder()
    want = theirs.predict(x, batch_size=8, verbose=0, callbacks=[expected])
    have = kcc.predict(ours, x, batch_size=8, verbose=0, callbacks=[got])
    assert got.events == expected.events
    assert [e[2] for e in got.events if e[0] == "predict_batch_end"] == [
        (8, 3), (8, 3), (8, 3), (6, 3)]
    np.testing.assert_allclose(have, want, atol=1e-6)
    # Without callbacks and silent: one call, the same predictions.
    np.testing.assert_array_equal(kcc.predict(ours, x, batch_size=8,
                                              verbose=0), have)


def test_generator_predict_calls_the_hooks(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, _ = data(rng, 24)

    def batches():
        for i in range(0, 24, 8):
            yield (x[i:i + 8],)

    expected, got = RunRecorder(), RunRecorder()
    theirs.predict(batches(), verbose=0, callbacks=[expected])
    kcc.predict(ours, batches(), verbose=0, callbacks=[got])
    # Keras reads a generator's length only as it ends: the hooks match.
    assert got.events == expected.events


def test_fit_validation_calls_the_test_hooks(rng):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng, 32)
    vx, vy = data(rng, 12)
    fit = dict(batch_size=8, epochs=2, shuffle=False, verbose=0,
               validation_data=(vx, vy))
    expected, got = RunRecorder(), RunRecorder()
    theirs.fit(x, y, callbacks=[expected], **fit)
    kcc.fit(ours, x, y, callbacks=[got], **fit)
    assert got.events == expected.events
    assert got.events[8][:2] == ("test_batch_end", 1)  # 12 rows: 8 + 4


def test_evaluate_and_predict_progress_is_keras_s(rng, capfd):
    ours, theirs = twins(mlp, COMPILE)
    x, y = data(rng)
    for verbose in (1, 2):
        capfd.readouterr()
        theirs.evaluate(x, y, batch_size=8, verbose=verbose)
        expected = capfd.readouterr().out
        kcc.evaluate(ours, x, y, batch_size=8, verbose=verbose)
        got = capfd.readouterr().out
        assert "loss: #" in last_progress_line(got)
        assert last_progress_line(got) == last_progress_line(expected), (
            got, expected)

        theirs.predict(x, batch_size=8, verbose=verbose)
        expected = capfd.readouterr().out
        kcc.predict(ours, x, batch_size=8, verbose=verbose)
        got = capfd.readouterr().out
        assert last_progress_line(got) == last_progress_line(expected), (
            got, expected)
    kcc.evaluate(ours, x, y, batch_size=8, verbose=0)
    kcc.predict(ours, x, batch_size=8, verbose=0)
    assert capfd.readouterr().out == ""
