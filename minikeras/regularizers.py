"""Regularizers: penalties on weights or activations that training adds to the loss.

A regularizer is a callable `regularizer(x)` that returns a scalar Tensor.
Layers take them as `kernel_regularizer=`, `bias_regularizer=` and
`activity_regularizer=`; `Layer.add_weight(regularizer=...)` puts one on a
weight. `Layer.losses` evaluates the weights' penalties from their current
values (inside a `GradientTape` they are differentiable), and `fit` adds
`sum(model.losses)` to the compiled loss. Names, arguments, defaults and
formulas are Keras's; the factors are Python floats, so a float32 weight
gets a float32 penalty. The lowercase `l1`, `l2`, `l1_l2` and
`orthogonal_regularizer` are the classes under their other Keras names:
`l2(1e-4)` is `L2(1e-4)`.
"""

import math

import numpy as np

from minikeras import ops, serialization_lib
from minikeras.config import epsilon
from minikeras.engine.variable import TrackingGeneration
from minikeras.serialization import deserialize_object, get_object, serialize_object

__all__ = [
    "L1",
    "L1L2",
    "L2",
    "OrthogonalRegularizer",
    "Regularizer",
    "deserialize",
    "get",
    "l1",
    "l1_l2",
    "l2",
    "orthogonal_regularizer",
    "serialize",
]


def _check_factor(owner, name, value):
    """`value` as a Python float if it is a finite number >= 0, else raises naming it."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{owner}: `{name}` must be a finite number >= 0, got {value!r}")
    return float(value)


class Regularizer:
    """Base class of regularizers: `regularizer(x)` is a scalar penalty on `x`.

    Subclasses implement `__call__` and `get_config`. Any function of one
    Tensor that returns a scalar also works wherever a regularizer is taken,
    but only a `Regularizer` with `get_config` can be saved. Setting an
    attribute (a callback annealing `l2`) makes `fit`'s compiled steps record
    again, as a layer's attribute set does: they hold its numbers.

    Example:
        >>> class Sum(mk.regularizers.Regularizer):
        ...     def __call__(self, x):
        ...         return mk.ops.sum(x)
        ...     def get_config(self):
        ...         return {}
        >>> float(Sum()(np.ones((2, 3), "float32")))
        6.0
    """

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        TrackingGeneration.bump()  # (a compiled step recorded the old value: stale now)

    def __call__(self, x):
        """The penalty on `x`: zero for the base class.

        Args:
            x: a Tensor, Variable or array.

        Returns:
            A scalar Tensor of `x`'s dtype.

        Example:
            >>> mk.regularizers.Regularizer()(np.ones(3, "float32")).numpy()
            array(0., dtype=float32)
        """
        return ops.zeros((), dtype=ops.convert_to_tensor(x).dtype)

    def get_config(self):
        """The arguments that rebuild this regularizer with `from_config`.

        Returns:
            A JSON-friendly dict.

        Raises:
            NotImplementedError: for a subclass that does not define it.

        Example:
            >>> mk.regularizers.L2(0.5).get_config()
            {'l2': 0.5}
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement get_config(), so it cannot be saved"
        )

    @classmethod
    def from_config(cls, config):
        """Makes a regularizer from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new regularizer.

        Example:
            >>> mk.regularizers.L1.from_config({"l1": 0.1})
            L1(l1=0.1)
        """
        return cls(**config)

    def __repr__(self):
        try:
            arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        except NotImplementedError:
            arguments = ""
        return f"{type(self).__name__}({arguments})"


