"""`InputSpec`: what a built layer's weights require of its inputs, checked at every call.

A layer sets `self.input_spec` in `build` once its weights fix something
about the inputs: `Dense` fixes the last axis to its kernel's first size,
`Conv2D` the rank and the channels. Later calls, eager or symbolic, are
checked against it before `call` runs, so a mismatch is an error naming the
layer, what its weights expect and the shape that came, instead of a numpy
error from inside the math. A layer without a spec is not checked: nothing
is guessed from the weights' shapes.
"""

__all__ = ["InputSpec", "check_input_spec"]


class InputSpec:
    """The rank and sizes a layer accepts (Keras's `InputSpec`).

    Args:
        dtype: unused here (kept for Keras's signature); dtypes are converted.
        shape: a full shape to match, `None` where any size goes.
        ndim: the exact rank.
        max_ndim: the highest rank.
        min_ndim: the lowest rank.
        axes: a dict from axis (negative counts from the end) to the size it must have.
        allow_last_axis_squeeze: accepted for Keras's signature; not used.
        name: an optional name, for messages.
        optional: whether the input may be None (Keras 3's); kept as an
            attribute: minikeras checks the first input's shape, which a
            None input does not reach.

    Example:
        >>> spec = mk.layers.InputSpec(min_ndim=2, axes={-1: 3})
        >>> spec.axes
        {-1: 3}
    """

    def __init__(
        self,
        dtype=None,
        shape=None,
        ndim=None,
        max_ndim=None,
        min_ndim=None,
        axes=None,
        allow_last_axis_squeeze=False,
        name=None,
        optional=False,
    ):
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = {int(axis): int(size) for axis, size in (axes or {}).items()}
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name
        self.optional = optional

    def __repr__(self):
        parts = [
            f"{key}={value}"
            for key, value in (
                ("shape", self.shape),
                ("ndim", self.ndim),
                ("min_ndim", self.min_ndim),
                ("max_ndim", self.max_ndim),
                ("axes", self.axes or None),
            )
            if value is not None
        ]
        return f"InputSpec({', '.join(parts)})"


def _problem(spec, shape):
    rank = len(shape)
    if spec.ndim is not None and rank != spec.ndim:
        return f"inputs of rank {spec.ndim}"
    if spec.min_ndim is not None and rank < spec.min_ndim:
        return f"inputs of rank {spec.min_ndim} or more"
    if spec.max_ndim is not None and rank > spec.max_ndim:
        return f"inputs of rank {spec.max_ndim} or less"
    for axis, size in spec.axes.items():
        if not -rank <= axis < rank:
            return f"inputs with axis {axis} of size {size}"
        if shape[axis] is not None and shape[axis] != size:
            where = "last axis" if axis == -1 else f"axis {axis}"
            return f"inputs with {where} {size}"
    if spec.shape is not None:
        for expected, got in zip(spec.shape, shape):
            if expected is not None and got is not None and expected != got:
                return f"inputs of shape {spec.shape}"
    return None


def check_input_spec(layer, shape):
    """Raises if `shape` does not fit `layer.input_spec` (nothing if it has none).

    Args:
        layer: the layer about to be called.
        shape: the shape of its first input (`None` for unknown sizes).

    Returns:
        None.

    Raises:
        ValueError: naming the layer, what it expects and the shape that came.

    Example:
        >>> dense = mk.layers.Dense(2)
        >>> _ = dense(np.ones((1, 3)))
        >>> mk.layers.input_spec.check_input_spec(dense, (None, 4))
        Traceback (most recent call last):
        ...
        ValueError: Dense 'dense...' expected inputs with last axis 3, got shape (None, 4)
    """
    spec = layer.input_spec
    if spec is None:
        return
    for one in spec if isinstance(spec, (list, tuple)) else (spec,):
        problem = _problem(one, tuple(shape))
        if problem:
            raise ValueError(
                f"{type(layer).__name__} '{layer.name}' expected {problem}, got shape "
                f"{tuple(shape)}"
            )
