"""The graph node an op on symbolic tensors records: `OperationNode` (Keras's `Operation`).

In Keras 3, `keras.ops.mean(x, axis=-1)` or `x + y` on symbolic tensors
returns a new symbolic tensor and records a node of an operation (class
`Mean`, `Add`, ... in `keras.src.ops`), which a functional model runs on
data. Here each public function of `minikeras.ops` has a node class of
Keras's name (`OPERATION_CLASSES`): a layer without weights whose call is
the op, with the call's other arguments (an axis, a constant, a slice) kept
in the graph's node. As in Keras, a model lists these nodes in
`model.operations` and `summary()`, not in `model.layers` nor to
`get_layer`; they carry no mask (an op's output has none in Keras), and
they run in the dtypes they are given (no layer casting).
"""

import inspect

import numpy as np

from minikeras import config, ops
from minikeras.engine.context import state as _state
from minikeras.layers import call_helpers
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.operation_layer import _IMAGE_OPS, OperationNode, _record
from minikeras.layers.operation_specs import KERAS_OPERATION_SPECS, split_arguments
from minikeras.ops.symbolic import bind_symbolic_call
from minikeras.tree import flatten, map_structure

__all__ = [
    "OPERATION_CLASSES",
    "PACKAGE",
    "OperationNode",
    "keras_class_name",
    "keras_class_names",
    "keras_operation_class",
    "operation_class",
    "symbolic_op_call",
]

PACKAGE = "MinikerasOps"  # the registry's package of the node classes

# Where Keras's class name is not the function's name in CamelCase.
_KERAS_CLASS_NAMES = {"abs": "Absolute", "getitem": "GetItem", "cdist": "CDist"}
_KERAS_CLASS_NAMES |= {"allclose": "AllClose", "isin": "IsIn"}  # (the element-wise family)
_KERAS_CLASS_NAMES |= {  # (the nnops family)
    "batch_normalization": "BatchNorm",
    "layer_normalization": "LayerNorm",
    "rms_normalization": "RMSNorm",
    "psnr": "PSNR",
    "ctc_loss": "CTCLoss",
    "ctc_decode": "CTCDecode",
}
# (the linear algebra and Fourier family)
_KERAS_CLASS_NAMES |= {n: n.upper() for n in ("svd", "fft", "fft2", "ifft2", "rfft", "irfft")}
_KERAS_CLASS_NAMES |= {"stft": "STFT", "istft": "ISTFT"}
# (the image family)
_KERAS_CLASS_NAMES |= {"rgb_to_grayscale": "RGBToGrayscale", "rgb_to_hsv": "RGBToHSV"}
_KERAS_CLASS_NAMES |= {"hsv_to_rgb": "HSVToRGB", "ssim": "SSIM"}


def keras_class_name(function_name):
    """Keras's class name of the operation node of `minikeras.ops.<function_name>`.

    Args:
        function_name: the name of a public op.

    Returns:
        A CamelCase name (`"Mean"`, `"ExpandDims"`, `"GetItem"`).

    Example:
        >>> from minikeras.layers.operation_node import keras_class_name
        >>> keras_class_name("expand_dims"), keras_class_name("abs")
        ('ExpandDims', 'Absolute')
    """
    if function_name in _KERAS_CLASS_NAMES:
        return _KERAS_CLASS_NAMES[function_name]
    return "".join(word.capitalize() for word in function_name.split("_"))


def _layout_now(function, args, kwargs):
    # A data_format left None is the global image layout when the op is called, as in
    # Keras: the node keeps it, and computes in the layout the model was built in.
    parameters = inspect.signature(function).parameters
    if "data_format" not in parameters:
        return args, kwargs
    bound = inspect.signature(function).bind(*args, **kwargs)
    if bound.arguments.get("data_format", parameters["data_format"].default) is not None:
        return args, kwargs
    bound.arguments["data_format"] = config.image_data_format()
    return bound.args, bound.kwargs


