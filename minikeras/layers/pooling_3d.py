"""Pooling over volumes: `MaxPooling3D`, `AveragePooling3D` and their global forms."""

from minikeras import ops
from minikeras.layers.global_pooling import GlobalPooling
from minikeras.layers.pooling import Pooling

__all__ = ["AveragePooling3D", "GlobalAveragePooling3D", "GlobalMaxPooling3D", "MaxPooling3D"]


class MaxPooling3D(Pooling):
    """The largest value of each window of voxels, channel by channel.

    Args:
        pool_size: an int or three ints, the window size.
        strides: an int, three ints, or None (then `pool_size`).
        padding: `"valid"` or `"same"`.
        data_format: None, `"channels_last"` or `"channels_first"`.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, height, width, channels)`.

    Output shape:
        `(batch, new_depth, new_height, new_width, channels)`, each new size
        `floor((n - pool) / stride) + 1` for `"valid"`, `ceil(n / stride)` for `"same"`.

    Returns:
        When called: the pooled volumes, as a Tensor.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.arange(8.0).reshape(1, 2, 2, 2, 1)
        >>> mk.layers.MaxPooling3D(pool_size=2)(x).numpy().ravel()
        array([7.], dtype=float32)
    """

    rank = 3
    reduce = staticmethod(ops.max_pool)


class AveragePooling3D(Pooling):
    """The mean of each window of voxels, channel by channel.

    Args:
        pool_size: an int or three ints, the window size.
        strides: an int, three ints, or None (then `pool_size`).
        padding: `"valid"` or `"same"` (the mean over the part inside the input).
        data_format: None, `"channels_last"` or `"channels_first"`.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, height, width, channels)`.

    Output shape:
        `(batch, new_depth, new_height, new_width, channels)`, as `MaxPooling3D`.

    Returns:
        When called: the pooled volumes, as a Tensor.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.arange(8.0).reshape(1, 2, 2, 2, 1)
        >>> mk.layers.AveragePooling3D(pool_size=2)(x).numpy().ravel()
        array([3.5], dtype=float32)
    """

    rank = 3
    reduce = staticmethod(ops.average_pool)


class GlobalMaxPooling3D(GlobalPooling):
    """The largest value over all voxels, channel by channel: one value per channel.

    Args:
        data_format: None, `"channels_last"` or `"channels_first"`.
        keepdims: keep the spatial axes, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, height, width, channels)`.

    Output shape:
        `(batch, channels)`, or `(batch, 1, 1, 1, channels)` with `keepdims`.

    Returns:
        When called: the pooled values, as a Tensor.

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> x = np.arange(16.0).reshape(1, 2, 2, 2, 2)
        >>> mk.layers.GlobalMaxPooling3D()(x).numpy()
        array([[14., 15.]], dtype=float32)
    """

    rank = 3
    reduce = staticmethod(ops.max)


class GlobalAveragePooling3D(GlobalPooling):
    """The mean over all voxels, channel by channel: one value per channel.

    Args:
        data_format: None, `"channels_last"` or `"channels_first"`.
        keepdims: keep the spatial axes, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, height, width, channels)`.

    Output shape:
        `(batch, channels)`, or `(batch, 1, 1, 1, channels)` with `keepdims`.

    Returns:
        When called: the pooled values, as a Tensor.

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> x = np.arange(16.0).reshape(1, 2, 2, 2, 2)
        >>> mk.layers.GlobalAveragePooling3D()(x).numpy()
        array([[7., 8.]], dtype=float32)
    """

    rank = 3
    reduce = staticmethod(ops.mean)
