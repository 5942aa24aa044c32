"""Keras's callbacks around kcc's fit, evaluate and predict loops.

kcc's Trainer runs the epochs and batches in C++ and calls this driver at
Keras's hooks. It runs a keras.callbacks.CallbackList (History, the
ProgbarLogger when verbose, the user's callbacks), syncs kcc's weights into
the Keras model before the validation and on_epoch_end when a callback may
look at them (so `self.model` sees them), reads the optimizer's learning
rate back into kcc's step after on_epoch_begin, and reports
`model.stop_training` (stop_evaluating, stop_predicting). Batch hooks are
forwarded only when a callback overrides them (Keras's progress bar: a few
a second).
"""

from kcc import _session

_BATCH_HOOKS = {
    "train": ("on_batch_begin", "on_batch_end", "on_train_batch_begin",
              "on_train_batch_end"),
    "test": ("on_test_batch_begin", "on_test_batch_end"),
    "predict": ("on_predict_batch_begin", "on_predict_batch_end"),
}


def batch_hooks(callback_list, run="train"):
    """Which batch hooks of a `run` ("train", "test" or "predict") kcc's
    loop calls: "every" batch's when a callback overrides them, "progress"
    when only Keras's progress bar reads them (the run's first batch, where
    Progbar starts its step clock, then at most one every 50 ms, Progbar's
    own redraw interval; the last line is drawn from the end's logs),
    "first" for the bar at verbose=2 (it prints only that last line), else
    "none"."""
    from keras import callbacks as kc
    from keras.src.utils.python_utils import is_default

    mode = "none"
    for c in callback_list.callbacks:
        if all(is_default(getattr(c, hook)) for hook in _BATCH_HOOKS[run]):
            continue
        if type(c) is not kc.ProgbarLogger:
            return "every"
        mode = "first" if getattr(c, "verbose", 1) == 2 else "progress"
    return mode


def _touches(callback):
    """What a callback may touch at an epoch boundary: "weights" (it reads
    self.model's weights or optimizer state) and "lr" (it sets the learning
    rate). Keras's own classes, exactly (a subclass may do anything); any
    other callback may touch both."""
    from keras import callbacks as kc

    kind = type(callback)
    if kind is kc.EarlyStopping:
        return {"weights"} if callback.restore_best_weights else set()
    if kind in (kc.History, kc.ProgbarLogger, kc.CSVLogger,
                kc.TerminateOnNaN):
        return set()
    if kind is kc.ModelCheckpoint:
        return {"weights"}
    if kind in (kc.LearningRateScheduler, kc.ReduceLROnPlateau):
        return {"lr"}
    return {"weights", "lr"}


def needs_epoch_sync(callback_list):
    """Whether a callback may look at `self.model`'s weights at an epoch's
    end. Syncing costs a copy of every variable into the backend, a
    millisecond or more an epoch: a fit without such callbacks syncs once,
    at its end."""
    return any("weights" in _touches(c) for c in callback_list.callbacks)


def may_set_learning_rate(callback_list):
    """Whether a callback may change the optimizer's learning rate: reading
    it back costs a device round trip an epoch."""
    return any("lr" in _touches(c) for c in callback_list.callbacks)


def keras_logs(logs):
    """kcc's logs in Keras's order: loss, metrics, then val_loss, val_*."""
    def rank(key):
        val = key.startswith("val_")
        base = key[4:] if val else key
        return (val, base != "loss")

    return {k: logs[k] for k in sorted(logs, key=rank)}


class Driver:
    """fit()'s hooks, and evaluate()'s and predict()'s, into `callbacks`.
    `in_fit`: the test hooks are fit()'s validation."""

    def __init__(self, model, session, callbacks, in_fit=True):
        self.model = model
        self.session = session
        self.callbacks = callbacks
        self.in_fit = in_fit
        self.sync_each_epoch = in_fit and needs_epoch_sync(callbacks)
        self.lr_may_change = in_fit and may_set_learning_rate(callbacks)
        self.synced = False

    def _stop(self, flag="stop_training"):
        return bool(getattr(self.model, flag, False))

    def _sync(self):
        """kcc's weights into the Keras model, once an epoch."""
        if self.sync_each_epoch and not self.synced:
            _session.pull_state(self.session, self.model)
            self.synced = True

    def on_train_begin(self):
        self.callbacks.on_train_begin()
        _session.push_learning_rate(self.session, self.model)
        return self._stop()

    def on_epoch_begin(self, epoch):
        self.synced = False
        self.callbacks.on_epoch_begin(epoch)
        if self.lr_may_change:
            _session.push_learning_rate(self.session, self.model)
        return self._stop()

    def on_train_batch_begin(self, batch):
        self.callbacks.on_train_batch_begin(batch)
        return self._stop()

    def on_train_batch_end(self, batch, logs):
        self.callbacks.on_train_batch_end(batch, keras_logs(logs))
        return self._stop()

    def on_epoch_end(self, epoch, logs):
        self._sync()
        self.callbacks.on_epoch_end(epoch, keras_logs(logs))
        # ReduceLROnPlateau sets it here: kcc's step follows at once, so the
        # rate handed back at the end is the one Keras's callbacks chose.
        if self.lr_may_change:
            _session.push_learning_rate(self.session, self.model)
        return self._stop()

    def on_train_end(self, logs):
        _session.pull_state(self.session, self.model)
        self.callbacks.on_train_end(keras_logs(logs))
        return False

    def on_test_begin(self):
        # fit()'s validation sees the epoch's weights, as under Keras.
        if self.in_fit:
            self._sync()
        self.model.stop_evaluating = False
        self.callbacks.on_test_begin()
        return self._stop("stop_evaluating")

    def on_test_batch_begin(self, batch):
        self.callbacks.on_test_batch_begin(batch)
        return self._stop("stop_evaluating")

    def on_test_batch_end(self, batch, logs):
        self.callbacks.on_test_batch_end(batch, keras_logs(logs))
        return self._stop("stop_evaluating")

    def on_test_end(self, logs):
        self.callbacks.on_test_end(keras_logs(logs))
        return False

    def on_predict_begin(self):
        self.model.stop_predicting = False
        self.callbacks.on_predict_begin()
        return self._stop("stop_predicting")

    def on_predict_batch_begin(self, batch):
        self.callbacks.on_predict_batch_begin(batch)
        return self._stop("stop_predicting")

    def on_predict_batch_end(self, batch, outputs):
        # Keras's logs: {"outputs": the batch's output (a list with
        # several)}.
        out = outputs[0] if len(outputs) == 1 else outputs
        self.callbacks.on_predict_batch_end(batch, {"outputs": out})
        return self._stop("stop_predicting")

    def on_predict_end(self):
        self.callbacks.on_predict_end()
        return False


def driver_for(model, session, callback_list):
    """evaluate()'s or predict()'s driver. Always one, even without
    callbacks (verbose 0): its batch ends are where a Ctrl-C is looked
    for."""
    return Driver(model, session, callback_list, in_fit=False)
