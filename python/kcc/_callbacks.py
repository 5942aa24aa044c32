"""Keras's callbacks around kcc's fit loop.

kcc's Trainer runs the epochs and steps in C++ and calls this driver at
Keras's hooks. It runs a keras.callbacks.CallbackList (History, the
ProgbarLogger when verbose, the user's callbacks), syncs kcc's weights into
the Keras model before on_epoch_end when a callback may look at them (so
`self.model` sees them), reads the optimizer's learning rate back into
kcc's step after on_epoch_begin, and reports `model.stop_training`. Batch
hooks are forwarded only when a callback overrides them (Keras's progress
bar: a few a second).
"""

from kcc import _session

_BATCH_HOOKS = (
    "on_batch_begin",
    "on_batch_end",
    "on_train_batch_begin",
    "on_train_batch_end",
)


def batch_hooks(callback_list):
    """Which batch hooks kcc's loop calls: "every" batch's when a callback
    overrides them, "progress" when only Keras's progress bar reads them
    (each epoch's first batch, where Progbar starts its step clock, then at
    most one every 50 ms, Progbar's own redraw interval; the epoch's last
    line is drawn from on_epoch_end's logs), else "none"."""
    from keras import callbacks as kc
    from keras.src.utils.python_utils import is_default

    mode = "none"
    for c in callback_list.callbacks:
        if all(is_default(getattr(c, hook)) for hook in _BATCH_HOOKS):
            continue
        if type(c) is not kc.ProgbarLogger:
            return "every"
        mode = "progress"
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
    def __init__(self, model, session, callbacks):
        self.model = model
        self.session = session
        self.callbacks = callbacks
        self.sync_each_epoch = needs_epoch_sync(callbacks)
        self.lr_may_change = may_set_learning_rate(callbacks)

    def _stop(self):
        return bool(getattr(self.model, "stop_training", False))

    def on_train_begin(self):
        self.callbacks.on_train_begin()
        _session.push_learning_rate(self.session, self.model)
        return self._stop()

    def on_epoch_begin(self, epoch):
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
        logs = keras_logs(logs)
        if self.sync_each_epoch:
            _session.pull_state(self.session, self.model)
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        if val:
            self.callbacks.on_test_begin()
            self.callbacks.on_test_end(val)
        self.callbacks.on_epoch_end(epoch, logs)
        # ReduceLROnPlateau sets it here: kcc's step follows at once, so the
        # rate handed back at the end is the one Keras's callbacks chose.
        if self.lr_may_change:
            _session.push_learning_rate(self.session, self.model)
        return self._stop()

    def on_train_end(self, logs):
        _session.pull_state(self.session, self.model)
        self.callbacks.on_train_end(keras_logs(logs))
        return False
