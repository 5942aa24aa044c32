"""fit()'s x, y and sample weights as one NumPy array per input and output,
with Keras's rules (dicts by input or output name, validation_split)."""

import itertools
import math
import threading

import numpy as np


def _array(value, what):
    """`value` as a NumPy array, sharing its memory where it can: NumPy
    arrays as they are, other libraries' CPU tensors (JAX, PyTorch,
    TensorFlow) through DLPack, anything else through np.asarray."""
    if value is None:
        raise ValueError(f"{what}: expected an array, got None")
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError, ValueError):
            pass  # on a device, or a dtype NumPy lacks: copied below
    return np.asarray(value)


def arrays(data, names, what):
    """`data` (an array, a list or tuple of arrays, or a dict by name) as a
    list of arrays in the order of `names`; None stays None."""
    if data is None:
        return None
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(
                f"{what}: no array for {missing} (the dict has {sorted(data)}; "
                f"the model's names are {names})"
            )
        return [_array(data[n], f"{what}['{n}']") for n in names]
    if isinstance(data, (list, tuple)) and len(names) > 1:
        if len(data) != len(names):
            raise ValueError(
                f"{what}: {len(data)} arrays for the model's {len(names)} ({names})"
            )
        return [_array(a, f"{what}[{i}]") for i, a in enumerate(data)]
    if isinstance(data, (list, tuple)) and len(data) == 1 and hasattr(data[0], "shape"):
        return [_array(data[0], f"{what}[0]")]
    return [_array(data, what)]


def rows(arrays_):
    return int(arrays_[0].shape[0])


def split(x, y, sample_weight, validation_split):
    """Keras's train_validation_split: the last fraction, before shuffling."""
    n = rows(x)
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise ValueError(
            f"validation_split={validation_split} of {n} examples leaves one "
            "of the two splits empty"
        )

    def cut(a, lo, hi):
        return None if a is None else a[lo:hi]

    train = ([a[:split_at] for a in x], [a[:split_at] for a in y],
             cut(sample_weight, 0, split_at))
    val = ([a[split_at:] for a in x], [a[split_at:] for a in y],
           cut(sample_weight, split_at, n))
    return train, val


def unpack_validation(data):
    """(x, y) or (x, y, sample_weight), as Keras unpacks validation_data."""
    if not isinstance(data, (list, tuple)) or len(data) not in (2, 3):
        raise ValueError(
            "validation_data must be a tuple (x, y) or (x, y, sample_weight)"
        )
    return data[0], data[1], data[2] if len(data) == 3 else None


def is_dataset(data):
    """A keras.utils.PyDataset, or any object of batches with __len__ and
    __getitem__ (a keras.utils.Sequence)."""
    if data is None or isinstance(data, (np.ndarray, list, tuple, dict)):
        return False
    if hasattr(data, "shape"):
        return False  # an array of another library
    return hasattr(data, "__getitem__") and hasattr(data, "__len__")


def is_iterable(data):
    """A generator, an iterator, or an iterable of batches without indexing
    (a tf.data.Dataset, a torch DataLoader)."""
    if data is None or isinstance(data, (np.ndarray, list, tuple, dict, str)):
        return False
    if hasattr(data, "shape"):
        return False
    return hasattr(data, "__next__") or hasattr(data, "__iter__")


def _batch_of(item, inputs, outputs, where):
    if isinstance(item, list):
        item = tuple(item)
    if not isinstance(item, tuple) or len(item) not in (2, 3):
        raise ValueError(
            f"{where}: a batch must be a tuple (x, y) or "
            f"(x, y, sample_weight), got {type(item).__name__}")
    weights = item[2] if len(item) == 3 else None
    return (arrays(_numpy(item[0]), inputs, f"{where} x"),
            arrays(_numpy(item[1]), outputs, f"{where} y"),
            None if weights is None else np.asarray(_numpy(weights)))


def _numpy(value):
    """Tensors of any backend (tf, torch, jax) as NumPy; dicts, lists and
    tuples element by element."""
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_numpy(v) for v in value)
    if value is None or isinstance(value, np.ndarray):
        return value
    return _array(value, "batch")


