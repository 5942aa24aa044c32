"""fit()'s x, y and sample weights as one NumPy array per input and output,
with Keras's rules (dicts by input or output name, validation_split)."""

import math

import numpy as np


def _array(value, what):
    if value is None:
        raise ValueError(f"{what}: expected an array, got None")
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


def arrays_source(x, y, sample_weight):
    return {"x": x, "y": y, "sample_weight": sample_weight}


def dataset_source(dataset, inputs, outputs, what):
    """Batches read from `dataset` as kcc's step needs them, one at a time
    (only the batches in flight are in memory)."""

    def read(i):
        item = dataset[i]
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise ValueError(
                f"{what}[{i}]: a batch must be a tuple (x, y) or "
                f"(x, y, sample_weight), got {type(item).__name__}")
        weights = item[2] if len(item) == 3 else None
        return (arrays(item[0], inputs, f"{what}[{i}] x"),
                arrays(item[1], outputs, f"{what}[{i}] y"),
                None if weights is None else np.asarray(weights))

    return {"reader": read, "on_epoch_end": getattr(dataset, "on_epoch_end", None),
            "batches": len(dataset), "name": what}
