"""Which models a replay can stand for: `not_replayable` and the layers it accepts.

A call of a Sequential or functional model is recorded and replayed (by
`replayed_call` under a tape, by `trainers.compiled_step` in `fit`) only if
every layer's `call` is plain math on its inputs and weights: a layer of
`REPLAYABLE_LAYERS` (which holds the graph nodes of the ops of
`REPLAYABLE_OPERATIONS` on symbolic tensors), with an activation minikeras
defines, no method replaced on the instance, no loss added from Python,
computing in the model's dtype. `not_replayable` says why a model falls short, or None.
"""

from types import FunctionType

from minikeras import activations, config
from minikeras.layers import (
    ELU,
    GRU,
    LSTM,
    RNN,
    Activation,
    Add,
    Average,
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    BatchNormalization,
    Bidirectional,
    Concatenate,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    Cropping1D,
    Cropping2D,
    Cropping3D,
    Dense,
    DepthwiseConv1D,
    DepthwiseConv2D,
    Dropout,
    Embedding,
    Flatten,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    GroupNormalization,
    GRUCell,
    Identity,
    LayerNormalization,
    LeakyReLU,
    LSTMCell,
    Maximum,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    Minimum,
    Multiply,
    Permute,
    PReLU,
    ReLU,
    RepeatVector,
    Reshape,
    RMSNormalization,
    SeparableConv1D,
    SeparableConv2D,
    SimpleRNN,
    SimpleRNNCell,
    Softmax,
    StackedRNNCells,
    Subtract,
    TimeDistributed,
    UnitNormalization,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
    tracking,
)
from minikeras.layers.operation_node import OPERATION_CLASSES
from minikeras.tree import flatten

__all__ = [
    "REPLAYABLE_LAYERS",
    "REPLAYABLE_OPERATIONS",
    "casts_integer_inputs",
    "defined_in",
    "has_own_call",
    "not_replayable",
    "overridden_method",
]

# The ops on symbolic tensors (graph nodes of `layers.operation_node`) that are math on
# their arguments, with no Python reading their values. A recording of one still goes
# through `Program.build`'s checks, which refuse what a replay could not repeat (an
# array computed outside the recorded ops, an array index) and leave that step eager.
REPLAYABLE_OPERATIONS = frozenset({
    "abs", "add", "concatenate", "divide", "elu", "exp", "expand_dims", "gelu", "getitem",
    "leaky_relu", "log", "log_softmax", "matmul", "max", "maximum", "mean", "min", "minimum",
    "multiply", "negative", "power", "relu", "reshape", "sigmoid", "silu", "softmax",
    "softplus", "sqrt", "square", "squeeze", "stack", "subtract", "sum", "tanh", "transpose",
    "true_divide",
})  # fmt: skip

# Layers whose call is math on its inputs and weights (Dropout's mask is drawn inside
# its op, `ops.dropout_mask`, so a replay draws a fresh one from the same generator;
# an Embedding's ids are checked at every replay by its op's `replay_guard`; a
# BatchNormalization's moving statistics are assigned the value of an op, which a
# training step's replay assigns again, and which a replay under a user's tape refuses).
# A call that computes an array outside the ops (UpSampling2D's bilinear weights, a
# mask made from integer ids) is refused by `Program.build`, and runs eagerly. The
# recurrent layers (and their cells, sub-layers of theirs) are one fused op over the
# sequence, which makes their default zero states itself; `not_replayable` refuses a
# stateful one (whose kept states are Python's), and `Program.build` a mask, given
# initial states or a dropout mask drawn in Python (arrays from outside the ops). The
# wrappers (Bidirectional, TimeDistributed, RNN over a cell) pass tensors between their
# sub-layers with shapes and constant slices alone; each sub-layer must be admitted too
# (`tracked_layers` reaches them), so a user's cell or layer inside one is not. An RNN
# over StackedRNNCells runs its cells step by step, from zero states made by an op of
# the batch (`ops.recurrent.zero_states`), which a replay makes again for its own batch.
REPLAYABLE_LAYERS = frozenset({
    Activation, Add, Average, AveragePooling1D, AveragePooling2D, AveragePooling3D,
    BatchNormalization, Bidirectional, Concatenate, Conv1D, Conv1DTranspose, Conv2D,
    Conv2DTranspose, Conv3D, Conv3DTranspose, Cropping1D, Cropping2D, Cropping3D, Dense,
    DepthwiseConv1D, DepthwiseConv2D, Dropout, ELU, Embedding, Flatten, GlobalAveragePooling1D,
    GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalMaxPooling1D, GlobalMaxPooling2D,
    GlobalMaxPooling3D, GroupNormalization, GRU, GRUCell, Identity, LayerNormalization,
    LeakyReLU, LSTM, LSTMCell, Maximum, MaxPooling1D, MaxPooling2D, MaxPooling3D, Minimum,
    Multiply, Permute, PReLU, ReLU, RepeatVector, Reshape, RMSNormalization, RNN,
    SeparableConv1D, SeparableConv2D, SimpleRNN, SimpleRNNCell, Softmax, StackedRNNCells,
    Subtract, TimeDistributed, UnitNormalization, UpSampling1D, UpSampling2D, UpSampling3D,
    ZeroPadding1D, ZeroPadding2D, ZeroPadding3D,
}) | frozenset(OPERATION_CLASSES[name] for name in REPLAYABLE_OPERATIONS)  # fmt: skip


