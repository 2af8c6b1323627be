"""The data a `FeatureSpace` reads: dicts of feature arrays, for `adapt` and for calls.

Keras 3's `FeatureSpace` reads a `tf.data.Dataset` (or a dict it turns into
one); minikeras has no tf.data, so `adapt` reads a dict of arrays (cut into
batches of 32 rows, as Keras batches a dataset of single samples) or any
iterable of dict batches, a `PyDataset` or a generator for instance. Each
feature's values become `(batch, 1)` columns (a `(batch, k)` one is kept).
"""

import numpy as np

from minikeras.engine.tensor import Tensor

__all__ = ["ADAPT_BATCH_SIZE", "adapt_columns", "call_columns", "column"]

ADAPT_BATCH_SIZE = 32  # Keras batches a dataset of single samples by 32 before adapting
_KINDS = {"float32": "biuf", "int32": "biu", "string": "USO"}
_WORDS = {"float32": "numbers", "int32": "integers", "string": "strings"}


def _array(value):
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


def column(name, feature, value):
    """One feature's values as an array of its dtype's kind (floats as float32).

    Args:
        name: the feature's name, for errors.
        feature: its `Feature`.
        value: an array, list, scalar or Tensor.

    Returns:
        A numpy array of the value's shape.

    Raises:
        TypeError: for values of the wrong kind (strings for a float feature...).

    Example:
        >>> from minikeras.layers.preprocessing.feature_data import column
        >>> feature = mk.utils.FeatureSpace.float(name="doc_column")
        >>> column("x", feature, [1, 2]).dtype
        dtype('float32')
    """
    array = _array(value)
    if array.dtype.kind not in _KINDS[feature.dtype]:
        raise TypeError(
            f"FeatureSpace: feature '{name}' (dtype {feature.dtype!r}) takes "
            f"{_WORDS[feature.dtype]}, got values of dtype {array.dtype}"
        )
    return array.astype("float32") if feature.dtype == "float32" else array


def _check_names(given, wanted, where):
    missing = [name for name in wanted if name not in given]
    if missing:
        raise ValueError(
            f"FeatureSpace{where}: the data has no values for the features {missing}; "
            f"it has {sorted(given)}"
        )


def call_columns(data, features):
    """The arrays a `FeatureSpace` call reads: `(batch, 1)` columns, one per feature.

    Args:
        data: a dict of feature name -> array (one sample of scalars, or a batch).
        features: the FeatureSpace's dict of `Feature`s.

    Returns:
        (the columns by name, whether the data was one sample of scalars).

    Raises:
        ValueError: if `data` is not a dict, lacks a feature or names an unknown
            one, or its features hold different numbers of samples.
        TypeError: for values of the wrong kind.

    Example:
        >>> from minikeras.layers.preprocessing.feature_data import call_columns
        >>> features = {"x": mk.utils.FeatureSpace.float(name="doc_call_columns")}
        >>> columns, single = call_columns({"x": 3.0}, features)
        >>> columns["x"].shape, single
        ((1, 1), True)
    """
    if not isinstance(data, dict):
        raise ValueError(
            f"FeatureSpace can only be called on a dict of feature arrays, got "
            f"{type(data).__name__}"
        )
    _check_names(data, features, "")
    unknown = sorted(set(data) - set(features))
    if unknown:
        raise ValueError(
            f"FeatureSpace: the data names features it does not have: {unknown}; its "
            f"features are {sorted(features)}"
        )
    columns, single = {}, False
    for name, feature in features.items():
        array = column(name, feature, data[name])
        if array.ndim == 0:
            array, single = array.reshape(1, 1), True
        elif array.ndim == 1:
            array = array[:, None]
        columns[name] = array
    sizes = {name: len(array) for name, array in columns.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"FeatureSpace: the features hold different numbers of samples: {sizes}")
    return columns, single


def _dict_batches(data):
    arrays = {name: _array(value) for name, value in data.items()}
    sizes = {name: len(array) for name, array in arrays.items() if array.ndim}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"FeatureSpace.adapt: the features hold different numbers of samples: {sizes}"
        )
    count = next(iter(sizes.values()), 0)
    for start in range(0, count, ADAPT_BATCH_SIZE):
        yield {name: array[start : start + ADAPT_BATCH_SIZE] for name, array in arrays.items()}


def _element(element):
    if isinstance(element, tuple) and element:
        element = element[0]  # an (x, y) pair: the features are x
    if not isinstance(element, dict):
        raise TypeError(
            "FeatureSpace.adapt: an iterable must yield dicts of feature arrays (or (dict, "
            f"labels) pairs), got {type(element).__name__}"
        )
    return element


def _iterable_batches(dataset, names):
    elements = (_element(element) for element in dataset)
    first = next(elements, None)
    if first is None:
        return
    if names and np.ndim(_array(first.get(names[0], 0))) > 0:
        yield first
        yield from elements
        return
    # Single samples (scalars): grouped by ADAPT_BATCH_SIZE, as Keras batches them.
    group = [first]
    for element in elements:
        group.append(element)
        if len(group) == ADAPT_BATCH_SIZE:
            yield _stacked(group)
            group = []
    if group:
        yield _stacked(group)


def _stacked(samples):
    return {name: np.stack([_array(sample[name]) for sample in samples]) for name in samples[0]}


def adapt_columns(dataset, features, names, on_batch=None):
    """Each adapted feature's batches, as `(batch, 1)` columns (see the module).

    Args:
        dataset: a dict of feature arrays, or an iterable of dict batches (or of
            `(dict, labels)` pairs, or of single-sample dicts).
        features: the FeatureSpace's dict of `Feature`s.
        names: the features to read.
        on_batch: None, or a function called with the number of batches read.

    Returns:
        A dict of name -> list of 2-D arrays.

    Raises:
        ValueError: for data that is neither a dict nor an iterable, a batch
            missing a feature, or no samples at all.
        TypeError: for values of the wrong kind.

    Example:
        >>> from minikeras.layers.preprocessing.feature_data import adapt_columns
        >>> features = {"x": mk.utils.FeatureSpace.float(name="doc_adapt_columns")}
        >>> batches = adapt_columns({"x": np.arange(40.0)}, features, ["x"])
        >>> [b.shape for b in batches["x"]]
        [(32, 1), (8, 1)]
    """
    if isinstance(dataset, dict):
        batches = _dict_batches(dataset)
    elif isinstance(dataset, (str, bytes, np.ndarray, Tensor)) or not hasattr(dataset, "__iter__"):
        raise ValueError(
            "FeatureSpace.adapt: `dataset` must be a dict of feature arrays or an iterable of "
            f"dict batches (minikeras has no tf.data), got {type(dataset).__name__}"
        )
    else:
        batches = _iterable_batches(dataset, list(names))
    columns = {name: [] for name in names}
    for count, batch in enumerate(batches, start=1):
        _check_names(batch, names, ".adapt")
        for name in names:
            array = column(name, features[name], batch[name])
            columns[name].append(array.reshape(-1, 1) if array.ndim <= 1 else array)
        if on_batch is not None:
            on_batch(count)
    if names and not any(len(b) for b in columns[names[0]]):
        raise ValueError("FeatureSpace.adapt: `dataset` holds no samples")
    return columns
