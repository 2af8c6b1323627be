"""`OperationNode`: the layer a graph node of an op runs (Keras's `Operation`).

Its call runs the op of its class (`function_name`) on data, putting back in
their places the arguments Keras keeps in the operation's config; given
symbolic tensors, it records a node. `layers.operation_node` makes a subclass
per op, named as Keras names the op's class, and records them.
"""

import functools
import inspect

from minikeras import ops
from minikeras.layers import call_helpers
from minikeras.layers.input_layer import Node, SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.operation_shape_rules import keras_shapes
from minikeras.layers.operation_shapes import output_specs, trace
from minikeras.layers.operation_specs import KERAS_OPERATION_SPECS, arguments_of
from minikeras.tree import map_structure

__all__ = ["OperationNode"]


class OperationNode(Layer):
    """A call of a `minikeras.ops` function on symbolic tensors, as a node of the graph.

    Made by the op itself: `mk.ops.mean(x, axis=-1)` or `x + 1` on symbolic
    tensors makes one of the subclasses in `OPERATION_CLASSES` (named as
    Keras names it: `mean`, `add_1`). Its call runs the op on what it is
    given; the graph's node keeps the call's arguments.

    The op's arguments that Keras keeps in its operation's config (an
    `axis`, `keepdims`, a `dtype`: see `operation_specs`) are the node's
    config, under Keras's keys; the others (tensors, a constant, a slice)
    are the graph node's.

    Args:
        name: the node's name; by default the snake_case class name, made unique.
        **options: the config arguments, under Keras's keys.

    Raises:
        TypeError: for an option the op's Keras class does not take.

    Example:
        >>> x = mk.Input((3,))
        >>> model = mk.Model(x, mk.ops.mean(x * 2.0, axis=-1))
        >>> [type(op).__name__ for op in model.operations]
        ['InputLayer', 'Multiply', 'Mean']
        >>> [type(layer).__name__ for layer in model.layers]
        ['InputLayer']
        >>> model(np.array([[1.0, 2.0, 3.0]])).numpy()
        array([4.], dtype=float32)
    """

    function_name = None  # set by each subclass: the op it runs
    _keras_operation = True  # listed as an operation, not a layer (see Model.layers)

    def __init__(self, name=None, **options):
        super().__init__(name=name)
        if self.function_name in KERAS_OPERATION_SPECS:
            self._arguments = arguments_of(self.function_name, options)
        elif options:
            raise TypeError(
                f"{type(self).__name__} (ops.{self.function_name}) takes no options, "
                f"got {sorted(options)}"
            )
        else:
            self._arguments = {}
        self.options = dict(options)
        self.built = True

    def __call__(self, *args, **kwargs):
        # Not Layer.__call__: an op converts and casts nothing, and carries no mask; a
        # model's `training` and `mask` go only to an op that takes them (ops.lstm's mask).
        for name in ("training", "mask"):
            if name in kwargs and name not in _parameters(self.function_name):
                del kwargs[name]
        if "mask" in kwargs and _position(self.function_name, "mask") < len(args):
            del kwargs["mask"]  # (an argument the node holds: dot_product_attention's mask)
        if call_helpers.symbolic_among(args, kwargs):
            return _record(self, args, kwargs)
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        """Runs the op on data.

        Args:
            *args: the op's positional arguments.
            **kwargs: its keyword arguments.

        Returns:
            What the op returns.
        """
        if self.function_name == "getitem" and isinstance(args[1], list):
            args = (args[0], tuple(args[1]), *args[2:])  # (a key read from a file, as Keras)
        function = _op(self.function_name).__wrapped__
        arguments = self._arguments
        leading = _leading_options(function, tuple(arguments)) if arguments else ()
        if leading:  # options before a *args (einsum's subscripts) go back in their place
            arguments = {k: v for k, v in arguments.items() if k not in leading}
            args = (*(self._arguments[name] for name in leading), *args)
        elif arguments:
            args, kwargs = _past_options(function, tuple(arguments), args, kwargs)
        return function(*args, **arguments, **kwargs)

    def compute_output_spec(self, *args, **kwargs):
        """The op's symbolic outputs for these arguments, traced on placeholder data.

        Args:
            *args: the op's positional arguments (some symbolic).
            **kwargs: its keyword arguments.

        Returns:
            A `SymbolicTensor` or a structure of them.
        """
        specs = trace(self.call, args, kwargs)
        return keras_shapes(self.function_name, specs, args, self._arguments)

    def compute_mask(self, inputs, mask=None):
        """None: an op's output carries no mask, as in Keras.

        Args:
            inputs: unused.
            mask: unused.

        Returns:
            None.
        """
        return None

    def get_config(self):
        """The node's config: its name and options (the other arguments are the graph's).

        Returns:
            A dict.
        """
        return {"name": self.name, **self.options}


# The ops of `ops.image` (Keras's namespace, whose functions are not at the top of `ops`).
_IMAGE_OPS = ops.image.KERAS_OPS


def _op(function_name):
    """The public op `function_name` (symbolic-aware): in `ops`, or in `ops.image`."""
    return getattr(ops.image if function_name in _IMAGE_OPS else ops, function_name)


@functools.cache
def _position(function_name, name):
    """Where parameter `name` of `minikeras.ops.<function_name>` is, counting positional ones."""
    names = list(inspect.signature(_op(function_name)).parameters)
    return names.index(name) if name in names else len(names)


@functools.cache
def _parameters(function_name):
    """The names of the parameters of `minikeras.ops.<function_name>`."""
    return frozenset(inspect.signature(_op(function_name)).parameters)


def _past_options(function, options, args, kwargs):
    """Positional arguments that come after an option in `function`'s signature, by name.

    Keras's node of `batch_normalization(x, mean, variance, axis, offset, ...)`
    holds `(x, mean, variance, offset, scale)`: its class took `axis`, so the
    call's fourth argument is `offset`.
    """
    names = _call_parameters(function, options)
    if len(args) <= names[0]:
        return args, kwargs
    return args[: names[0]], {**dict(zip(names[1][names[0] :], args[names[0] :])), **kwargs}


@functools.cache
def _call_parameters(function, options):
    """Where `function`'s first option is, and its positional parameters that are not options."""
    positional = [
        parameter.name
        for parameter in inspect.signature(function).parameters.values()
        if parameter.kind is parameter.POSITIONAL_OR_KEYWORD
    ]
    first = next((i for i, name in enumerate(positional) if name in options), len(positional))
    return first, tuple(name for name in positional if name not in options)


@functools.cache
def _leading_options(function, options):
    """The options that come before a `*args` in `function`'s signature, in order."""
    leading = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            return tuple(leading)
        if parameter.name in options:
            leading.append(parameter.name)
    return ()


def _record(layer, args, kwargs):
    specs = output_specs(layer.call, layer.function_name, args, kwargs, layer._arguments)
    specs = keras_shapes(layer.function_name, specs, args, layer._arguments)
    node = Node(layer, args[0], tuple(args[1:]), kwargs)
    node.outputs = map_structure(
        lambda spec: SymbolicTensor(spec.shape, spec.dtype, node=node), specs
    )
    layer._inbound_nodes.append(node)
    object.__setattr__(layer, "_output_shape", map_structure(lambda t: t.shape, node.outputs))
    return node.outputs