class L1(Regularizer):
    """The L1 penalty: `l1 * sum(abs(x))`.

    Args:
        l1: the factor, a number >= 0 (None means 0.01, as in Keras).

    Raises:
        ValueError: if `l1` is negative, not finite or not a number.

    Example:
        >>> float(mk.regularizers.L1(0.1)(np.array([1.0, -2.0], "float32")))
        0.30000001192092896
    """

    def __init__(self, l1=0.01):
        self.l1 = _check_factor("L1", "l1", 0.01 if l1 is None else l1)

    def __call__(self, x):
        return self.l1 * ops.sum(ops.abs(x))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """The L2 penalty: `l2 * sum(square(x))` (no factor 1/2, as in Keras).

    Its gradient is `2 * l2 * x`.

    Args:
        l2: the factor, a number >= 0 (None means 0.01, as in Keras).

    Raises:
        ValueError: if `l2` is negative, not finite or not a number.

    Example:
        >>> float(mk.regularizers.L2(0.5)(np.array([1.0, -2.0], "float32")))
        2.5
    """

    def __init__(self, l2=0.01):
        self.l2 = _check_factor("L2", "l2", 0.01 if l2 is None else l2)

    def __call__(self, x):
        return self.l2 * ops.sum(ops.square(x))

    def get_config(self):
        return {"l2": self.l2}


class L1L2(Regularizer):
    """Both penalties: `l1 * sum(abs(x)) + l2 * sum(square(x))`.

    The class defaults are 0 for both factors; the name `"l1_l2"` gives
    0.01 for both (Keras's defaults for the name).

    Args:
        l1: the L1 factor, a number >= 0 (None means 0).
        l2: the L2 factor, a number >= 0 (None means 0).

    Raises:
        ValueError: if a factor is negative, not finite or not a number.

    Example:
        >>> float(mk.regularizers.L1L2(l1=0.1, l2=0.5)(np.array([1.0, -2.0], "float32")))
        2.799999952316284
        >>> mk.regularizers.get("l1_l2")
        L1L2(l1=0.01, l2=0.01)
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _check_factor("L1L2", "l1", 0.0 if l1 is None else l1)
        self.l2 = _check_factor("L1L2", "l2", 0.0 if l2 is None else l2)

    def __call__(self, x):
        penalty = None
        if self.l1:
            penalty = self.l1 * ops.sum(ops.abs(x))
        if self.l2:
            term = self.l2 * ops.sum(ops.square(x))
            penalty = term if penalty is None else penalty + term
        return super().__call__(x) if penalty is None else penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a 2-D weight towards being orthogonal to each other.

        unit = x / max(norm of each row, epsilon)       (columns with mode="columns")
        cosines = unit @ unit.T, without its diagonal
        penalty = factor * 0.5 * sum(abs(cosines)) / (n * (n - 1) / 2)

    with `n` rows (columns): `factor` times the mean absolute cosine
    similarity over the pairs of rows (each pair counted twice in the sum,
    hence the 0.5).

    Args:
        factor: the factor, a number >= 0.
        mode: `"rows"` or `"columns"`: which vectors should be orthogonal.
            For a `Dense` kernel of shape (inputs, units), `"columns"` makes
            the units' weight vectors orthogonal.

    Raises:
        ValueError: if `factor` is negative, not finite or not a number, or
            `mode` is neither; (when called) if `x` is not 2-D.

    Example:
        >>> penalty = mk.regularizers.OrthogonalRegularizer(factor=1.0, mode="rows")
        >>> float(penalty(np.array([[1.0, 0.0], [1.0, 1.0]], "float32")))  # 0.5 * 2 * cos 45°
        0.7071067690849304
    """

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _check_factor("OrthogonalRegularizer", "factor", factor)
        if mode not in ("rows", "columns"):
            raise ValueError(
                f"OrthogonalRegularizer: `mode` must be 'rows' or 'columns', got {mode!r}"
            )
        self.mode = mode

    def __call__(self, x):
        x = ops.convert_to_tensor(x)
        if x.ndim != 2:
            raise ValueError(f"OrthogonalRegularizer: expected a 2-D weight, got shape {x.shape}")
        axis = 1 if self.mode == "rows" else 0
        norms = ops.sqrt(ops.sum(ops.square(x), axis=axis, keepdims=True))
        unit = x / ops.maximum(norms, epsilon())
        vectors = unit if self.mode == "rows" else ops.transpose(unit)
        cosines = ops.matmul(vectors, ops.transpose(vectors))
        size = vectors.shape[0]
        off_diagonal = cosines * (1.0 - np.eye(size, dtype=cosines.dtype))
        pairs = size * (size - 1) / 2.0
        return self.factor * 0.5 * ops.sum(ops.abs(off_diagonal)) / pairs

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