def not_replayable(model, layers=REPLAYABLE_LAYERS):
    """Why a call of `model` cannot be recorded and replayed, or None if it can.

    Args:
        model: a model.
        layers: the layer classes whose calls are replayable.

    Returns:
        A reason (a string), or None.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.models.replayability.not_replayable(model) is None
        True
        >>> mk.models.replayability.not_replayable(
        ...     mk.Sequential([mk.Input((4, 3)), mk.layers.Masking(name="m"), mk.layers.Dense(2)])
        ... )
        "layer 'm' (Masking) is not replayable"
        >>> mk.models.replayability.not_replayable(
        ...     mk.Sequential(
        ...         [mk.Input(batch_shape=(2, 3, 4)), mk.layers.LSTM(2, stateful=True, name="r")]
        ...     )
        ... )
        "layer 'r' is stateful (it keeps its states in Python)"
    """
    from minikeras.models.model import Model

    reason = _not_replayable_model(model)
    if reason is not None:
        return reason
    if model.compute_dtype != model.variable_dtype:
        return f"the model has the mixed-precision policy {model.dtype_policy.name!r}"
    overridden = overridden_method(model)
    if overridden is not None:
        return f"the model's {overridden!r} is replaced on the instance"
    for layer in tracking.tracked_layers(model):
        overridden = overridden_method(layer)
        if overridden is not None:
            return f"layer {layer.name!r} has its {overridden!r} replaced on the instance"
        if type(layer) not in layers:
            if not isinstance(layer, Model):
                return f"layer {layer.name!r} ({type(layer).__name__}) is not replayable"
            # A model used as a layer (a base under a new head): plain math if its own
            # layers are (this loop reaches them too) and it runs its graph.
            reason = _not_replayable_model(layer)
            if reason is not None:
                return f"layer {layer.name!r}: {reason}"
        for kind in ("activation", "recurrent_activation"):
            activation = getattr(layer, kind, None)
            if activation is not None and not defined_in(activation, activations):
                return f"layer {layer.name!r} has an {kind} minikeras does not define"
        if getattr(layer, "stateful", False):
            return f"layer {layer.name!r} is stateful (it keeps its states in Python)"
        if layer.activity_regularizer is not None or layer._callable_losses:
            return f"layer {layer.name!r} adds losses"
        if layer.dtype != model.dtype:
            return f"layer {layer.name!r} computes in {layer.dtype}, the model in {model.dtype}"
        if layer.compute_dtype != layer.variable_dtype:
            return (
                f"layer {layer.name!r} has the mixed-precision policy {layer.dtype_policy.name!r}"
            )
    return None


def defined_in(function, module):
    """Whether `function` is one of the functions `module` defines (not a wrapper of one,
    which `functools.wraps` gives the module's name).

    Args:
        function: any object.
        module: a module.

    Returns:
        A bool.

    Example:
        >>> import functools
        >>> relu = mk.activations.relu
        >>> wrapped = functools.wraps(relu)(lambda x: relu(x) * 2.0)
        >>> defined_in = mk.models.replayability.defined_in
        >>> defined_in(relu, mk.activations), defined_in(wrapped, mk.activations)
        (True, False)
    """
    name = getattr(function, "__name__", None)
    return isinstance(name, str) and vars(module).get(name) is function


def overridden_method(instance):
    """The name of a method of `instance`'s class that the instance replaces, or None.

    A method set on an instance (`layer.call = ...`) runs instead of the
    class's, which is all a replay knows of.

    Args:
        instance: any object with a `__dict__`.

    Returns:
        The attribute's name, or None.

    Example:
        >>> layer = mk.layers.Dense(2)
        >>> overridden_method = mk.models.replayability.overridden_method
        >>> overridden_method(layer) is None
        True
        >>> layer.call = lambda inputs: inputs
        >>> overridden_method(layer)
        'call'
    """
    cls = type(instance)
    for name, value in vars(instance).items():
        if callable(value) and isinstance(getattr(cls, name, None), FunctionType):
            return name
    return None


