"""Control flow: cond, switch, while_loop and fori_loop, as Keras's ops.

Everything runs eagerly, so these are Python's `if` and loops with Keras's
names, arguments and return structures. The branch or body functions are
ordinary minikeras code: under a `GradientTape` each op they run is recorded,
so gradients flow through every iteration taken (a predicate has none).
"""

import numpy as np

from minikeras import tree
from minikeras.ops.core import Tensor, value_of
from minikeras.ops.creation import convert_to_tensor

__all__ = ["cond", "fori_loop", "switch", "while_loop"]


def cond(pred, true_fn, false_fn):
    """Calls `true_fn()` if `pred` is true, else `false_fn()`.

    Only the branch taken runs (Keras traces both on its compiled backends;
    eagerly they need not return the same structure here).

    Args:
        pred: a boolean scalar (Tensor, array or Python bool).
        true_fn: callable of no arguments, for `pred` true.
        false_fn: callable of no arguments, for `pred` false.

    Returns:
        What the branch taken returns.

    Raises:
        ValueError: if `pred` has more than one element.
        TypeError: if a branch is not callable.

    Example:
        >>> x = mk.ops.convert_to_tensor(3.0)
        >>> mk.ops.cond(x > 2.0, lambda: x * 2.0, lambda: x).numpy()
        array(6., dtype=float32)
    """
    for name, branch in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(branch):
            raise TypeError(f"cond: {name} must be callable, got {branch!r}")
    return true_fn() if _scalar_bool("cond", "pred", pred) else false_fn()


def switch(index, branches, *operands):
    """Calls `branches[index](*operands)`, with `index` clamped into range.

    Args:
        index: an integer scalar; below 0 means the first branch, past the
            end the last, as in Keras.
        branches: a non-empty sequence of callables.
        *operands: the arguments for the branch called.

    Returns:
        What the branch called returns.

    Raises:
        ValueError: if `branches` is empty or `index` is not one integer.

    Example:
        >>> branches = [lambda x, y: x + y, lambda x, y: x - y]
        >>> mk.ops.switch(1, branches, 2.0, 0.5)
        1.5
    """
    if not isinstance(branches, (list, tuple)) or not branches:
        raise ValueError(
            f"switch: branches must be a non-empty list of callables, got {branches!r}"
        )
    if isinstance(index, (float, np.floating)) or (
        isinstance(index, np.ndarray) and index.dtype.kind == "f"
    ):  # (value_of makes a numpy float a Python float, which would pass as a number)
        raise ValueError(f"switch: index must be an integer scalar, got {index!r}")
    value = value_of(index)
    shape = getattr(value, "shape", ())
    if (
        shape not in ((), (1,))
        or getattr(value, "dtype", None) is not None
        and value.dtype.kind not in "iub"
    ):
        raise ValueError(f"switch: index must be an integer scalar, got {index!r}")
    position = min(max(int(value.reshape(()) if shape else value), 0), len(branches) - 1)
    return branches[position](*operands)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Runs `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` holds.

    If `loop_vars` is a tuple or list, its items are passed to `cond` and
    `body` positionally and `body` returns a tuple or list of as many; any
    other structure (a tensor, a dict) is passed as one argument. The leaves
    are made Tensors first (Python ints int32, floats float32, as in Keras).

    Args:
        cond: callable giving a boolean scalar from the loop variables.
        body: callable giving the next loop variables.
        loop_vars: a tensor or a nested structure of them.
        maximum_iterations: optional int; at most this many iterations run.

    Returns:
        The final loop variables: a tuple if `loop_vars` is a tuple or list,
        else the structure itself.

    Raises:
        ValueError: if `body` changes the number of loop variables, or
            `maximum_iterations` is negative.

    Example:
        >>> mk.ops.while_loop(lambda i: i < 10, lambda i: i + 1, 0).numpy()
        array(10, dtype=int32)
        >>> x, y = mk.ops.while_loop(lambda x, y: x < 10, lambda x, y: (x + 1, y * 2.0), (0, 1.0))
        >>> int(x), float(y)
        (10, 1024.0)
    """
    if maximum_iterations is not None and (
        not isinstance(maximum_iterations, int) or maximum_iterations < 0
    ):
        raise ValueError(
            f"while_loop: maximum_iterations must be a non-negative int or None, "
            f"got {maximum_iterations!r}"
        )
    is_tuple = isinstance(loop_vars, (tuple, list))
    loop_vars = tuple(_as_tensors(loop_vars)) if is_tuple else (_as_tensors(loop_vars),)
    iteration = 0
    while (maximum_iterations is None or iteration < maximum_iterations) and _scalar_bool(
        "while_loop", "cond's result", cond(*loop_vars)
    ):
        updated = body(*loop_vars)
        updated = tuple(updated) if is_tuple and isinstance(updated, (tuple, list)) else (updated,)
        if len(updated) != len(loop_vars):
            raise ValueError(
                f"while_loop: body must return {len(loop_vars)} loop variable(s), "
                f"as loop_vars has, got {len(updated)}"
            )
        loop_vars = updated
        iteration += 1
    return loop_vars if is_tuple else loop_vars[0]


def fori_loop(lower, upper, body_fun, init_val):
    """Runs `val = body_fun(i, val)` for `i` in `range(lower, upper)`.

    `i` is a Python int here (an int32 scalar tensor on Keras's compiled
    backends); code that indexes or adds with it runs the same on both.
    The leaves of `init_val` are made Tensors first, as in `while_loop`.

    Args:
        lower: int (or integer scalar tensor), the first `i`.
        upper: int (or integer scalar tensor), one past the last `i`.
        body_fun: callable of `(i, val)` giving the next `val`.
        init_val: a tensor or a nested structure of them.

    Returns:
        The final `val`.

    Example:
        >>> mk.ops.fori_loop(0, 10, lambda i, s: s + i, 0).numpy()
        array(45, dtype=int32)
    """
    lower = _int_bound("fori_loop", "lower", lower)
    upper = _int_bound("fori_loop", "upper", upper)
    val = _as_tensors(init_val)
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


def _as_tensors(structure):
    """The structure with its leaves made Tensors (None left as it is)."""
    return tree.map_structure(
        lambda leaf: leaf if leaf is None or isinstance(leaf, Tensor) else convert_to_tensor(leaf),
        structure,
    )


def _scalar_bool(op, name, value):
    """A predicate as a Python bool; one element only, as a compiled backend needs."""
    array = value_of(value)
    size = getattr(array, "size", 1)
    if size != 1:
        raise ValueError(f"{op}: {name} must be a boolean scalar, got shape {array.shape}")
    return bool(array)


def _int_bound(op, name, value):
    array = value_of(value)
    if getattr(array, "dtype", None) is not None and array.dtype.kind not in "iu":
        raise TypeError(f"{op}: {name} must be an integer, got dtype {array.dtype}")
    if isinstance(array, float) or getattr(array, "size", 1) != 1:
        raise TypeError(f"{op}: {name} must be an integer scalar, got {value!r}")
    return int(array)