# The lowercase names Keras exports for the same classes.
l1 = L1
l2 = L2
l1_l2 = L1L2
orthogonal_regularizer = OrthogonalRegularizer

_REGULARIZERS = {"l1": L1, "l2": L2, "l1l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}
# Class names work too, as in Keras: get("L2").
_REGULARIZERS.update(
    {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
)


def _lookup(name, custom_objects):
    # Custom objects, open scopes and the one registry first (see minikeras.serialization_lib).
    found = serialization_lib.get_registered_object(name, custom_objects)
    if found is not None:
        return found
    if name in _REGULARIZERS or name == "l1_l2":
        return _REGULARIZERS[name]
    raise ValueError(
        f"Unknown regularizer {name!r}; known regularizers: l1, l2, l1_l2, "
        "orthogonal_regularizer, L1, L2, L1L2, OrthogonalRegularizer"
        + serialization_lib.unknown_custom_hint(name)
    )


def serialize(regularizer):
    """Returns Keras 3's entry (`module`, `class_name`, `config`, `registered_name`).

    `deserialize` turns it back (and reads the short `{"class_name",
    "config"}` form too).

    A named function (not a lambda) is written as its name, as activations
    are: loading finds it if it is registered or given in `custom_objects`.

    Args:
        regularizer: a `Regularizer`, a named function, or None (returned as None).

    Returns:
        A dict of JSON-friendly values, a name, or None.

    Raises:
        ValueError: for a lambda or another object that has no name or
            config, or a function named like a built-in regularizer.

    Example:
        >>> mk.regularizers.serialize(mk.regularizers.L2(0.1))
        {'module': 'keras.regularizers', 'class_name': 'L2', 'config': {'l2': 0.1}, 'registered_name': None}
    """  # noqa: E501
    builtin_names = set(_REGULARIZERS) | {"l1_l2"}
    return serialize_object(regularizer, Regularizer, builtin_names, "regularizers")


def deserialize(config, custom_objects=None):
    """Makes a regularizer from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` (other keys are
            ignored) or a name: `"l1"`, `"l2"`, `"l1_l2"` or a class name.
        custom_objects: optional dict of name -> Regularizer class, searched first.

    Returns:
        A `Regularizer`.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> mk.regularizers.deserialize({"class_name": "L1L2", "config": {"l1": 0.1, "l2": 0.0}})
        L1L2(l1=0.1, l2=0.0)
        >>> mk.regularizers.deserialize("l2")
        L2(l2=0.01)
    """
    if config == "l1_l2" and not (custom_objects and config in custom_objects):
        # The name's defaults differ from the class's, as in Keras.
        return L1L2(l1=0.01, l2=0.01)
    return deserialize_object(
        config,
        lambda name: _lookup(name, custom_objects),
        "regularizers",
        custom_objects,
        _REGULARIZERS,
    )


def get(identifier):
    """Returns the regularizer `identifier` stands for.

    Args:
        identifier: None (returned as None), a name such as `"l2"`, a dict
            from `serialize`, a `Regularizer` class (instantiated with
            defaults) or a callable (returned as it is).

    Returns:
        A callable `regularizer(x)`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> mk.regularizers.get("l1"), mk.regularizers.get(None)
        (L1(l1=0.01), None)
        >>> mk.regularizers.get({"class_name": "L2", "config": {"l2": 0.1}})
        L2(l2=0.1)
    """
    return get_object(identifier, deserialize, "regularizers")
