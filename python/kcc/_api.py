"""kcc.fit, kcc.evaluate and kcc.predict: Keras's Model methods, run by kcc."""

import itertools
import math
import os

import numpy as np

from kcc import _callbacks, _data, _kcc, _session

_END = object()


def _keras_model(model):
    """A keras.Model, loading a .keras path with Keras's own loader."""
    if isinstance(model, (str, os.PathLike)):
        import keras

        return keras.saving.load_model(model)
    return model


def _check_compiled(model, what):
    if not model.compiled:
        raise ValueError(
            f"kcc.{what}: the model must be compiled first: call "
            "model.compile(optimizer=..., loss=...)"
        )


def fit(
    model,
    x=None,
    y=None,
    batch_size=None,
    epochs=1,
    verbose="auto",
    callbacks=None,
    validation_split=0.0,
    validation_data=None,
    shuffle=True,
    class_weight=None,
    sample_weight=None,
    initial_epoch=0,
    steps_per_epoch=None,
    validation_steps=None,
    validation_batch_size=None,
    validation_freq=1,
    *,
    mode="compiled",
    seed=None,
):
    """Keras's model.fit, each step run by kcc. `model` is a compiled
    keras.Model or a .keras path (then the trained model is
    `history.model`). Returns Keras's History; the Keras model holds the
    trained weights and optimizer state afterwards. `mode`: "compiled" or
    "interpreted" (op by op)."""
    import keras

    model = _keras_model(model)
    _check_compiled(model, "fit")
    session = _session.session_for(model, mode)
    inputs, outputs = session.input_names(), session.output_names()
    if _data.is_dataset(x) or _data.is_iterable(x):
        if y is not None or sample_weight is not None or validation_split:
            raise ValueError("kcc.fit: with a dataset or generator as x, y, "
                             "sample_weight and validation_split must not "
                             "be given")
        if _data.is_dataset(x):
            train = _data.dataset_source(x, inputs, outputs, "x")
        else:
            # Without a length, the whole fit is one pass of
            # steps_per_epoch batches an epoch.
            if not hasattr(x, "__len__") and steps_per_epoch:
                passes = int(epochs) - int(initial_epoch)
                batches = int(steps_per_epoch) * max(passes, 1)
            else:
                batches = _data.iterable_batches(x, None, "kcc.fit: x",
                                                 "steps_per_epoch")
            train = _data.iterable_source(_data.replayable(x), inputs,
                                          outputs, "x", batches)
        rows = None
    else:
        x = _data.arrays(x, inputs, "x")
        y = _data.arrays(y, outputs, "y")
        if x is None or y is None:
            raise ValueError("kcc.fit: x and y are required")
        sample_weight = (None if sample_weight is None
                         else np.asarray(sample_weight))
        val = None
        if validation_split and validation_data is None:
            (x, y, sample_weight), val = _data.split(x, y, sample_weight,
                                                     validation_split)
            validation_data = val
        train = _data.arrays_source(x, y, sample_weight)
        rows = _data.rows(x)
    if validation_data is None:
        validation = None
    elif _data.is_dataset(validation_data):
        validation = _data.dataset_source(validation_data, inputs, outputs,
                                          "validation_data", validation_steps)
    elif _data.is_iterable(validation_data):
        validation = _data.validation_iterable_source(
            _data.replayable(validation_data), inputs, outputs,
            "validation_data",
            _data.iterable_batches(validation_data, validation_steps,
                                   "kcc.fit: validation_data",
                                   "validation_steps"))
    else:
        vx, vy, vsw = _data.unpack_validation(validation_data)
        vx = _data.arrays(vx, inputs, "validation x")
        vy = _data.arrays(vy, outputs, "validation y")
        vsw = None if vsw is None else np.asarray(vsw)
        if validation_steps:
            # The first validation_steps batches, as Keras reads them.
            keep = int(validation_steps) * int(
                validation_batch_size or batch_size or 32)
            vx, vy = [a[:keep] for a in vx], [a[:keep] for a in vy]
            vsw = None if vsw is None else vsw[:keep]
        validation = _data.arrays_source(vx, vy, vsw)

    args = _kcc.FitArgs()
    args.batch_size = int(batch_size or 32)
    args.validation_batch_size = int(validation_batch_size or 0)
    args.epochs = int(epochs)
    args.initial_epoch = int(initial_epoch)
    args.steps_per_epoch = int(steps_per_epoch or 0)
    if isinstance(validation_freq, int):
        args.validation_freq = validation_freq
    elif isinstance(validation_freq, (list, tuple)):
        args.validation_epochs = [int(e) for e in validation_freq]
    else:
        raise ValueError(
            "kcc.fit: validation_freq must be an int or a list of epochs, "
            f"got {type(validation_freq).__name__}")
    args.shuffle = bool(shuffle)
    args.seed = int(np.random.randint(0, 2**31) if seed is None else seed)
    if class_weight:
        args.class_weight = {int(k): float(v) for k, v in class_weight.items()}

    steps = (train["batches"] if rows is None
             else math.ceil(rows / args.batch_size))
    if steps_per_epoch:
        steps = min(steps, int(steps_per_epoch))
    if isinstance(callbacks, keras.callbacks.CallbackList):
        callback_list = callbacks
    else:
        callback_list = keras.callbacks.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0,
            verbose=verbose, epochs=epochs, steps=steps, model=model)

    _session.push_state(session, model)
    model.stop_training = False
    driver = _callbacks.Driver(model, session, callback_list)
    try:
        session.fit(train, validation, args, driver,
                    _callbacks.batch_hooks(callback_list, "train"),
                    _callbacks.batch_hooks(callback_list, "test"))
    except BaseException:
        # Ctrl-C or a callback's error: Keras keeps what was trained so far.
        _session.pull_state(session, model)
        raise
    return model.history