def symbolic_op_call(function_name, function, args, kwargs, error):
    """What a public op does given symbolic tensors: records a node and returns its outputs.

    `minikeras.ops` calls it (see `minikeras.ops.symbolic`) when the op found
    a symbolic tensor among its arguments.

    Args:
        function_name: the op's name in `minikeras.ops`.
        function: the op (unwrapped).
        args: its positional arguments.
        kwargs: its keyword arguments.
        error: the `SymbolicValueError` the op raised, raised again if no
            symbolic tensor is among the arguments.

    Returns:
        Symbolic outputs (a `SymbolicTensor` or a structure of them).

    Raises:
        SymbolicValueError: if no argument is symbolic.
        ValueError, TypeError: what the op raises on placeholder data of the
            symbolic tensors' shapes (a shape mismatch, say).

    Example:
        >>> a, b = mk.Input((3,)), mk.Input((3,))
        >>> y = mk.ops.concatenate([a, b], axis=-1)
        >>> y.shape, type(y.node.layer).__name__, y.node.layer.name.startswith("concatenate")
        ((None, 6), 'Concatenate', True)
    """
    if not call_helpers.symbolic_among(args, kwargs):
        raise error
    if _state.call_stack:  # a layer's call (run on placeholder data) met a symbolic tensor
        layer = _state.call_stack[-1].layer
        raise TypeError(
            f"ops.{function_name} in the call of {type(layer).__name__} '{layer.name}' met a "
            "symbolic tensor the layer was not given as an input (one its function or "
            "attributes hold): pass it to the layer as an input instead"
        ) from error
    args, kwargs = _float_constants_as(_symbolic_float(args, kwargs), args, kwargs)
    args, kwargs = _layout_now(function, args, kwargs)
    options = {}
    if function_name in KERAS_OPERATION_SPECS:
        options, args, kwargs = split_arguments(function_name, function, args, kwargs)
    elif not args:  # every argument by keyword: the first ones become positional
        bound = inspect.signature(function).bind(**kwargs)
        args, kwargs = bound.args, bound.kwargs
    return _record(OPERATION_CLASSES[function_name](**options), args, kwargs)


def _symbolic_float(args, kwargs):
    """The float dtype of the first floating symbolic tensor among the arguments; floatx
    if they hold integers or booleans only (as `ops.operands` takes a mask); else None."""
    symbolic = [leaf for leaf in flatten((args, kwargs)) if isinstance(leaf, SymbolicTensor)]
    for leaf in symbolic:
        if np.dtype(leaf.dtype).kind == "f":
            return leaf.dtype
    if symbolic and all(np.dtype(leaf.dtype).kind in "iub" for leaf in symbolic):
        return config.floatx()
    return None


def _float_constants_as(dtype, args, kwargs):
    """float64 numpy constants in the arguments, as `dtype`: as Keras 3 takes them.

    Keras gives `x @ np.ones((3, 2))` on a float32 `Input` a float32 result: a
    numpy float64 array does not widen a float model's graph. (None: unchanged.)
    """
    if dtype is None or dtype == "float64":
        return args, kwargs

    def narrowed(leaf):
        if type(leaf) is np.ndarray and leaf.dtype == np.float64:
            return leaf.astype(dtype)
        return leaf

    return map_structure(narrowed, (args, kwargs))


def _node_class(function_name):
    class_name = keras_class_name(function_name)
    cls = type(class_name, (OperationNode,), {
        "function_name": function_name,
        "__doc__": f"The graph node of `minikeras.ops.{function_name}` (see `OperationNode`).",
        "__module__": __name__,
    })  # fmt: skip
    return cls


# minikeras.ops function name -> its node class. Not in the object registry, which also
# finds a registered class by its bare name (a `Mean` there would shadow the metric's):
# saving finds them by `registered_name` through `operation_class`.
# One class per function: a second name of an op (`ops.absolute` is `ops.abs`) has none.
OPERATION_CLASSES = {
    name: _node_class(name)
    for name in (*ops.__all__, *_IMAGE_OPS)
    if name in _IMAGE_OPS or getattr(ops, name).__name__ == name
}
_BY_CLASS_NAME = {cls.__name__: cls for cls in OPERATION_CLASSES.values()}


def keras_operation_class(module, class_name):
    """The node class of Keras's operation `module.class_name`, or None if minikeras has none.

    Args:
        module: the Keras module a file names (`"keras.src.ops.numpy"`).
        class_name: the class (`"Mean"`).

    Returns:
        A subclass of `OperationNode`, or None.

    Example:
        >>> mk.layers.operation_node.keras_operation_class("keras.src.ops.nn", "Relu").function_name
        'relu'
    """
    cls = _BY_CLASS_NAME.get(class_name)
    if cls is None or KERAS_OPERATION_SPECS.get(cls.function_name, (None,))[0] != module:
        return None
    return cls


def keras_class_names():
    """The class names of the Keras operations minikeras's op nodes read and write.

    Returns:
        A set of names (`"Mean"`, `"GetItem"`...).

    Example:
        >>> {"Mean", "GetItem", "Relu"} <= mk.layers.operation_node.keras_class_names()
        True
    """
    return {
        cls.__name__
        for cls in OPERATION_CLASSES.values()
        if cls.function_name in KERAS_OPERATION_SPECS
    }


def operation_class(registered_name):
    """The node class a saved `registered_name` (`"MinikerasOps>Mean"`) stands for, or None.

    Args:
        registered_name: a name from a file.

    Returns:
        A subclass of `OperationNode`, or None.

    Example:
        >>> mk.layers.operation_node.operation_class("MinikerasOps>Mean").function_name
        'mean'
    """
    package, _, class_name = str(registered_name).partition(">")
    return _BY_CLASS_NAME.get(class_name) if package == PACKAGE else None


bind_symbolic_call(symbolic_op_call)
