"""Joining and splitting along fixed axes: `hstack`, `vstack`, `dstack`, `append`, and
`hsplit`, `vsplit`, `dsplit`, `array_split`, `unstack`.

Each is `concatenate` or `split` along the axis numpy's function names (a
join's gradient splits the incoming one, a split's joins it back). Operands
of mixed dtypes meet as in `concatenate`: integers joining floats take the
float dtype, as in Keras.
"""

import numpy as np

from minikeras.ops.core import array_of, normalize_axis, op_error, value_of
from minikeras.ops.reordering import ravel
from minikeras.ops.shape import _joinable, concatenate, reshape, split, squeeze

__all__ = [
    "append",
    "array_split",
    "dsplit",
    "dstack",
    "hsplit",
    "hstack",
    "unstack",
    "vsplit",
    "vstack",
]


def _join(op, values, axis):
    try:
        return concatenate(values, axis=axis)
    except ValueError:
        raise op_error(op, f"shapes must match except on axis {axis}", *values) from None


def _at_least(values, ndim):
    """Each value given leading (and, for 3 axes, trailing) axes of size 1, as numpy's
    `atleast_2d` / `atleast_3d` do."""
    shaped = []
    for value in values:
        shape = np.shape(value)
        if len(shape) < ndim:
            if ndim == 2:
                shape = (1,) * (2 - len(shape)) + shape
            else:  # () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
                shape = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
            value = value_of(reshape(value, shape))
        shaped.append(value)
    return shaped


def hstack(xs):
    """Joins tensors column-wise: along axis 1, or axis 0 for 1-d tensors.

    Args:
        xs: a list or tuple of Tensors or array-likes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `xs` is empty or the shapes differ off the joined axis.

    Example:
        >>> mk.ops.hstack([np.ones((2, 1)), np.zeros((2, 2))]).numpy()
        array([[1., 0., 0.],
               [1., 0., 0.]])
    """
    values = _joinable("hstack", xs)
    values = [value_of(reshape(v, (1,))) if np.ndim(v) == 0 else v for v in values]
    return _join("hstack", values, 0 if np.ndim(values[0]) == 1 else 1)


def vstack(xs):
    """Joins tensors row-wise, along axis 0; 1-d tensors become rows.

    Args:
        xs: a list or tuple of Tensors or array-likes.

    Returns:
        A Tensor of at least 2 axes.

    Raises:
        ValueError: if `xs` is empty or the shapes differ off axis 0.

    Example:
        >>> mk.ops.vstack([np.array([1, 2], "int32"), np.array([3, 4], "int32")]).numpy()
        array([[1, 2],
               [3, 4]], dtype=int32)
    """
    return _join("vstack", _at_least(_joinable("vstack", xs), 2), 0)


def dstack(xs):
    """Joins tensors depth-wise, along axis 2; `(n,)` becomes `(1, n, 1)`, `(m, n)`
    becomes `(m, n, 1)`.

    Args:
        xs: a list or tuple of Tensors or array-likes.

    Returns:
        A Tensor of at least 3 axes.

    Raises:
        ValueError: if `xs` is empty or the shapes differ off axis 2.

    Example:
        >>> mk.ops.dstack([np.ones((2, 3)), np.zeros((2, 3))]).shape
        (2, 3, 2)
    """
    return _join("dstack", _at_least(_joinable("dstack", xs), 3), 2)


def append(x1, x2, axis=None):
    """`x2` appended to `x1` along `axis`; with `axis=None`, both flattened first.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like; its shape must match `x1`'s off `axis`.
        axis: the axis to join along, or None.

    Returns:
        A Tensor (1-d when `axis` is None).

    Raises:
        ValueError: if the shapes differ off `axis`.

    Example:
        >>> mk.ops.append(np.array([1, 2], "int32"), np.array([[3], [4]], "int32")).numpy()
        array([1, 2, 3, 4], dtype=int32)
    """
    values = _joinable("append", [x1, x2])
    if axis is None:
        values = [value_of(ravel(value)) for value in values]
        axis = 0
    return _join("append", values, axis)