def _callback_list(callbacks, verbose, steps, model):
    """Keras's CallbackList for one evaluate or predict run, as Keras
    builds it (a progress bar unless verbose is 0)."""
    import keras

    if isinstance(callbacks, keras.callbacks.CallbackList):
        return callbacks
    return keras.callbacks.CallbackList(
        callbacks, add_progbar=verbose != 0, verbose=verbose, epochs=1,
        steps=steps, model=model)


def evaluate(model, x=None, y=None, batch_size=None, verbose="auto",
             sample_weight=None, steps=None, callbacks=None,
             return_dict=False, *, mode="compiled"):
    """Keras's model.evaluate by kcc: the loss, then the metrics (a scalar
    when there are none), or a dict with return_dict=True. x may be a
    PyDataset or a generator (then `steps`, unless it has a length).
    `callbacks` get Keras's on_test_* hooks."""
    model = _keras_model(model)
    _check_compiled(model, "evaluate")
    session = _session.session_for(model, mode)
    _session.push_weights(session, model)
    inputs, outputs = session.input_names(), session.output_names()
    batch = int(batch_size or 32)
    if _data.is_dataset(x):
        data = _data.dataset_source(x, inputs, outputs, "x", steps)
    elif _data.is_iterable(x):
        data = _data.validation_iterable_source(
            _data.replayable(x), inputs, outputs, "x",
            _data.iterable_batches(x, steps, "kcc.evaluate: x", "steps"))
    else:
        xs = _data.arrays(x, inputs, "x")
        ys = _data.arrays(y, outputs, "y")
        sw = None if sample_weight is None else np.asarray(sample_weight)
        if steps and xs:
            # The first `steps` batches, as Keras reads them.
            keep = int(steps) * batch
            xs = [a[:keep] for a in xs]
            ys = ys if ys is None else [a[:keep] for a in ys]
            sw = sw if sw is None else sw[:keep]
        data = _data.arrays_source(xs, ys, sw)
    batches = data.get("batches") or (
        math.ceil(_data.rows(data["x"]) / batch) if data.get("x") else None)
    callback_list = _callback_list(callbacks, verbose, batches, model)
    driver = _callbacks.driver_for(model, session, callback_list)
    logs = session.evaluate(data, batch, driver,
                            _callbacks.batch_hooks(callback_list, "test"))
    logs = _callbacks.keras_logs(logs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def predict(model, x, batch_size=None, verbose="auto", steps=None,
            callbacks=None, *, mode="compiled"):
    """Keras's model.predict by kcc: an array, or a list with several
    outputs. x may be arrays, a PyDataset or a generator of batches (x, or
    a tuple whose first element is x: Keras's unpacking), read to its end
    or for `steps` batches. `callbacks` get Keras's on_predict_* hooks."""
    model = _keras_model(model)
    session = _session.session_for(model, mode)
    _session.push_weights(session, model)
    names = session.input_names()
    if _data.is_dataset(x) or _data.is_iterable(x):
        total = len(x) if hasattr(x, "__len__") else None
        if steps:
            total = int(steps) if total is None else min(total, int(steps))
        callback_list = _callback_list(callbacks, verbose, total, model)
        model.stop_predicting = False
        callback_list.on_predict_begin()
        batches, batch = [], None
        items = iter(_data.predict_batches(x, steps))
        for i in itertools.count():
            # Keras calls a batch's begin before it reads the batch: once
            # more at the end of data of unknown length.
            if total is not None and i >= total:
                break
            callback_list.on_predict_batch_begin(i)
            item = next(items, _END)
            if item is _END:
                break
            where = f"kcc.predict: x, batch {i}"
            inputs = _data.arrays(_data.predict_input(item, where), names,
                                  where)
            batch = batch or _data.rows(inputs)  # the first batch's size
            batches.append(session.predict(inputs, batch))
            part = batches[-1]
            callback_list.on_predict_batch_end(
                i, {"outputs": part[0] if len(part) == 1 else part})
            if getattr(model, "stop_predicting", False):
                break
        if not batches:
            raise ValueError("kcc.predict: x has no batches")
        out = [np.concatenate(parts) for parts in zip(*batches)]
        callback_list.on_predict_end()
    else:
        batch = int(batch_size or 32)
        inputs = _data.arrays(x, names, "x")
        if steps:
            inputs = [a[:int(steps) * batch] for a in inputs]
        callback_list = _callback_list(
            callbacks, verbose, math.ceil(_data.rows(inputs) / batch), model)
        driver = _callbacks.driver_for(model, session, callback_list)
        out = session.predict(inputs, batch, driver,
                              _callbacks.batch_hooks(callback_list,
                                                     "predict"))
    return out[0] if len(out) == 1 else out
