"""kcc.compile(model): Keras's train_on_batch, test_on_batch and
predict_on_batch on kcc's step; kcc.bench: compiled against interpreted."""

import numpy as np

from kcc import _callbacks, _data, _session

_NUMPY = {"f32": "float32", "f64": "float64", "f16": "float16", "i32": "int32",
          "i64": "int64", "i1": "bool"}


class Step:
    """A Keras model's training step, run by kcc one batch at a time.

    Training happens in kcc: call `update_model()` (or `kcc.fit`) to copy
    the weights and optimizer state into the Keras model. Each call's logs
    are its batch's, as Keras 3's *_on_batch reset the metrics first."""

    def __init__(self, model, mode="compiled"):
        if mode not in ("compiled", "interpreted"):
            raise ValueError(f"mode must be 'compiled' or 'interpreted', got {mode!r}")
        self.model = model
        self.mode = mode
        self._session = _session.session_for(model, mode)
        _session.push_state(self._session, model)
        self._inputs = self._session.input_names()
        self._outputs = self._session.output_names()

    def reset_metrics(self):
        """Keras's: each call's logs are its batch's already."""

    def _arrays(self, x, y):
        return (_data.arrays(x, self._inputs, "x"),
                _data.arrays(y, self._outputs, "y"))

    def _result(self, logs, return_dict):
        logs = _callbacks.keras_logs(logs)
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        x, y = self._arrays(x, y)
        _session.push_learning_rate(self._session, self.model)
        weights = None if sample_weight is None else np.asarray(sample_weight)
        cw = {int(k): float(v) for k, v in (class_weight or {}).items()}
        logs = self._session.train_on_batch(x, y, weights, cw)
        return self._result(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        x, y = self._arrays(x, y)
        weights = None if sample_weight is None else np.asarray(sample_weight)
        logs = self._session.evaluate(_data.arrays_source(x, y, weights),
                                      _data.rows(x))
        return self._result(logs, return_dict)

    def predict_on_batch(self, x):
        x = _data.arrays(x, self._inputs, "x")
        out = self._session.predict(x, _data.rows(x))
        return out[0] if len(out) == 1 else out

    def update_model(self):
        """kcc's weights and optimizer state into the Keras model."""
        _session.pull_state(self._session, self.model)


def compile(model, mode="compiled"):
    """A Step over `model` (a compiled keras.Model): Keras's *_on_batch
    methods on kcc's compiled (or interpreted) step."""
    return Step(model, mode)


def _random_batch(specs, batch, rng):
    arrays = []
    for spec in specs:
        shape = (batch,) + tuple(spec["row"])
        dtype = _NUMPY.get(spec["dtype"], "float32")
        if spec["classes"]:
            arrays.append(rng.integers(0, spec["classes"], size=shape).astype(dtype))
        elif dtype == "bool":
            arrays.append(rng.random(shape) < 0.5)
        elif dtype.startswith("int"):
            arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
        else:
            arrays.append(rng.normal(size=shape).astype(dtype))
    return arrays


def bench(model, batch_size=32, steps=20, warmup=3, seed=0):
    """kcc bench for a Keras model: seconds per training step compiled and
    interpreted (op by op) on random batches of `batch_size`, from the same
    weights. The Keras model is not changed."""
    rng = np.random.default_rng(seed)
    result = {}
    for mode in ("compiled", "interpreted"):
        session = _session.session_for(model, mode)
        _session.push_state(session, model)
        inputs, targets = session.data_spec()
        x, y = _random_batch(inputs, batch_size, rng), _random_batch(targets, batch_size, rng)
        result[mode] = session.time_steps(x, y, int(steps), int(warmup))
        _session.push_state(session, model)  # leave it as Keras has it
    result["speedup"] = result["interpreted"] / result["compiled"]
    return result