def _split(op, x, indices_or_sections, axis, equal=True):
    value = array_of(x)
    if np.ndim(value) == 0:
        raise op_error(op, "cannot split a scalar", value)
    axis = normalize_axis(op, axis, np.ndim(value), value)
    sections = indices_or_sections
    if not isinstance(sections, (int, np.integer)):
        sections = [int(i) for i in np.asarray(sections).reshape(-1)]  # (numpy's own)
    elif isinstance(sections, bool) or sections < 1:
        raise ValueError(
            f"{op}: indices_or_sections must be a positive int or a list of "
            f"indices, got {indices_or_sections!r}"
        )
    length = np.shape(value)[axis]
    if isinstance(sections, int) and not equal:  # the first `length % sections` parts longer
        size, longer = divmod(length, sections)
        sections = [i * size + min(i, longer) for i in range(1, sections)]
    elif isinstance(sections, int) and length % sections:
        raise op_error(op, f"cannot split into {sections} equal parts on axis {axis}", value)
    return split(value, sections, axis=axis)


def array_split(x, indices_or_sections, axis=0):
    """Splits into `indices_or_sections` parts along `axis`, the first ones a value longer
    when the axis does not divide evenly (or at a list of indices).

    Args:
        x: Tensor or array-like.
        indices_or_sections: a positive int, or a list of indices (Keras takes
            only an int).
        axis: the axis to split.

    Returns:
        A list of Tensors.

    Raises:
        ValueError: for a scalar `x`, a bad axis or a non-positive count.

    Example:
        >>> [part.shape for part in mk.ops.array_split(np.ones((5, 2)), 3)]
        [(2, 2), (2, 2), (1, 2)]
    """
    return _split("array_split", x, indices_or_sections, axis, equal=False)


def hsplit(x, indices_or_sections):
    """Splits column-wise: along axis 1, or axis 0 for a 1-d tensor, into equal parts.

    Args:
        x: Tensor or array-like of 1 or more axes.
        indices_or_sections: the number of equal parts, or a list of indices.

    Returns:
        A list of Tensors.

    Raises:
        ValueError: if the axis does not divide into equal parts.

    Example:
        >>> [part.shape for part in mk.ops.hsplit(np.ones((2, 4)), 2)]
        [(2, 2), (2, 2)]
    """
    axis = 0 if np.ndim(array_of(x)) == 1 else 1
    return _split("hsplit", x, indices_or_sections, axis)


def vsplit(x, indices_or_sections):
    """Splits row-wise, along axis 0, into equal parts (or at a list of indices).

    Args:
        x: Tensor or array-like of 2 or more axes.
        indices_or_sections: the number of equal parts, or a list of indices.

    Returns:
        A list of Tensors.

    Raises:
        ValueError: if `x` has fewer than 2 axes or axis 0 does not divide equally.

    Example:
        >>> [part.shape for part in mk.ops.vsplit(np.ones((4, 3)), [1])]
        [(1, 3), (3, 3)]
    """
    return _split("vsplit", _rank_at_least("vsplit", x, 2), indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    """Splits depth-wise, along axis 2, into equal parts (or at a list of indices).

    Args:
        x: Tensor or array-like of 3 or more axes.
        indices_or_sections: the number of equal parts, or a list of indices.

    Returns:
        A list of Tensors.

    Raises:
        ValueError: if `x` has fewer than 3 axes or axis 2 does not divide equally.

    Example:
        >>> [part.shape for part in mk.ops.dsplit(np.ones((2, 4, 3)), 3)]
        [(2, 4, 1), (2, 4, 1), (2, 4, 1)]
    """
    return _split("dsplit", _rank_at_least("dsplit", x, 3), indices_or_sections, 2)


def _rank_at_least(op, x, ndim):
    value = array_of(x)
    if np.ndim(value) < ndim:
        raise op_error(op, f"x needs {ndim} or more axes", value)
    return value


def unstack(x, num=None, axis=0):
    """The slices of `x` along `axis`, as a list, that axis removed from each.

    Args:
        x: Tensor or array-like of 1 or more axes.
        num: None, or the length of `axis`, checked (Keras ignores it on jax).
        axis: the axis to unstack.

    Returns:
        A list of `x.shape[axis]` Tensors.

    Raises:
        ValueError: for a scalar, a bad axis, or `num` other than the axis's length.

    Example:
        >>> [t.numpy() for t in mk.ops.unstack(np.array([[1, 2], [3, 4]], "int32"), axis=1)]
        [array([1, 3], dtype=int32), array([2, 4], dtype=int32)]
    """
    value = array_of(x)
    if np.ndim(value) == 0:
        raise op_error("unstack", "cannot unstack a scalar", value)
    axis = normalize_axis("unstack", axis, np.ndim(value), value)
    length = np.shape(value)[axis]
    if num is not None and num != length:
        raise op_error("unstack", f"num={num!r} but axis {axis} has length {length}", value)
    if length == 0:
        return []
    return [squeeze(part, axis) for part in split(value, length, axis=axis)]