def _not_replayable_model(model):
    """Why `model` itself (not its layers) cannot be replayed, or None."""
    from minikeras.models.model import Model
    from minikeras.models.plain_calls import plain_call_reason
    from minikeras.models.sequential import Sequential

    cls, own = type(model), has_own_call(model)
    if not own and cls.call is Model.call and model._inputs is None:
        return "the model has neither a graph nor a call of its own"
    if own and (isinstance(model, Sequential) or model.__dict__.get("_inputs") is not None):
        # (its inputs are cast as its graph's Inputs say, which its call does not run)
        return "the model has a graph and a call of its own"
    base = Sequential if isinstance(model, Sequential) else Model
    if cls.compute_mask is not base.compute_mask:
        return "the model computes its own masks (compute_mask)"
    if own:  # a subclassed model: its call is the user's Python
        reason = plain_call_reason(model)
        if reason is not None:
            return reason
    if not model.built:  # (a Sequential without an Input, before its first call builds it)
        return "the model is not built yet"
    # (`Model(x, [y])`: a list of one; a subclassed model has no `_outputs`)
    if isinstance(model.__dict__.get("_outputs"), (list, tuple, dict)):
        return "the model's outputs are a list, tuple or dict, not one tensor"
    # A loss callable or a regularizer runs any Python: its numbers would be fixed.
    if model._callable_losses or model.activity_regularizer is not None:
        return "the model adds losses"
    return None


# Layers whose op casts integer inputs to the weights' dtype (`astype`) before any
# arithmetic, and layers that only reshape (exact on integers) on the way to one.
_CASTING_LAYERS = (Dense, Conv1D, Conv2D)
_RESHAPING_LAYERS = (Flatten, Reshape)


def casts_integer_inputs(model):
    """Whether each op that first reads `model`'s inputs casts integers to its dtype.

    So an eager call computes on `x.astype(model.dtype)`, which a replay
    casts before the first op instead of in it; a layer that reads integers
    as integers (an `Embedding`'s lookup, an `Add` that would wrap around)
    keeps them eager. Conv layers cast to floatx, which must then be the
    model's dtype.

    Args:
        model: a Sequential or functional model.

    Returns:
        A bool.

    Example:
        >>> model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(2)])
        >>> mk.models.replayability.casts_integer_inputs(model)
        True
        >>> inputs = mk.Input((4,))
        >>> added = mk.Model(inputs, mk.layers.Add()([inputs, inputs]))
        >>> mk.models.replayability.casts_integer_inputs(added)
        False
    """
    if config.floatx() != model.dtype:
        return False
    if has_own_call(model):
        return False  # a subclassed model: which layer reads its inputs first is its call's
    return _consumers_cast(model, None)


def has_own_call(model):
    """Whether `model`'s class has a `call` of its own: the user's, not a graph's.

    Args:
        model: a model.

    Returns:
        A bool: False for a `Sequential`'s or a functional model's call.

    Example:
        >>> class Own(mk.Model):
        ...     def call(self, inputs):
        ...         return inputs
        >>> has_own_call = mk.models.replayability.has_own_call
        >>> has_own_call(Own()), has_own_call(mk.Sequential([mk.layers.Dense(2)]))
        (True, False)
    """
    from minikeras.models.model import Model
    from minikeras.models.sequential import Sequential

    return type(model).call not in (Model.call, Sequential.call)


def _consumers_cast(model, tensor):
    """Whether every layer reading `tensor` (`model`'s input if None) casts it first."""
    inputs, nodes = getattr(model, "_inputs", None), getattr(model, "_nodes", None) or []
    if tensor is None:
        if inputs is None or not nodes:  # (a Sequential without an Input: its first layer)
            layers = getattr(model, "layers", None)
            return bool(layers) and _layer_casts(layers[0])
        placeholders = flatten(inputs)
        if len(placeholders) != 1:
            return False
        tensor = placeholders[0]
        dtype = getattr(tensor, "dtype", None)
        if dtype is not None and config.standardize_dtype(dtype)[:5] != "float":
            return False  # (an integer Input: what its layers take is theirs to say)
    if any(output is tensor for output in flatten(model._outputs)):
        return False
    readers = [node for node in nodes if any(t is tensor for t in node.input_tensors())]
    if not readers:
        return False
    for node in readers:
        layer = node.layer
        if isinstance(layer, _RESHAPING_LAYERS) and type(layer) in REPLAYABLE_LAYERS:
            if len(node.input_tensors()) != 1 or not all(
                _consumers_cast(model, output) for output in flatten(node.outputs)
            ):
                return False
        elif not _layer_casts(layer):
            return False
    return True


def _layer_casts(layer):
    """Whether `layer`, called on integers, casts them first (a model: its own readers)."""
    if type(layer) in _CASTING_LAYERS:
        return True
    if type(layer) in _RESHAPING_LAYERS:
        return False  # (without a graph, its readers are not known)
    return hasattr(layer, "_nodes") and hasattr(layer, "_outputs") and _consumers_cast(layer, None)
