"""The metric base class, `Metric`, and what metrics share: label alignment, per-sample weighing.

`Mean` and `MeanMetricWrapper`, the means most metrics are, are in `metrics/mean.py`.
"""

import numpy as np

from minikeras import config, initializers, losses
from minikeras.engine.variable import Variable
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["Metric"]


def _aligned(name, y_true, y_pred):
    """numpy arrays of one shape, after Keras's trailing-axis alignment."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    aligned_true, aligned_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    if aligned_true.shape != aligned_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape (up to a trailing axis "
            f"of size 1); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
        )
    return np.asarray(aligned_true), np.asarray(aligned_pred)


class Metric:
    """Base class of metrics: state, `update_state`, `result`, `reset_state`.

    A subclass creates its state in `__init__` with `add_variable` (as in
    Keras), adds to it in `update_state` with `assign` / `assign_add` /
    `assign_sub`, and summarizes it in `result`; the default `reset_state`
    puts every variable back to its initial value. A subclass may instead
    keep plain Python state and write its own `reset_state`. Calling a metric
    updates it and returns the result.

    Args:
        dtype: the default dtype of the variables `add_variable` creates
            (floatx by default); reported in `get_config`.
        name: the metric's name in logs; the class name in snake case by default.

    Example:
        >>> class Count(mk.metrics.Metric):
        ...     def __init__(self, name="count"):
        ...         super().__init__(name=name)
        ...         self.count = self.add_variable((), "zeros", name="count")
        ...     def update_state(self, values):
        ...         self.count.assign_add(np.size(values))
        ...     def result(self):
        ...         return self.count
        >>> m = Count()
        >>> float(m([1, 2, 3])), float(m([4]))
        (3.0, 4.0)
        >>> m.reset_state(); float(m.result())
        0.0
    """

    # "up" or "down": whether a higher value is better, for callbacks in mode="auto"
    # (as Keras 3's `_direction`); None when the metric does not say.
    _direction = None

    def __init__(self, dtype=None, name=None):
        self.name = name or _snake_case(type(self).__name__)
        self.dtype = config.standardize_dtype(dtype)
        self._variables = []
        self._initial_values = []

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """Creates a state variable, tracked in `variables` and reset by `reset_state`.

        Args:
            shape: tuple of ints, the variable's shape (`()` for a scalar).
            initializer: an initializer name (`"zeros"`), instance or callable
                `initializer(shape, dtype)`.
            dtype: the variable's dtype; the metric's `dtype` by default.
            aggregation: accepted for Keras compatibility (it says how
                replicas combine the variable); minikeras has one replica.
            name: the variable's name.

        Returns:
            A non-trainable `Variable` with `assign`, `assign_add` and `assign_sub`.

        Raises:
            RuntimeError: if the subclass did not call `super().__init__()`.
            ValueError: for an unknown initializer.

        Example:
            >>> m = mk.metrics.Mean()
            >>> v = m.add_variable((2,), "ones", name="extra")
            >>> v.assign_add([1.0, 2.0]).numpy()
            array([2., 3.], dtype=float32)
        """
        if "_variables" not in self.__dict__:
            raise RuntimeError(
                f"Metric {type(self).__name__}: call super().__init__() in __init__() "
                "before add_variable()"
            )
        shape = () if shape is None else tuple(int(size) for size in np.atleast_1d(shape))
        dtype = config.standardize_dtype(dtype or self.dtype)
        variable = Variable(
            initializers.get(initializer), shape=shape, dtype=dtype, trainable=False, name=name
        )
        self._variables.append(variable)
        self._initial_values.append(variable.numpy())
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """The older name of `add_variable` (zeros by default), as Keras keeps it.

        Args:
            shape: tuple of ints.
            initializer: as in `add_variable`; None means zeros.
            dtype: as in `add_variable`.
            name: the variable's name.

        Returns:
            A non-trainable `Variable`.

        Example:
            >>> mk.metrics.Mean().add_weight(name="extra").numpy()
            array(0., dtype=float32)
        """
        return self.add_variable(shape, initializer or "zeros", dtype=dtype, name=name)

    @property
    def variables(self):
        """The state variables: this metric's, then those of metrics it holds as attributes.

        Example:
            >>> class Two(mk.metrics.Metric):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.a = self.add_variable((), "zeros", name="a")
            ...         self.b = self.add_variable((3,), "ones", name="b")
            >>> [v.name for v in Two().variables]
            ['a', 'b']
        """
        found = list(self.__dict__.get("_variables", ()))
        for value in self.__dict__.values():
            if isinstance(value, Metric) and value is not self:
                found.extend(value.variables)
        return found

    def update_state(self, *args, **kwargs):
        """Adds a batch to the state; subclasses implement it.

        Args:
            *args: the batch: `(y_true, y_pred)` for the metrics `fit` updates,
                `(values,)` for `Mean`.
            **kwargs: usually `sample_weight`, optional per-sample weights.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> m = mk.metrics.Mean(); m.update_state([1.0, 3.0]); m.result()
            2.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement update_state()")

    def result(self):
        """Returns the value so far; subclasses implement it.

        Returns:
            A Python float.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> mk.metrics.Mean().result()
            0.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement result()")

    def reset_state(self):
        """Forgets every batch seen: each `add_variable` variable gets its initial value.

        Keras sets every variable to zeros here; minikeras restores the value
        the initializer gave, which is the same for the usual `"zeros"` and
        right for any other. Metrics holding other metrics reset those too.
        Subclasses with Python state override it.

        Example:
            >>> m = mk.metrics.Mean(); m.update_state([5.0]); m.reset_state(); m.result()
            0.0
        """
        initial_values = self.__dict__.get("_initial_values", ())
        for variable, value in zip(self.__dict__.get("_variables", ()), initial_values):
            variable.assign(value)
        for value in self.__dict__.values():
            if isinstance(value, Metric) and value is not self:
                value.reset_state()

    def __call__(self, *args, **kwargs):
        """Updates the state with one batch and returns `result()`.

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.Mean()([1.0, 2.0])
            1.5
        """
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        """Returns the constructor arguments, for `from_config`.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.Mean().get_config()
            {'name': 'mean', 'dtype': 'float32'}
        """
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """Makes a metric from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new metric, with fresh state.

        Example:
            >>> from minikeras.metrics import AUC
            >>> AUC.from_config(AUC(curve="PR").get_config()).curve
            'PR'
        """
        return cls(**config)

    def __repr__(self):
        result = self.result()
        if np.ndim(result) == 0:  # a float, or a scalar Variable of a custom metric
            result = float(result)
        shown = f"{result:.6g}" if isinstance(result, float) else repr(result)
        return f"<{type(self).__name__} name={self.name!r} result={shown}>"


def _samplewise(name, values, sample_weight, reduce=np.mean):
    """Weighted per-sample values and their weights, as Keras's Mean (`reduce=np.sum`: Sum)."""
    values = np.asarray(values, dtype=np.float64)
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=np.float64)
        given_shape = weights.shape
        if weights.ndim == 0 and values.ndim:  # one weight for every sample
            weights = np.full(values.shape[:1], float(weights))
        values, weights = map(np.asarray, losses.squeeze_or_expand_to_same_rank(values, weights))
        if values.ndim > weights.ndim:  # a weight per sample covers its trailing axes
            values = reduce(values, axis=tuple(range(weights.ndim, values.ndim)))
        try:
            weights = np.broadcast_to(weights, values.shape)
        except ValueError:
            raise ValueError(
                f"Metric {name!r}: sample_weight of shape {given_shape} does not fit values "
                f"of shape {values.shape}; expected shape {values.shape[:1]} or one that "
                "broadcasts"
            ) from None
        values = values * weights
        if weights.ndim > 1:
            weights = reduce(weights, axis=tuple(range(1, weights.ndim)))
    if values.ndim > 1:
        values = reduce(values, axis=tuple(range(1, values.ndim)))
    return values, weights
