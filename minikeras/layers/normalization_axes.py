"""The `axis` argument of the normalization layers: checked when given, resolved at build."""

__all__ = ["check_axis_argument", "normalize_axes"]


def check_axis_argument(layer_class, axis):
    """Checks a normalization layer's `axis` argument: an int or a non-empty list of ints.

    Args:
        layer_class: the class name of the layer, for the error message.
        axis: the argument as given.

    Returns:
        None.

    Raises:
        ValueError: if `axis` is not an int or a non-empty list or tuple of ints.

    Example:
        >>> from minikeras.layers.normalization_axes import check_axis_argument
        >>> check_axis_argument("LayerNormalization", [1, -1])
        >>> check_axis_argument("LayerNormalization", 1.0)
        Traceback (most recent call last):
        ...
        ValueError: LayerNormalization: `axis` must be an int or a list of ints, got 1.0
    """
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    if not axes or any(isinstance(a, bool) or not isinstance(a, int) for a in axes):
        raise ValueError(f"{layer_class}: `axis` must be an int or a list of ints, got {axis!r}")


def normalize_axes(layer, axes, input_shape):
    """`axes` as sorted non-negative ints, checked against `input_shape`.

    Args:
        layer: the layer being built, named in error messages.
        axes: a list of ints, possibly negative.
        input_shape: the shape the layer is built for.

    Returns:
        A sorted tuple of non-negative ints.

    Raises:
        ValueError: if an axis is out of range, has an unknown size, or comes twice.

    Example:
        >>> from minikeras.layers.normalization_axes import normalize_axes
        >>> layer = mk.layers.LayerNormalization(name="norm")
        >>> normalize_axes(layer, [-1, 1], (None, 4, 3))
        (1, 2)
        >>> normalize_axes(layer, [3], (None, 4, 3))
        Traceback (most recent call last):
        ...
        ValueError: LayerNormalization 'norm': axis 3 is out of range for inputs of shape ...
    """
    rank = len(input_shape)
    name = f"{type(layer).__name__} '{layer.name}'"
    result = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ValueError(
                f"{name}: axis {axis} is out of range for inputs of shape {tuple(input_shape)}"
            )
        if input_shape[axis] is None:
            raise ValueError(
                f"{name} needs a known size on axis {axis}, got inputs of shape "
                f"{tuple(input_shape)}"
            )
        result.append(axis % rank)
    if len(set(result)) != len(result):
        raise ValueError(f"{name}: axis {list(axes)} names an axis twice")
    return tuple(sorted(result))
