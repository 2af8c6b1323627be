"""The kinds `models.plain_calls` follows through a subclassed model's `call`, and how they mix.

An item of the simulated stack is a tuple: `("tensor",)`, `("tensors",)` (a
list or tuple holding tensors), `("static", type or None)` (a Python value
that depends on no tensor's value), the call's own `training`, `self`, a
layer, a module or a math op. These functions say what an operation on
such items gives, or None where Python itself would read a tensor's value.
"""

import types

from minikeras import activations, ops
from minikeras.models.replayability import REPLAYABLE_OPERATIONS

__all__ = [
    "NUMBERS",
    "SCALARS",
    "TENSOR",
    "TENSORS",
    "TENSOR_ATTRIBUTES",
    "built",
    "callable_or_module",
    "indexed",
    "is_constant",
    "is_static",
    "operated",
]

TENSOR, TENSORS = ("tensor",), ("tensors",)
NUMBERS = (bool, int, float)
SCALARS = (bool, int, float, str, type(None))
_ALLOWED_MODULES = ("minikeras", "minikeras.ops", "minikeras.activations")
_FUNCTION_SOURCES = (ops, activations)

TENSOR_ATTRIBUTES = {
    "shape": ("static", tuple), "ndim": ("static", int), "dtype": ("static", None), "T": TENSOR,
}  # fmt: skip


def is_static(kind):
    return kind[0] == "static"


def operated(left, right):
    """The kind of `left <op> right`, or None when Python would read a tensor's value."""
    if is_static(left) and is_static(right):
        numbers = left[1] in NUMBERS and right[1] in NUMBERS
        return ("static", float if numbers else None)  # (`int / int` is a float too)
    tensor_or_number = (TENSOR, ("static", bool), ("static", int), ("static", float))
    if left in tensor_or_number and right in tensor_or_number:
        return TENSOR  # (a Python number's own operator gives way to the Tensor's)
    return None


def indexed(container, key):
    """The kind of `container[key]`, or None when a tensor would be read as a key."""
    if not is_static(key):
        return None
    if container == TENSOR:
        return TENSOR
    if is_static(container):
        if container[1] is tuple and key[1] is int:
            return ("static", int)  # (a shape's size)
        return ("static", container[1] if key[1] is slice else None)
    return None


def built(items, kind, may_hold_tensors):
    """The kind of a tuple, list or slice of `items`, or None."""
    if all(is_static(item) for item in items):
        return ("static", kind)
    if may_hold_tensors and all(item == TENSOR or is_static(item) for item in items):
        return TENSORS
    return None


def callable_or_module(value, name, owner):
    """A minikeras module, or a math op of `ops` or `activations`, as a stack item; else why not."""
    if isinstance(value, types.ModuleType):
        if value.__name__ in _ALLOWED_MODULES:
            return ("module", value, name)
        return f"{owner} reads the module {value.__name__!r}, not minikeras, its ops or activations"
    if type(value) is types.FunctionType and any(value is op for op in _math_ops()):
        return ("function", value, name)
    return f"{owner} reads {name!r}, not a minikeras module or math op"


def _math_ops():
    """The functions `ops` and `activations` give by the names of `REPLAYABLE_OPERATIONS`."""
    return [
        vars(module)[name]
        for module in _FUNCTION_SOURCES
        for name in REPLAYABLE_OPERATIONS
        if name in vars(module)
    ]


def is_constant(value):
    if type(value) in SCALARS:
        return True
    return type(value) is tuple and all(is_constant(item) for item in value)
