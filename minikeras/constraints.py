"""Constraints: projections that optimizers apply to a weight after each update.

A constraint is a callable `constraint(w)` that returns a value of `w`'s
shape. Layers take them as `kernel_constraint=` and `bias_constraint=`;
`Layer.add_weight(constraint=...)` puts one on a weight, and every optimizer
update ends with `variable.assign(variable.constraint(variable))`. Names,
arguments, defaults and formulas are Keras's, with `minikeras.config.epsilon()`
(1e-7) keeping divisions by a norm finite.
"""

from minikeras import ops, serialization_lib
from minikeras.config import epsilon
from minikeras.serialization import deserialize_object, get_object, serialize_object

__all__ = [
    "Constraint",
    "MaxNorm",
    "MinMaxNorm",
    "NonNeg",
    "UnitNorm",
    "deserialize",
    "get",
    "max_norm",
    "min_max_norm",
    "non_neg",
    "serialize",
    "unit_norm",
]


def _axis(axis):
    # A config read back from JSON holds a list.
    return tuple(axis) if isinstance(axis, list) else axis


def _norms(w, axis):
    """The L2 norms of `w` along `axis`, kept as size-1 axes so that they broadcast."""
    return ops.sqrt(ops.sum(ops.square(w), axis=_axis(axis), keepdims=True))


class Constraint:
    """Base class of constraints: `constraint(w)` is `w` projected onto a set.

    Subclasses implement `__call__` (and `get_config` if they have arguments).

    Example:
        >>> class Halve(mk.constraints.Constraint):
        ...     def __call__(self, w):
        ...         return mk.ops.multiply(w, 0.5)
        >>> Halve()(np.array([2.0, 4.0], "float32")).numpy()
        array([1., 2.], dtype=float32)
    """

    def __call__(self, w):
        """The projection of `w`: `w` unchanged for the base class.

        Args:
            w: a Variable, Tensor or array.

        Returns:
            A Tensor (or `w` itself) of `w`'s shape.

        Example:
            >>> mk.constraints.Constraint()(np.ones(2)) is not None
            True
        """
        return w

    def get_config(self):
        """The arguments that rebuild this constraint with `from_config`.

        Returns:
            A JSON-friendly dict (empty for the base class).

        Example:
            >>> mk.constraints.MaxNorm(3).get_config()
            {'max_value': 3, 'axis': 0}
        """
        return {}

    @classmethod
    def from_config(cls, config):
        """Makes a constraint from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new constraint.

        Example:
            >>> mk.constraints.UnitNorm.from_config({"axis": 1})
            UnitNorm(axis=1)
        """
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


