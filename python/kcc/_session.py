"""One kcc Session per keras.Model, and moving state between the two.

Keras's model is the truth between calls: every call hands kcc the model's
weights and optimizer variables, and a fit hands them back when it ends
(and at each epoch's end, for callbacks that look).
"""

import json
import os
import weakref

import numpy as np

from kcc import _kcc

# keras.Model -> {mode: (key, session)}; a model collected takes its
# sessions along.
_sessions = weakref.WeakKeyDictionary()


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def model_config(model):
    """Keras's to_json() text with the model's compile_config, as a .keras
    archive's config.json holds them."""
    config = json.loads(model.to_json())
    config["compile_config"] = model.get_compile_config() if model.compiled else {}
    return json.dumps(config, default=_json_default)


def _cache_key(text, mode):
    # The learning rate moves during training (callbacks set it); it is
    # handed over with the optimizer's variables, not through the config.
    config = json.loads(text)
    optimizer = config.get("compile_config", {}).get("optimizer")
    if isinstance(optimizer, dict) and isinstance(optimizer.get("config"), dict):
        optimizer["config"].pop("learning_rate", None)
    return json.dumps(config, sort_keys=True) + "|" + mode


def _to_numpy(value):
    import keras

    return np.asarray(keras.ops.convert_to_numpy(value))


def _keras_optimizer(model):
    optimizer = getattr(model, "optimizer", None)
    return optimizer if optimizer is not None and model.compiled else None


def session_for(model, mode="compiled"):
    """The model's session, rebuilt when its architecture or compile()
    changed, or when Keras's optimizer was reset under it."""
    if isinstance(model, (str, os.PathLike)):
        raise TypeError("session_for takes a keras.Model")
    text = model_config(model)
    key = _cache_key(text, mode)
    sessions = _sessions.setdefault(model, {})
    cached = sessions.get(mode)
    optimizer = _keras_optimizer(model)
    if cached is not None and cached[0] == key:
        session = cached[1]
        fresh = optimizer is None or not optimizer.built or int(optimizer.iterations) == 0
        if not (session.iterations() > 0 and fresh):
            return session
    session = _kcc.Session.from_json(text, source=model.name, mode=mode)
    sessions[mode] = (key, session)
    return session


def push_weights(session, model):
    """Keras's weights into kcc."""
    session.set_keras_weights([_to_numpy(w) for w in model.weights])


def push_state(session, model):
    """Keras's weights and optimizer state into kcc."""
    push_weights(session, model)
    optimizer = _keras_optimizer(model)
    if optimizer is None:
        return
    if optimizer.built and int(optimizer.iterations) > 0:
        session.set_keras_optimizer_variables(
            [_to_numpy(v) for v in optimizer.variables]
        )
    push_learning_rate(session, model)


def push_learning_rate(session, model):
    """The Keras optimizer's learning rate into kcc's step (callbacks such
    as ReduceLROnPlateau and LearningRateScheduler set it)."""
    optimizer = _keras_optimizer(model)
    if optimizer is None:
        return
    from keras.optimizers.schedules import LearningRateSchedule

    if isinstance(getattr(optimizer, "_learning_rate", None), LearningRateSchedule):
        return  # the step computes it from the iteration count
    lr = float(_to_numpy(optimizer.learning_rate))
    if lr != session.learning_rate:
        session.learning_rate = lr


def pull_state(session, model, optimizer_state=True):
    """kcc's weights (and optimizer variables) into the Keras model."""
    model.set_weights(session.keras_weights())
    if not optimizer_state:
        return
    optimizer = _keras_optimizer(model)
    values = session.keras_optimizer_variables()
    if optimizer is None or values is None:
        return
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    variables = optimizer.variables
    if len(variables) != len(values):
        raise _kcc.Error(
            f"{model.name}: the Keras optimizer has {len(variables)} "
            f"variables, kcc's state maps to {len(values)}"
        )
    for variable, value in zip(variables, values):
        variable.assign(value.astype(variable.dtype).reshape(variable.shape))
