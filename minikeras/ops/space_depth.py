"""Moving pixels between space and channels: depth_to_space (pixel shuffle) and its
inverse space_to_depth, with Keras 3's layouts.

Each is one reshape, one transpose and one reshape, which give it its gradient.
The channel order follows Keras's JAX backend: in `channels_last` a block's
position is the slower channel index (`(row * b + col) * C' + c`, as
TensorFlow); in `channels_first` it is the faster (`c * b * b + row * b + col`,
as PyTorch's `pixel_shuffle`).
"""

import numpy as np

from minikeras import config
from minikeras.ops.core import array_of, shape_of, wrap
from minikeras.ops.shape import reshape, transpose

__all__ = ["depth_to_space", "space_to_depth"]


def _checked(op, x, block_size, data_format):
    """The value of `x`, its `(n, h, w, c)` and whether channels come last; else errors."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"{op}: block_size must be an int, got {block_size!r}")
    if block_size < 2:
        raise ValueError(f"{op}: block_size must be at least 2 (as in Keras), got {block_size}")
    data_format = config.standardize_data_format(data_format, op)
    value = array_of(x)
    shape = shape_of(value)
    if len(shape) != 4:
        raise ValueError(f"{op}: x must be 4-D (batch, rows, columns, channels), got {shape}")
    last = data_format == "channels_last"
    n, h, w, c = shape if last else (shape[0], shape[2], shape[3], shape[1])
    return wrap(value), (n, h, w, c), last


def depth_to_space(x, block_size, data_format="channels_last"):
    """Moves channels into space: each pixel's `b * b` channel groups become a `b x b` block.

    `(N, H, W, C)` becomes `(N, H * b, W * b, C / b**2)` (channels_last), the
    inverse of `space_to_depth`; also called pixel shuffle.

    Args:
        x: a 4-D Tensor or array-like.
        block_size: an int `b >= 2`; the channels must be a multiple of `b * b`.
        data_format: `"channels_last"` (`(N, H, W, C)`; None means
            `mk.config.image_data_format()`) or
            `"channels_first"` (`(N, C, H, W)`).

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        ValueError: if `x` is not 4-D, its channels are not a multiple of
            `block_size ** 2`, or `data_format` is unknown.
        TypeError: if `block_size` is not an int.

    Example:
        >>> x = np.arange(4, dtype="float32").reshape(1, 1, 1, 4)
        >>> mk.ops.depth_to_space(x, 2).numpy()[0, :, :, 0]
        array([[0., 1.],
               [2., 3.]], dtype=float32)
    """
    value, (n, h, w, c), last = _checked("depth_to_space", x, block_size, data_format)
    b = int(block_size)
    if c % (b * b):
        raise ValueError(
            f"depth_to_space: the channels ({c}) must be a multiple of block_size**2 ({b * b}); "
            f"got shape {shape_of(value)}"
        )
    if last:
        blocks = transpose(reshape(value, (n, h, w, b, b, c // (b * b))), (0, 1, 3, 2, 4, 5))
        return reshape(blocks, (n, h * b, w * b, c // (b * b)))
    blocks = transpose(reshape(value, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return reshape(blocks, (n, c // (b * b), h * b, w * b))


def space_to_depth(x, block_size, data_format="channels_last"):
    """Moves space into channels: each `b x b` block of pixels becomes `b * b` channel groups.

    `(N, H, W, C)` becomes `(N, H / b, W / b, C * b**2)` (channels_last), the
    inverse of `depth_to_space`.

    Args:
        x: a 4-D Tensor or array-like.
        block_size: an int `b >= 2` dividing the rows and the columns.
        data_format: `"channels_last"` (`(N, H, W, C)`; None means
            `mk.config.image_data_format()`) or
            `"channels_first"` (`(N, C, H, W)`).

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        ValueError: if `x` is not 4-D, `block_size` does not divide its rows
            and columns, or `data_format` is unknown.
        TypeError: if `block_size` is not an int.

    Example:
        >>> x = np.arange(4, dtype="float32").reshape(1, 2, 2, 1)
        >>> mk.ops.space_to_depth(x, 2).numpy()
        array([[[[0., 1., 2., 3.]]]], dtype=float32)
    """
    value, (n, h, w, c), last = _checked("space_to_depth", x, block_size, data_format)
    b = int(block_size)
    if h % b or w % b:
        raise ValueError(
            f"space_to_depth: block_size ({b}) must divide the rows ({h}) and columns ({w}); "
            f"got shape {shape_of(value)}"
        )
    if last:
        blocks = transpose(reshape(value, (n, h // b, b, w // b, b, c)), (0, 1, 3, 2, 4, 5))
        return reshape(blocks, (n, h // b, w // b, c * b * b))
    blocks = transpose(reshape(value, (n, c, h // b, b, w // b, b)), (0, 1, 3, 5, 2, 4))
    return reshape(blocks, (n, c * b * b, h // b, w // b))
