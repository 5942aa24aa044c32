"""kcc for Keras users: train a live keras.Model with kcc's compiled step.

    import kcc
    history = kcc.fit(model, x, y, batch_size=32, epochs=3,
                      validation_data=(x_val, y_val),
                      callbacks=[keras.callbacks.EarlyStopping(patience=2)])
    model.predict(x_test)          # Keras continues from kcc's weights

fit, evaluate and predict take Keras's arguments with Keras's meaning.
"""

from kcc._loader import load as _load

_kcc = _load()

__version__ = _kcc.__version__
Error = _kcc.Error

from kcc._api import evaluate, fit, predict  # noqa: E402
from kcc._step import Step, bench, compile  # noqa: E402

__all__ = ["Error", "Step", "bench", "compile", "evaluate", "fit", "predict",
           "__version__"]
