"""`InputLayer`: how a functional model lists its `Input`s among its layers, as Keras does.

`minikeras.Input` returns a `SymbolicTensor`; the `InputLayer` standing for
it is made the first time a model lists it (`input_layer_of`), or directly
by the user (`InputLayer(shape=...)`, whose `output` is the tensor). A
functional model's `layers` and `operations` hold one per input, in Keras's
order; a `Sequential` takes one as its first item and does not list it.
"""

from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.layer import Layer

__all__ = ["InputLayer", "input_layer_of", "keras_dtype_name"]


class InputLayer(Layer):
    """The layer of a functional model's input: a shape and a dtype, no weights.

    `minikeras.Input(...)` is the usual way to start a model; its tensor's
    `InputLayer` is what `model.layers` lists (Keras 3 lists them too), and
    `InputLayer(...)` may start a `Sequential` as an `Input` does.

    Args:
        shape: one sample's shape, without the batch axis.
        batch_size: a fixed batch size, or None.
        dtype: the dtype, float32 by default.
        sparse: accepted for Keras's signature; only False (or None).
        ragged: accepted for Keras's signature; only False (or None).
        batch_shape: the whole shape, batch axis first (instead of `shape`).
        input_tensor: an existing `minikeras.Input` tensor to stand for
            (the other arguments, if given, must agree with it).
        optional: accepted for Keras's signature; only False.
        name: the layer's name (the input's name when it has one).
        **kwargs: Keras's older `input_shape` (for `shape`) and
            `batch_input_shape` (for `batch_shape`).

    Input shape:
        None: it is not called on data; a model feeds its tensor.

    Output shape:
        `batch_shape`: its `output` is the input's `SymbolicTensor`.

    Raises:
        ValueError: for a shape that is missing or given twice, sizes that
            are not positive ints or None, or arguments that disagree with
            `input_tensor`.
        TypeError: if `input_tensor` is not a symbolic tensor.

    Example:
        >>> layer = mk.layers.InputLayer(shape=(3,), name="x")
        >>> layer.batch_shape, layer.output.shape, layer.dtype
        ((None, 3), (None, 3), 'float32')
        >>> model = mk.Model(layer.output, mk.layers.Dense(2)(layer.output))
        >>> [type(item).__name__ for item in model.layers]
        ['InputLayer', 'Dense']
    """

    _holds_no_state = True  # held by its tensor: the untracked-layer scan passes it by

    def __init__(
        self,
        shape=None,
        batch_size=None,
        dtype=None,
        sparse=None,
        ragged=None,
        batch_shape=None,
        input_tensor=None,
        optional=False,
        name=None,
        **kwargs,
    ):
        if "input_shape" in kwargs and shape is None:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs and batch_shape is None:
            batch_shape = kwargs.pop("batch_input_shape")
        if kwargs:
            raise ValueError(
                f"InputLayer: unrecognized keyword arguments {sorted(kwargs)} "
                "(Keras's are shape, batch_size, dtype, sparse, ragged, batch_shape, "
                "input_tensor, optional and name)"
            )
        for argument, value in (("sparse", sparse), ("ragged", ragged), ("optional", optional)):
            if value:
                raise ValueError(f"InputLayer: `{argument}=True` is not supported in minikeras")
        if input_tensor is None:
            input_tensor = Input(
                shape=shape, batch_size=batch_size, dtype=dtype, name=name, batch_shape=batch_shape
            )
        else:
            _check_agrees(input_tensor, shape, batch_size, dtype, batch_shape)
        super().__init__(name=name or input_tensor.name)
        self.built = True
        self._input_tensor = input_tensor
        input_tensor._input_layer = self

    @property
    def dtype(self):
        """The input's dtype (as Keras's InputLayer, not its dtype policy's)."""
        return self._input_tensor.dtype

    @property
    def batch_shape(self):
        """The input's whole shape, batch axis first (None where a size is not fixed)."""
        return self._input_tensor.shape

    @property
    def output(self):
        """The input's `SymbolicTensor` (what `Input(...)` returns)."""
        return self._input_tensor

    def call(self, inputs=None):
        """Gives `inputs` back unchanged: a model feeds its input's data past this layer."""
        return inputs

    def compute_output_shape(self, input_shape=None):
        return self.batch_shape

    def get_config(self):
        return {
            "batch_shape": list(self.batch_shape),
            "dtype": keras_dtype_name(self.dtype),
            "sparse": False,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }


def keras_dtype_name(dtype):
    """An Input's dtype as a config names it for Keras: `"string"` for our `"str"`.

    Args:
        dtype: the dtype name (`SymbolicTensor.dtype`).

    Returns:
        The name Keras reads.

    Example:
        >>> from minikeras.layers.inputs import keras_dtype_name
        >>> keras_dtype_name("str"), keras_dtype_name("int32")
        ('string', 'int32')
    """
    return "string" if dtype == "str" else dtype


def _check_agrees(tensor, shape, batch_size, dtype, batch_shape):
    if not isinstance(tensor, SymbolicTensor):
        raise TypeError(
            "InputLayer: `input_tensor` must be a minikeras.Input tensor, got "
            f"{type(tensor).__name__}"
        )
    given = {
        "shape": None if shape is None else tuple(shape) != tensor.shape[1:],
        "batch_size": None if batch_size is None else batch_size != tensor.shape[0],
        "batch_shape": None if batch_shape is None else tuple(batch_shape) != tensor.shape,
        "dtype": None if dtype is None else str(dtype) != tensor.dtype,
    }
    wrong = [argument for argument, differs in given.items() if differs]
    if wrong:
        raise ValueError(
            f"InputLayer: {', '.join(wrong)} disagree(s) with `input_tensor` "
            f"(shape {tensor.shape}, dtype {tensor.dtype})"
        )


def input_layer_of(tensor):
    """The `InputLayer` standing for an `Input` tensor, made the first time it is asked for.

    Args:
        tensor: a `SymbolicTensor` made by `minikeras.Input`.

    Returns:
        Its `InputLayer` (the same one at every call).

    Example:
        >>> x = mk.Input((3,), name="pixels")
        >>> layer = mk.layers.inputs.input_layer_of(x)
        >>> layer.name, layer.output is x, mk.layers.inputs.input_layer_of(x) is layer
        ('pixels', True, True)
    """
    layer = getattr(tensor, "_input_layer", None)
    if layer is None:
        layer = InputLayer(input_tensor=tensor)
    return layer
