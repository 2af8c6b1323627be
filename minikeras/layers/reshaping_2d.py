"""Padding, cropping and upsampling of images: `ZeroPadding2D`, `Cropping2D`, `UpSampling2D`.

The rank-2 forms of the layers in `reshaping_nd` (written for any rank), on
`(batch, rows, cols, channels)` or channels first; `UpSampling2D` also
interpolates (bilinear, bicubic, Lanczos). All follow Keras 3.
"""

import numpy as np

from minikeras import ops
from minikeras.layers.reshaping_nd import _Cropping, _UpSampling, _ZeroPadding

__all__ = ["Cropping2D", "UpSampling2D", "ZeroPadding2D"]


def _int_pair(layer_class, argument, value, allow_zero):
    """An int or a pair of ints as a pair, each checked (positive, or >= 0)."""
    pair = (value, value) if isinstance(value, int) else value
    try:
        pair = tuple(pair)
    except TypeError:
        pair = ()
    low = 0 if allow_zero else 1
    if len(pair) != 2 or any(
        isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low for v in pair
    ):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(
            f"{layer_class}: `{argument}` must be a {kind} int or a pair of them, got {value!r}"
        )
    return int(pair[0]), int(pair[1])


class UpSampling2D(_UpSampling):
    """Repeats the rows and columns of images `size` times (nearest), or interpolates them.

    Otherwise the output samples the image at the half-pixel centres
    `(i + 0.5) / size - 0.5` with the kernel of `interpolation` (linear,
    Keys cubic with `a = -0.5`, or Lanczos of radius 3 or 5), the weights of
    each output pixel normalized to sum to 1 over the pixels inside the image,
    as Keras's image resize does on JAX and NumPy. (Keras on PyTorch uses a
    cubic with `a = -0.75` and refuses Lanczos; on TensorFlow the borders of
    bicubic differ too. Keras on TensorFlow also takes `"area"`, which is not
    here.)

    Args:
        size: int or `(rows, cols)` pair of positive ints, the upsampling factors.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        interpolation: `"nearest"`, `"bilinear"`, `"bicubic"`, `"lanczos3"`
            or `"lanczos5"` (case-insensitive, as Keras).
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, rows * size[0], cols * size[1], channels)` (channels first likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, rows * size[0], cols * size[1], channels)`.

    Raises:
        ValueError: for a bad `size`, `data_format` or `interpolation`, or
            inputs that are not 4-D.

    Example:
        >>> x = np.arange(4.0).reshape((1, 2, 2, 1))
        >>> mk.layers.UpSampling2D(size=2)(x).numpy()[0, :, :, 0]
        array([[0., 0., 1., 1.],
               [0., 0., 1., 1.],
               [2., 2., 3., 3.],
               [2., 2., 3., 3.]], dtype=float32)
    """

    rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(
            _int_pair("UpSampling2D", "size", size, allow_zero=False), data_format, **kwargs
        )
        method = interpolation.lower() if isinstance(interpolation, str) else interpolation
        if method != "nearest" and method not in _KERNELS:
            raise ValueError(
                "UpSampling2D: `interpolation` must be one of 'nearest', "
                f"{', '.join(repr(name) for name in _KERNELS)}, got {interpolation!r}"
                + (" (Keras takes 'area' on TensorFlow only)" if method == "area" else "")
            )
        self.interpolation = method

    def call(self, inputs):
        if self.interpolation == "nearest":
            return super().call(inputs)
        self.compute_output_shape(inputs.shape)
        return self._interpolate(inputs)

    def _interpolate(self, inputs):
        rows, cols = (inputs.shape[a] for a in self._axes)
        kernel = _KERNELS[self.interpolation]
        row_matrix = _resize_weights(rows, self.size[0], kernel, inputs.dtype)
        col_matrix = _resize_weights(cols, self.size[1], kernel, inputs.dtype)
        if self.data_format == "channels_first":
            return ops.matmul(row_matrix, ops.matmul(inputs, col_matrix.T))
        batch, _, _, channels = inputs.shape
        # Rows: (out_rows, rows) @ (batch, rows, cols * channels); then columns the same way.
        out = ops.matmul(row_matrix, ops.reshape(inputs, (batch, rows, cols * channels)))
        out = ops.reshape(out, (batch * rows * self.size[0], cols, channels))
        out = ops.matmul(col_matrix, out)
        return ops.reshape(out, (batch, rows * self.size[0], cols * self.size[1], channels))

    def get_config(self):
        return {**super().get_config(), "interpolation": self.interpolation}


def _keys_cubic(distance):
    """Keys's cubic convolution kernel with `a = -0.5`, of `|x|`."""
    near = ((1.5 * distance - 2.5) * distance) * distance + 1.0
    far = ((-0.5 * distance + 2.5) * distance - 4.0) * distance + 2.0
    return np.where(distance < 1.0, near, np.where(distance < 2.0, far, 0.0))


def _lanczos(radius):
    def kernel(distance):
        """`sinc(x) sinc(x / radius)` for `|x| <= radius`, else 0."""
        return np.where(distance <= radius, np.sinc(distance) * np.sinc(distance / radius), 0.0)

    return kernel


# The kernels of Keras's image resize, as functions of the distance |x| in input pixels.
_KERNELS = {
    "bilinear": lambda distance: np.maximum(0.0, 1.0 - distance),
    "bicubic": _keys_cubic,
    "lanczos3": _lanczos(3),
    "lanczos5": _lanczos(5),
}


def _resize_weights(size, factor, kernel, dtype):
    """The `(size * factor, size)` matrix of interpolation at half-pixel centres.

    Output pixel i samples the input at `(i + 0.5) / factor - 0.5`; its
    weights, the kernel of the distances to the input pixels, are normalized
    to sum to 1 (so pixels beyond the border are left out, not clamped).
    """
    samples = (np.arange(size * factor) + 0.5) / factor - 0.5
    weights = kernel(np.abs(samples[:, None] - np.arange(size)[None, :]))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(dtype)


class ZeroPadding2D(_ZeroPadding):
    """Adds rows and columns of zeros around images.

    Args:
        padding: `n` (all four sides), `(rows, cols)` (symmetric), or
            `((top, bottom), (left, right))`; non-negative ints.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, top + rows + bottom, left + cols + right, channels)` (channels first
        likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, top + rows + bottom, left + cols + right, channels)`.

    Raises:
        ValueError: for a bad `padding` or `data_format`, or inputs that are
            not 4-D.

    Example:
        >>> mk.layers.ZeroPadding2D(1)(np.ones((1, 1, 2, 1))).numpy()[0, :, :, 0]
        array([[0., 0., 0., 0.],
               [0., 1., 1., 0.],
               [0., 0., 0., 0.]], dtype=float32)
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class Cropping2D(_Cropping):
    """Removes rows and columns from the borders of images.

    Args:
        cropping: `n` (all four sides), `(rows, cols)` (symmetric), or
            `((top, bottom), (left, right))`; non-negative ints.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, rows - top - bottom, cols - left - right, channels)` (channels first
        likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, rows - top - bottom, cols - left - right, channels)`.

    Raises:
        ValueError: for a bad `cropping` or `data_format`, inputs that are not
            4-D, or cropping that leaves no rows or columns.

    Example:
        >>> x = np.arange(16.0).reshape((1, 4, 4, 1))
        >>> mk.layers.Cropping2D(((1, 0), (1, 2)))(x).numpy()[0, :, :, 0]
        array([[ 5.],
               [ 9.],
               [13.]], dtype=float32)
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)
