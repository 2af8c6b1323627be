"""Sliding blocks of images, channels first: `unfold` (im2col: the blocks as columns) and
`fold` (col2im: columns summed back into an image), PyTorch's `unfold`/`fold` as Keras has them.

`unfold` picks each block's pixels from the zero-padded image by flat position,
with the position-picking primitive of `ops.scatter`; `fold` adds them back with
its twin, each the other's gradient. A column holds one block, channel by
channel, each channel's `kH * kW` values in row order.
"""

import numpy as np

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, op_error, value_of, wrap
from minikeras.ops.scatter import _gather, _scatter_add, slice
from minikeras.ops.shape import pad, reshape, transpose

__all__ = ["fold", "unfold"]


def _pair(op, name, value, low):
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or any(isinstance(v, bool) or int(v) != v or v < low for v in pair):
        raise ValueError(f"{op}: {name} must be an int or a pair of ints >= {low}, got {value!r}")
    return tuple(int(v) for v in pair)


def _positions(op, image, kernel, dilation, padding, stride):
    """The flat positions in the padded image of each block's pixels, `(kH * kW, L, 1)`,
    the padded size and the number of blocks along each axis."""
    padded = tuple(size + 2 * p for size, p in zip(image, padding))
    spans = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    counts = tuple((size - span) // s + 1 for size, span, s in zip(padded, spans, stride))
    if min(counts) < 1:
        raise ValueError(
            f"{op}: a block of {spans} (kernel {kernel}, dilation {dilation}) does not fit "
            f"in an image of {image} padded by {padding}"
        )
    rows = (np.arange(counts[0]) * stride[0])[:, None] + np.arange(kernel[0]) * dilation[0]
    cols = (np.arange(counts[1]) * stride[1])[:, None] + np.arange(kernel[1]) * dilation[1]
    # (blocks down, kernel row, blocks across, kernel column) -> (kernel, blocks)
    flat = rows[:, :, None, None] * padded[1] + cols[None, None, :, :]
    flat = flat.transpose(1, 3, 0, 2).reshape(kernel[0] * kernel[1], -1)
    return flat[..., None], padded, counts


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of a batch of images as columns (im2col).

    Args:
        x: Tensor of shape `(N, C, H, W)` (channels first).
        kernel_size: an int or a pair `(kH, kW)`, the block's size.
        dilation: an int or a pair, the spacing of a block's pixels.
        padding: an int or a pair, zeros added on both sides of H and W.
        stride: an int or a pair, the step between blocks.

    Returns:
        A Tensor of shape `(N, C * kH * kW, L)`, `L` the number of blocks.

    Raises:
        ValueError: if `x` is not 4-d, or the block does not fit.

    Example:
        >>> images = np.arange(16.0, dtype="float32").reshape(1, 1, 4, 4)
        >>> mk.ops.unfold(images, 2, stride=2)[0, :, 0]
        <Tensor shape=(4,) dtype=float32
        [0., 1., 4., 5.]>
    """
    value = array_of(x)
    if np.ndim(value) != 4:
        raise op_error("unfold", "x must be 4-d, (N, C, H, W)", value)
    n, c, h, w = np.shape(value)
    kernel = _pair("unfold", "kernel_size", kernel_size, 1)
    dilation = _pair("unfold", "dilation", dilation, 1)
    padding = _pair("unfold", "padding", padding, 0)
    stride = _pair("unfold", "stride", stride, 1)
    index, padded, _ = _positions("unfold", (h, w), kernel, dilation, padding, stride)
    if padding != (0, 0):
        value = value_of(pad(value, ((0, 0), (0, 0), *((p, p) for p in padding))))
    pixels = transpose(reshape(value, (n, c, padded[0] * padded[1])), (2, 0, 1))
    blocks = wrap(call_primitive(_gather, value_of(pixels), index))  # (kH * kW, L, N, C)
    return reshape(transpose(blocks, (2, 3, 0, 1)), (n, c * index.shape[0], index.shape[1]))


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns of sliding blocks summed back into a batch of images (col2im; overlaps add).

    Args:
        x: Tensor of shape `(N, C * kH * kW, L)`, as `unfold` makes.
        output_size: an int or a pair `(H, W)`, the images' size.
        kernel_size: an int or a pair `(kH, kW)`, the block's size.
        dilation: an int or a pair, the spacing of a block's pixels.
        padding: an int or a pair, the padding `unfold` added (cut off here).
        stride: an int or a pair, the step between blocks.

    Returns:
        A Tensor of shape `(N, C, H, W)`.

    Raises:
        ValueError: if `x` is not 3-d or its shape does not fit the blocks.

    Example:
        >>> mk.ops.fold(np.ones((1, 4, 4), "float32"), 3, 2)[0, 0]
        <Tensor shape=(3, 3) dtype=float32
        [[1., 2., 1.],
         [2., 4., 2.],
         [1., 2., 1.]]>
    """
    value = array_of(x)
    image = _pair("fold", "output_size", output_size, 1)
    kernel = _pair("fold", "kernel_size", kernel_size, 1)
    dilation = _pair("fold", "dilation", dilation, 1)
    padding = _pair("fold", "padding", padding, 0)
    stride = _pair("fold", "stride", stride, 1)
    index, padded, counts = _positions("fold", image, kernel, dilation, padding, stride)
    blocks, size = index.shape[0], counts[0] * counts[1]
    if np.ndim(value) != 3 or np.shape(value)[1] % blocks or np.shape(value)[2] != size:
        raise op_error(
            "fold", f"x must be (N, C * {blocks}, {size}) for these blocks and output_size", value
        )
    n, c = np.shape(value)[0], np.shape(value)[1] // blocks
    columns = transpose(reshape(value, (n, c, blocks, size)), (2, 3, 0, 1))
    shape = (padded[0] * padded[1], n, c)
    pixels = wrap(call_primitive(_scatter_add, value_of(columns), index, shape))
    images = reshape(transpose(pixels, (1, 2, 0)), (n, c, *padded))
    if padding == (0, 0):
        return images
    return slice(images, (0, 0, *padding), (n, c, *image))
