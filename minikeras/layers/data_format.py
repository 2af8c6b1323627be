"""`data_format="channels_first"` for the convolution and pooling layers, by transposing.

minikeras computes in channels-last layout only. A layer made with
`data_format="channels_first"` takes and gives `(batch, channels, *spatial)`:
its `call` transposes the inputs to `(batch, *spatial, channels)`, runs the
channels-last computation, and transposes the outputs back; `build` and
`compute_output_shape` read and give shapes the same way. The weights are
the same as for channels last, so a layer's weights do not depend on the
layout it was made with. A layer made with `data_format=None` takes
`mk.config.image_data_format()` then (Keras's rule) and keeps it.
"""

import functools

from minikeras import config, ops

__all__ = ["ChannelsFirst", "check_layer_data_format", "check_spatial_rank"]


def check_layer_data_format(layer_class, data_format):
    """`"channels_last"` or `"channels_first"`, from `data_format` (None: the global setting).

    A layer made with `data_format=None` takes `mk.config.image_data_format()`
    as it is when the layer is made, and keeps it (in its config too), as in Keras.

    Args:
        layer_class: the layer's class name, for errors.
        data_format: the value given.

    Returns:
        The layout's name.

    Raises:
        ValueError: for any other value.

    Example:
        >>> mk.layers.data_format.check_layer_data_format("Conv2D", None)
        'channels_last'
    """
    return config.standardize_data_format(data_format, layer_class)


# The axes of channels-last inputs, by spatial rank, for errors.
_AXES = {
    1: "batch, steps, channels",
    2: "batch, height, width, channels",
    3: "batch, depth, height, width, channels",
}


def check_spatial_rank(layer, shape):
    """Checks that `shape` is `(batch, *spatial, channels)` with `layer.rank` spatial axes.

    Args:
        layer: a layer with a `rank` (its number of spatial axes) and a `name`.
        shape: the inputs' shape, channels last.

    Raises:
        ValueError: if the shape has another rank.

    Example:
        >>> layer = mk.layers.MaxPooling1D(name="pool")
        >>> try:
        ...     mk.layers.data_format.check_spatial_rank(layer, (2, 8))
        ... except ValueError as error:
        ...     print(error)
        MaxPooling1D 'pool' expected inputs of rank 3 (batch, steps, channels), got shape (2, 8)
    """
    if len(shape) != layer.rank + 2:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' expected inputs of rank {layer.rank + 2} "
            f"({_AXES[layer.rank]}), got shape {tuple(shape)}"
        )


def _last_shape(shape):
    shape = tuple(shape)
    return (shape[0], *shape[2:], shape[1]) if len(shape) > 2 else shape


def _first_shape(shape):
    shape = tuple(shape)
    return (shape[0], shape[-1], *shape[1:-1]) if len(shape) > 2 else shape


def _to_last(x):
    return ops.transpose(x, (0, *range(2, x.ndim), 1)) if x.ndim > 2 else x


def _to_first(y, ndim):
    if y.ndim != ndim or ndim <= 2:  # a global pooling without keepdims: (batch, channels)
        return y
    return ops.transpose(y, (0, ndim - 1, *range(1, ndim - 1)))


def _wrapped(name, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self.data_format != "channels_first" or self.__dict__.get("_in_channels_last"):
            return method(self, *args, **kwargs)
        if args:
            first, args = args[0], args[1:]
        else:  # build(input_shape=...): the one shape, by its name
            key = next(iter(kwargs))
            first = kwargs.pop(key)
        object.__setattr__(self, "_in_channels_last", True)
        try:
            if name == "call":
                return _to_first(method(self, _to_last(first), *args, **kwargs), first.ndim)
            result = method(self, _last_shape(first), *args, **kwargs)
            if name == "compute_output_shape" and len(result) == len(first):
                return _first_shape(result)
            return result
        finally:
            object.__setattr__(self, "_in_channels_last", False)

    wrapper._channels_first = True
    return wrapper


class ChannelsFirst:
    """A mixin: the `call`, `build` and `compute_output_shape` a class writes take both layouts.

    See the module. The class must set `self.data_format`.

    Example:
        >>> layer = mk.layers.Conv2D(4, 3, data_format="channels_first")
        >>> layer(np.ones((2, 1, 8, 8), "float32")).shape
        (2, 4, 6, 6)
    """

    def __init_subclass__(cls, **kwargs):
        # Wrapped before Layer's own __init_subclass__ wraps build, so that the shape a
        # build records (for saving) is the one given, in the layer's layout.
        for name in ("call", "build", "compute_output_shape"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_channels_first", False):
                setattr(cls, name, _wrapped(name, method))
        super().__init_subclass__(**kwargs)
