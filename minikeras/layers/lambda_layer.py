"""`Lambda`: a function as a layer, for stateless glue in Sequential and functional models."""

import inspect
import sys

import numpy as np

from minikeras.builtin_functions import builtin_function
from minikeras.layers.layer import Layer
from minikeras.tree import map_structure

__all__ = ["Lambda"]


def _accepts(function, argument):
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return argument in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _serialize_function(function):
    """A module-level function as `{"module", "function_name"}`; anything else as itself."""
    name = getattr(function, "__qualname__", "")
    module = getattr(function, "__module__", None)
    if module and name and "<" not in name:
        return {"module": module, "function_name": name}
    # A lambda or a closure has no name to import it by; the config keeps the object.
    return function


def _deserialize_function(layer_class, value):
    if callable(value) or value is None or not isinstance(value, dict):
        return value
    # minikeras's own functions are found by their public name, as in a file (a config
    # naming `minikeras.ops.nn.erf`, where it was before `ops.nn` became Keras's, too).
    found = builtin_function(value.get("module"), value.get("function_name"))
    if found is not None:
        return found
    # Looked up among the modules already imported, never imported: a config is data,
    # and importing a module it names would run that module's code.
    try:
        found = sys.modules[value["module"]]
        for part in value["function_name"].split("."):
            found = getattr(found, part)
    except (KeyError, AttributeError) as error:
        raise ValueError(
            f"{layer_class}: cannot find the function {value!r} among the imported modules "
            f"({type(error).__name__}: {error}); import its module first"
        ) from None
    return found


class Lambda(Layer):
    """Wraps a function of tensors as a layer: `outputs = function(inputs, **arguments)`.

    For stateless glue (`ops.split`, a scaling, a slice) inside a `Sequential`
    or functional model. The function is written in `minikeras.ops`; if it
    accepts `training` or `mask` arguments, it gets them.

    A Lambda cannot hold weights. Weights are found by walking the attributes
    of layers; a Variable that the function reads from a closure or a global
    is in no attribute of any layer, so the model cannot find it: it will not
    be trained or saved. Such a read is reported with a `TrackingWarning`
    naming the Variable. For weights, subclass `Layer` and create them with
    `add_weight` in `build`.

    Args:
        function: a callable taking the inputs (a tensor or a list of them).
        output_shape: the output shape, without the batch axis (a tuple), or a
            function of the full input shape; by default it is found by a call
            on zeros.
        mask: a mask for the outputs, or a function `mask(inputs, mask)`;
            returned by `compute_mask`.
        arguments: a dict of keyword arguments for `function`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Whatever `function` takes: a tensor or a list of them.

    Output shape:
        What `function` returns; `output_shape` gives it without a call.

    Returns:
        When called: whatever `function` returns.

    Raises:
        ValueError: if `function` is not callable or `arguments` not a dict.

    Example:
        >>> double = mk.layers.Lambda(lambda x, factor: x * factor, arguments={"factor": 2.0})
        >>> double(np.array([[1.0, 2.0]])).numpy()
        array([[2., 4.]], dtype=float32)
        >>> double.compute_output_shape((None, 2))
        (None, 2)
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        function = _deserialize_function("Lambda", function)
        if not callable(function):
            raise ValueError(f"Lambda: `function` must be callable, got {function!r}")
        if arguments is not None and not isinstance(arguments, dict):
            raise ValueError(f"Lambda: `arguments` must be a dict or None, got {arguments!r}")
        self.function = function
        self.output_shape = _deserialize_function("Lambda", output_shape)
        if self.output_shape is not None and not callable(self.output_shape):
            self.output_shape = tuple(self.output_shape)
        self.mask = _deserialize_function("Lambda", mask)
        self.arguments = dict(arguments or {})

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if _accepts(self.function, "training"):
            kwargs["training"] = training
        if _accepts(self.function, "mask"):
            kwargs["mask"] = mask
        return self.function(inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        if self.output_shape is None:
            return self._dry_run_shape(input_shape)
        if callable(self.output_shape):
            return self.output_shape(input_shape)
        if isinstance(input_shape, list):
            return (input_shape[0][0], *self.output_shape)
        return (input_shape[0], *self.output_shape)

    def _dry_run_shape(self, input_shape):
        def zeros(shape):
            return np.zeros(tuple(1 if s is None else s for s in shape), dtype=self.dtype)

        several = isinstance(input_shape, list)
        batch_unknown = (input_shape[0] if several else input_shape)[0] is None
        outputs = self([zeros(s) for s in input_shape] if several else zeros(input_shape))
        shapes = map_structure(lambda t: tuple(t.shape), outputs)

        def unknown_batch(shape):
            return (None, *shape[1:]) if batch_unknown and shape else shape

        if isinstance(shapes, tuple) and all(isinstance(s, int) for s in shapes):
            return unknown_batch(shapes)
        return [unknown_batch(s) for s in shapes]

    def compute_mask(self, inputs, mask=None):
        """The output mask: `mask(inputs, mask)` if the layer's `mask` is a function.

        Args:
            inputs: the layer's inputs.
            mask: the inputs' mask, or None.

        Returns:
            The output mask (None if the layer has none).

        Example:
            >>> mk.layers.Lambda(lambda x: x).compute_mask(np.ones((1, 2))) is None
            True
        """
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def get_config(self):
        """The arguments that rebuild this layer.

        A module-level function is stored by name (`{"module", "function_name"}`),
        so the config is JSON-friendly; a lambda or closure has no name to be
        found by, so the config holds the function object itself: it round-trips
        in memory, but not through JSON.

        Returns:
            A dict.

        Example:
            >>> config = mk.layers.Lambda(np.negative).get_config()
            >>> config["function"]
            {'module': 'numpy', 'function_name': 'negative'}
            >>> mk.layers.Lambda.from_config(config).function is np.negative
            True
        """
        output_shape = self.output_shape
        if callable(output_shape):
            output_shape = _serialize_function(output_shape)
        mask = _serialize_function(self.mask) if callable(self.mask) else self.mask
        return {
            **super().get_config(),
            "function": _serialize_function(self.function),
            "output_shape": output_shape,
            "mask": mask,
            "arguments": dict(self.arguments),
        }