class _Replayed:
    """A one-shot iterator (a generator) as Keras's fit holds it: the first
    two batches read at the start and replayed at the head of every new
    pass (Keras peeks them for the input specs), then the iterator where it
    stopped. A validation generator is thus read from the same first
    batches at every evaluation, as under Keras."""

    PEEKED = 2  # Keras's NUM_BATCHES_FOR_TENSOR_SPEC

    def __init__(self, iterator):
        self.iterator = iterator
        self.peeked = list(itertools.islice(iterator, self.PEEKED))

    def __iter__(self):
        return itertools.chain(self.peeked, self.iterator)


def replayable(data):
    """`data` to iterate once per pass: a one-shot iterator wrapped as Keras
    wraps it, anything else (re-iterable) as it is."""
    if iter(data) is data:
        return _Replayed(data)
    return data


def iterable_batches(data, steps, what, role):
    """Batches per pass over an iterable: its len(), else `steps`."""
    if steps:
        return int(steps)
    try:
        return len(data)
    except TypeError:
        pass
    raise ValueError(
        f"{what} is a generator or iterator without a length: give "
        f"{role} (the batches an epoch reads)")


def iterable_source(data, inputs, outputs, what, batches):
    """Batches read from an iterable in its order, as kcc's step needs them.
    Each pass over the data starts a new iterator (a generator continues
    where it stopped, as under Keras); read-ahead workers may ask for
    batches out of order, so the few read early are held until taken."""
    lock = threading.Lock()
    state = {"iterator": None, "next": 0, "held": {}}

    def begin_pass():
        with lock:
            state["iterator"] = iter(data)
            state["next"] = 0
            state["held"] = {}

    def read(i):
        with lock:
            if state["iterator"] is None:
                state["iterator"] = iter(data)
            held = state["held"]
            while i not in held:
                try:
                    item = next(state["iterator"])
                except StopIteration:
                    raise ValueError(
                        f"{what}: the data ran out after {state['next']} "
                        f"batches; an epoch reads {batches} (make the "
                        "generator repeat, or lower steps_per_epoch)"
                    ) from None
                held[state["next"]] = item
                state["next"] += 1
            item = held.pop(i)
        return _batch_of(item, inputs, outputs, f"{what}, batch {i}")

    return {"reader": read, "on_epoch_end": None, "on_pass_begin": begin_pass,
            "batches": int(batches), "name": what, "indexed": False}


def validation_iterable_source(data, inputs, outputs, what, batches):
    """Validation batches from an iterable: every evaluation starts a new
    iterator and reads `batches` in order (Keras resets its validation
    iterator each time; a generator then continues)."""
    state = {"iterator": None}

    def read(i):
        if i == 0 or state["iterator"] is None:
            state["iterator"] = iter(data)
        try:
            item = next(state["iterator"])
        except StopIteration:
            raise ValueError(
                f"{what}: the data ran out after {i} batches; validation "
                f"reads {batches} (give validation_steps)") from None
        return _batch_of(item, inputs, outputs, f"{what}, batch {i}")

    return {"reader": read, "on_epoch_end": None, "batches": int(batches),
            "name": what, "indexed": False}


def predict_batches(data, steps):
    """The batches predict reads: a PyDataset's in order, an iterable's to
    its end; the first `steps` of either when given."""
    batches = ((data[i] for i in range(len(data))) if is_dataset(data)
               else iter(data))
    return itertools.islice(batches, int(steps)) if steps else batches


def predict_input(item, where):
    """x of a batch as Keras's predict unpacks it: a tuple's (or list's)
    first element, anything else as it is."""
    if isinstance(item, (tuple, list)):
        if not 1 <= len(item) <= 3:
            raise ValueError(f"{where}: a batch must be x, (x,), (x, y) or "
                             f"(x, y, sample_weight), got {len(item)} items")
        item = item[0]
    return _numpy(item)


def arrays_source(x, y, sample_weight):
    return {"x": x, "y": y, "sample_weight": sample_weight}


def dataset_source(dataset, inputs, outputs, what, steps=None):
    """Batches read from `dataset` as kcc's step needs them, one at a time
    (only the batches in flight are in memory); the first `steps` when
    given."""

    def read(i):
        return _batch_of(dataset[i], inputs, outputs, f"{what}[{i}]")

    batches = len(dataset)
    if steps:
        batches = min(batches, int(steps))
    return {"reader": read, "on_epoch_end": getattr(dataset, "on_epoch_end", None),
            "batches": batches, "name": what}