class MaxNorm(Constraint):
    """Rescales the slices of `w` along `axis` whose L2 norm exceeds `max_value`.

        norms = sqrt(sum(square(w), axis, keepdims=True))
        w = w * clip(norms, 0, max_value) / (epsilon + norms)

    For a Dense kernel `(input_dim, units)`, `axis=0` bounds the incoming
    weights of each unit; for a Conv2D kernel use `axis=[0, 1, 2]`.

    Args:
        max_value: the largest norm allowed.
        axis: an int or a list of ints: the axes each norm is taken over.

    Example:
        >>> w = np.array([[3.0, 0.3], [4.0, 0.4]], "float32")
        >>> np.round(mk.constraints.MaxNorm(1.0)(w).numpy(), 4)
        array([[0.6, 0.3],
               [0.8, 0.4]], dtype=float32)
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = ops.clip(norms, 0.0, float(self.max_value))
        return w * (desired / (epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves the norm of each slice of `w` along `axis` into `[min_value, max_value]`.

        norms = sqrt(sum(square(w), axis, keepdims=True))
        desired = rate * clip(norms, min_value, max_value) + (1 - rate) * norms
        w = w * desired / (epsilon + norms)

    Args:
        min_value: the smallest norm allowed.
        max_value: the largest norm allowed.
        rate: 1 enforces the bounds at once; less moves the norms part of the
            way at each update.
        axis: an int or a list of ints: the axes each norm is taken over.

    Example:
        >>> w = np.array([[0.3, 3.0], [0.4, 4.0]], "float32")
        >>> np.round(mk.constraints.MinMaxNorm(1.0, 2.0)(w).numpy(), 4)
        array([[0.6, 1.2],
               [0.8, 1.6]], dtype=float32)
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value = min_value, max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        clipped = ops.clip(norms, float(self.min_value), float(self.max_value))
        desired = float(self.rate) * clipped + (1.0 - float(self.rate)) * norms
        return w * (desired / (epsilon() + norms))

    def get_config(self):
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


class NonNeg(Constraint):
    """Sets the negative values of `w` to zero: `maximum(w, 0)`.

    Example:
        >>> mk.constraints.NonNeg()(np.array([-1.0, 2.0], "float32")).numpy()
        array([0., 2.], dtype=float32)
    """

    def __call__(self, w):
        return ops.maximum(w, 0.0)


class UnitNorm(Constraint):
    """Scales each slice of `w` along `axis` to L2 norm 1: `w / (epsilon + norms)`.

    Args:
        axis: an int or a list of ints: the axes each norm is taken over.

    Example:
        >>> mk.constraints.UnitNorm()(np.array([[3.0], [4.0]], "float32")).numpy()
        array([[0.6],
               [0.8]], dtype=float32)
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (epsilon() + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


# The lowercase names Keras exports for the same classes.
max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

_CONSTRAINTS = {
    "max_norm": MaxNorm,
    "min_max_norm": MinMaxNorm,
    "non_neg": NonNeg,
    "unit_norm": UnitNorm,
}
# Class names work too, as in Keras: get("MaxNorm").
_CONSTRAINTS.update({cls.__name__: cls for cls in (Constraint, *_CONSTRAINTS.values())})


def _lookup(name, custom_objects):
    # Custom objects, open scopes and the one registry first (see minikeras.serialization_lib).
    found = serialization_lib.get_registered_object(name, custom_objects)
    if found is not None:
        return found
    if name in _CONSTRAINTS:
        return _CONSTRAINTS[name]
    known = ", ".join(name for name in _CONSTRAINTS if name.islower())
    raise ValueError(
        f"Unknown constraint {name!r}; known constraints: {known}"
        + serialization_lib.unknown_custom_hint(name)
    )


def serialize(constraint):
    """Returns Keras 3's entry (`module`, `class_name`, `config`, `registered_name`).

    `deserialize` turns it back (and reads the short `{"class_name",
    "config"}` form too).

    A named function (not a lambda) is written as its name, as activations
    are: loading finds it if it is registered or given in `custom_objects`.

    Args:
        constraint: a `Constraint`, a named function, or None (returned as None).

    Returns:
        A dict of JSON-friendly values, a name, or None.

    Raises:
        ValueError: for a lambda or another object that has no name or
            config, or a function named like a built-in constraint.

    Example:
        >>> entry = mk.constraints.serialize(mk.constraints.MaxNorm(3))
        >>> entry["module"], entry["class_name"], entry["config"], entry["registered_name"]
        ('keras.constraints', 'MaxNorm', {'max_value': 3, 'axis': 0}, None)
    """
    return serialize_object(constraint, Constraint, _CONSTRAINTS, "constraints")


def deserialize(config, custom_objects=None):
    """Makes a constraint from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` (other keys are
            ignored) or a name such as `"non_neg"` or `"MaxNorm"`.
        custom_objects: optional dict of name -> Constraint class, searched first.

    Returns:
        A `Constraint`.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> mk.constraints.deserialize({"class_name": "MaxNorm", "config": {"max_value": 1.5}})
        MaxNorm(max_value=1.5, axis=0)
    """
    return deserialize_object(
        config,
        lambda name: _lookup(name, custom_objects),
        "constraints",
        custom_objects,
        _CONSTRAINTS,
    )


def get(identifier):
    """Returns the constraint `identifier` stands for.

    Args:
        identifier: None (returned as None), a name such as `"non_neg"`, a
            dict from `serialize`, a `Constraint` class (instantiated with
            defaults) or a callable (returned as it is).

    Returns:
        A callable `constraint(w)`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> mk.constraints.get("max_norm"), mk.constraints.get(None)
        (MaxNorm(max_value=2, axis=0), None)
    """
    return get_object(identifier, deserialize, "constraints")
