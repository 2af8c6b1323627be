"""Keras 3's operation nodes in a functional config, as minikeras layers.

Keras 3 records some computations of a functional model as nodes of
operations, not layers: the padding mask that `Embedding(mask_zero=True)` or
`Masking` makes and a recurrent layer receives as `mask=` is written as
`NotEqual` (then `Any`, and for merged masks `ExpandDims`, `ZerosLike`,
`LogicalOr`, `Concatenate`) from `keras.src.ops.numpy`, and after an
`Attention` layer as `ConvertToTensor` from `keras.src.ops.core`. Each class here is
one such operation, a layer without weights that computes the same thing
with `minikeras.ops`, so that those files load and save back unchanged. They
have no place among Keras's layers, so they hold no container in
`model.weights.h5`, and a model lists them where Keras does: in
`model.operations` and `summary()`, not in `model.layers` nor to
`get_layer`. An operation not listed here is refused by name when a file is
read.
"""

from minikeras import ops
from minikeras.layers.layer import Layer
from minikeras.serialization_lib import register_keras_serializable

__all__ = [
    "KERAS_OPERATIONS",
    "PACKAGE",
    "KerasOperation",
    "is_operation",
]

PACKAGE = "KerasOps"  # the registry's package of these classes


class KerasOperation(Layer):
    """A Keras operation node of a functional config, run with `minikeras.ops`.

    Subclasses set `keras_module` (where Keras defines the operation) and
    `arguments` (its constructor's arguments besides `name`, with defaults)
    and write `compute`.

    Args:
        name: the node's name (Keras's `keras_history` names it).
        **arguments: the operation's arguments (`axis`, `keepdims`, `dtype`).

    Example:
        >>> not_equal = mk.saving.keras_ops.KERAS_OPERATIONS["NotEqual"](name="not_equal")
        >>> not_equal(np.array([[3, 0]]), 0).numpy()
        array([[ True, False]])
    """

    keras_module = "keras.src.ops.numpy"
    arguments = {}
    _keras_operation = True  # (keras_layout gives it no weights container)

    def __init__(self, name=None, **arguments):
        unknown = sorted(set(arguments) - set(self.arguments))
        if unknown:
            raise TypeError(
                f"the Keras operation {type(self).__name__} takes {sorted(self.arguments)}, "
                f"got {unknown}"
            )
        super().__init__(name=name)
        self.options = {**self.arguments, **arguments}

    def call(self, *args):
        return self.compute(*args, **self.options)

    def get_config(self):
        return {"name": self.name, **self.options}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _bools(x):
    return ops.cast(x, "int32")


def _operation(class_name, arguments=None, module="keras.src.ops.numpy"):
    def define(compute):
        cls = type(class_name, (KerasOperation,), {
            "keras_module": module,
            "arguments": dict(arguments or {}),
            "compute": staticmethod(compute),
            "__doc__": f"Keras's `{class_name}` operation node (see `KerasOperation`).",
            "__module__": __name__,
        })  # fmt: skip
        register_keras_serializable(package=PACKAGE)(cls)
        KERAS_OPERATIONS[class_name] = cls
        return cls

    return define


KERAS_OPERATIONS = {}


@_operation("NotEqual")
def _not_equal(x, y):
    return ops.not_equal(x, y)


@_operation("Equal")
def _equal(x, y):
    return ops.equal(x, y)


@_operation("Any", {"axis": None, "keepdims": False})
def _any(x, axis, keepdims):
    return ops.greater(ops.sum(_bools(x), axis=axis, keepdims=keepdims), 0)


@_operation("All", {"axis": None, "keepdims": False})
def _all(x, axis, keepdims):
    return ops.equal(ops.sum(1 - _bools(x), axis=axis, keepdims=keepdims), 0)


@_operation("ExpandDims", {"axis": None})
def _expand_dims(x, axis):
    return ops.expand_dims(x, axis)


@_operation("ZerosLike", {"dtype": None})
def _zeros_like(x, dtype):
    return ops.zeros_like(x, dtype=dtype)


@_operation("LogicalOr")
def _logical_or(x, y):
    return ops.greater(_bools(x) + _bools(y), 0)


@_operation("LogicalAnd")
def _logical_and(x, y):
    return ops.greater(_bools(x) * _bools(y), 0)


@_operation("LogicalNot")
def _logical_not(x):
    return ops.equal(_bools(x), 0)


@_operation("Concatenate", {"axis": 0})
def _concatenate(xs, axis):
    return ops.concatenate(list(xs), axis=axis)


@_operation("Cast", {"dtype": None}, module="keras.src.ops.core")
def _cast(x, dtype):
    return ops.cast(x, dtype)


@_operation(
    "ConvertToTensor", {"dtype": None, "sparse": None, "ragged": None}, module="keras.src.ops.core"
)
def _convert_to_tensor(x, dtype, sparse, ragged):
    if sparse or ragged:  # (what Keras's Attention writes has neither)
        raise ValueError("convert_to_tensor: sparse and ragged tensors are not in minikeras")
    return x if dtype is None else ops.cast(x, dtype)


def is_operation(layer):
    """Whether `layer` stands for a Keras operation node (no layer in Keras's `model.layers`).

    Args:
        layer: a layer.

    Returns:
        A bool.

    Example:
        >>> mk.saving.keras_ops.is_operation(mk.layers.Dense(2))
        False
    """
    return getattr(type(layer), "_keras_operation", False) is True
