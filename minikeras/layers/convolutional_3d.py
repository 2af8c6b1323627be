"""`Conv3D` and `Conv3DTranspose`: convolutions over volumes, five-dimensional inputs.

They are `Conv` and `ConvTranspose` with three spatial axes: the same
arguments, weights and output-size formulas as the 1-D and 2-D layers.
"""

from minikeras.layers.conv_transpose import ConvTranspose
from minikeras.layers.convolutional import Conv

__all__ = ["Conv3D", "Conv3DTranspose"]


class Conv3D(Conv):
    """3-D convolution over `(batch, depth, height, width, channels)` volumes.

    Each output voxel is `activation(sum(window * kernel) + bias)` over a
    `kernel_size` window of the input (all channels of a group), stepped by
    `strides`, its taps `dilation_rate` apart.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or three ints.
        strides: an int or three ints.
        padding: `"valid"` or `"same"`.
        **kwargs: as `Conv`: `data_format`, `dilation_rate`, `groups`,
            `activation`, `use_bias`, initializers, regularizers, constraints,
            `name`, `dtype`.

    Input shape:
        `(batch, depth, height, width, channels)` (channels first with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_depth, new_height, new_width, filters)`, each new size
        `floor((n - w) / s) + 1` for `"valid"` and `ceil(n / s)` for `"same"`,
        with `w = dilation * (kernel - 1) + 1`; `None` stays `None`.

    Returns:
        When called: the convolved volumes, as a Tensor.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> layer = mk.layers.Conv3D(4, 3)
        >>> layer(np.ones((2, 5, 6, 7, 1), "float32")).shape
        (2, 3, 4, 5, 4)
        >>> layer.kernel.shape
        (3, 3, 3, 1, 4)
    """

    rank = 3


class Conv3DTranspose(ConvTranspose):
    """Transposed 3-D convolution: upsamples volumes (the gradient of a `Conv3D`).

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or three ints.
        strides: an int or three ints.
        padding: `"valid"` or `"same"`.
        **kwargs: as `ConvTranspose`: `output_padding`, `data_format`,
            `dilation_rate`, `activation`, `use_bias`, initializers,
            regularizers, constraints, `name`, `dtype`.

    Input shape:
        `(batch, depth, height, width, channels)` (channels first with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_depth, new_height, new_width, filters)` (channels first
        likewise), each new size `n * s + max(w - s, 0)` for `"valid"` and
        `n * s` for `"same"` (with `output_padding=p`:
        `(n - 1) * s + w - 2 * pad + p`).

    Returns:
        When called: the upsampled volumes, as a Tensor.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.Conv3DTranspose(2, 3, strides=2)(np.ones((1, 2, 3, 4, 1), "float32")).shape
        (1, 5, 7, 9, 2)
    """

    rank = 3
