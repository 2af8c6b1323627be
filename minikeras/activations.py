"""Activation functions with Keras's names and defaults, and lookup by name.

Each activation takes a Tensor (or array-like) and returns a Tensor. The math
and its gradient live in `minikeras.ops`; this module adds the names layers
accept (`Dense(4, activation="relu")`) and the `get` / `serialize` /
`deserialize` round trip that saving relies on.

The less common ones (`selu`, `hard_sigmoid`, `mish`, ...) live in
`minikeras.more_activations` and are named and registered here. Keras 3's
newest (`celu`, `glu`, `sparsemax`, the shrinks...) are the `minikeras.ops`
functions themselves: `mk.activations.celu is mk.ops.celu`.
"""

from minikeras import ops, serialization_lib
from minikeras.more_activations import (
    elu,
    exponential,
    hard_sigmoid,
    hard_silu,
    log_sigmoid,
    log_softmax,
    mish,
    relu6,
    selu,
    softsign,
)
from minikeras.ops import (
    celu,
    glu,
    hard_shrink,
    hard_tanh,
    soft_shrink,
    sparse_plus,
    sparse_sigmoid,
    sparsemax,
    squareplus,
    tanh_shrink,
    threshold,
)

__all__ = [
    "celu",
    "deserialize",
    "elu",
    "exponential",
    "gelu",
    "get",
    "glu",
    "hard_shrink",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "linear",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "relu",
    "relu6",
    "selu",
    "serialize",
    "sigmoid",
    "silu",
    "soft_shrink",
    "softmax",
    "softplus",
    "softsign",
    "sparse_plus",
    "sparse_sigmoid",
    "sparsemax",
    "squareplus",
    "swish",
    "tanh",
    "tanh_shrink",
    "threshold",
]


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit, with Keras's optional slope, cap and threshold.

        f(x) = min(x, max_value)                  if x > threshold
        f(x) = negative_slope * (x - threshold)   otherwise

    With the defaults it is `max(x, 0)`. As in Keras, a capped output is floored
    at 0 before the slope is added, and nothing is range-checked (`ReLU` checks).

    Args:
        x: Tensor or array-like.
        negative_slope: the slope below `threshold`.
        max_value: None (no cap) or the largest value returned.
        threshold: inputs at or below it are damped (or zeroed).

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.relu([-1.0, 0.0, 2.0]).numpy()
        array([0., 0., 2.], dtype=float32)
        >>> mk.activations.relu([-10.0, 0.0, 5.0, 10.0], negative_slope=0.5, max_value=6.0).numpy()
        array([-5.,  0.,  5.,  6.], dtype=float32)
    """
    if negative_slope == 0 and max_value is None and threshold == 0:
        return ops.relu(x)
    if max_value is None and threshold == 0:
        return ops.leaky_relu(x, negative_slope=negative_slope)
    x = ops.convert_to_tensor(x)
    outputs = ops.relu(x) if threshold == 0 else ops.where(ops.greater(x, threshold), x, 0.0)
    if max_value is not None:  # (below 0, every output is the cap: Keras's clip, numpy's too)
        outputs = (
            ops.clip(outputs, 0.0, max_value) if max_value >= 0 else ops.full_like(x, max_value)
        )
    if negative_slope != 0:
        outputs = outputs - ops.relu(ops.subtract(threshold, x)) * negative_slope
    return outputs


def sigmoid(x):
    """Logistic sigmoid: `sigmoid(x) = 1 / (1 + exp(-x))`, without overflow.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape, with values in [0, 1].

    Example:
        >>> mk.activations.sigmoid([0.0, 1000.0]).numpy()
        array([0.5, 1. ], dtype=float32)
    """
    return ops.sigmoid(x)


def tanh(x):
    """Hyperbolic tangent: `tanh(x) = (exp(x) - exp(-x)) / (exp(x) + exp(-x))`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape, with values in [-1, 1].

    Example:
        >>> mk.activations.tanh([0.0]).numpy()
        array([0.], dtype=float32)
    """
    return ops.tanh(x)


def softmax(x, axis=-1):
    """Softmax along `axis`: `exp(x) / sum(exp(x), axis)`, computed without overflow.

    Args:
        x: Tensor or array-like.
        axis: the axis whose entries become probabilities summing to one.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.softmax([[0.0, 0.0], [0.0, 1000.0]]).numpy()
        array([[0.5, 0.5],
               [0. , 1. ]], dtype=float32)
    """
    return ops.softmax(x, axis=axis)


def gelu(x, approximate=False):
    """Gaussian error linear unit: `gelu(x) = x * P(X <= x)` for a standard normal X.

    Exact: `0.5 * x * (1 + erf(x / sqrt(2)))`. Approximate:
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`.

    Args:
        x: Tensor or array-like.
        approximate: use the tanh approximation; Keras's activation default
            is the exact (erf) form.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.gelu([-1.0, 0.0, 1.0]).numpy(), 4)
        array([-0.1587,  0.    ,  0.8413], dtype=float32)
    """
    return ops.gelu(x, approximate=approximate)


def leaky_relu(x, negative_slope=0.2):
    """Leaky rectified linear unit: `x` if `x > 0`, else `negative_slope * x`.

    Args:
        x: Tensor or array-like.
        negative_slope: the slope below zero (Keras's default is 0.2).

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.leaky_relu([-1.0, 2.0]).numpy()
        array([-0.2,  2. ], dtype=float32)
    """
    return ops.leaky_relu(x, negative_slope=negative_slope)


def swish(x):
    """Swish, also called SiLU: `swish(x) = x * sigmoid(x)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.silu([-1.0, 0.0, 1.0]).numpy(), 4)
        array([-0.2689,  0.    ,  0.7311], dtype=float32)
    """
    return ops.silu(x)


silu = swish
hard_swish = hard_silu


def linear(x):
    """The identity: `linear(x) = x`, what `activation=None` means.

    Args:
        x: Tensor or array-like.

    Returns:
        `x` as a Tensor (a Tensor is returned as it is).

    Example:
        >>> mk.activations.linear([-1.0, 2.0]).numpy()
        array([-1.,  2.], dtype=float32)
    """
    return ops.convert_to_tensor(x)


def softplus(x):
    """Softplus: `softplus(x) = log(1 + exp(x))`, without overflow.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape, with positive values.

    Example:
        >>> np.round(mk.activations.softplus([-1000.0, 0.0, 2.0]).numpy(), 4)
        array([0.    , 0.6931, 2.1269], dtype=float32)
    """
    return ops.softplus(x)


# Keras 3's newest activations: the ops themselves (one implementation, one docstring).
_KERAS_3_NEWEST = (
    celu, glu, hard_shrink, hard_tanh, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax,
    squareplus, tanh_shrink, threshold,
)  # fmt: skip

# Name -> function; the first name of a function is the one `serialize` gives.
_ACTIVATIONS = {
    "relu": relu,
    "sigmoid": sigmoid,
    "tanh": tanh,
    "softmax": softmax,
    "gelu": gelu,
    "elu": elu,
    "leaky_relu": leaky_relu,
    "swish": swish,
    "silu": swish,
    "linear": linear,
    "softplus": softplus,
    "relu6": relu6,
    "hard_sigmoid": hard_sigmoid,
    "hard_silu": hard_silu,
    "hard_swish": hard_silu,
    "selu": selu,
    "softsign": softsign,
    "mish": mish,
    "log_sigmoid": log_sigmoid,
    "log_softmax": log_softmax,
    "exponential": exponential,
    **{function.__name__: function for function in _KERAS_3_NEWEST},
}


def get(identifier):
    """Returns the activation function `identifier` stands for.

    Args:
        identifier: None (meaning `linear`), a name such as `"relu"` (or a
            registered `"package>name"`), an entry `serialize` wrote, or a
            callable, which is returned as it is.

    Returns:
        A callable taking and returning a Tensor.

    Raises:
        ValueError: for an unknown name or anything that is not a callable.

    Example:
        >>> mk.activations.get("relu") is mk.activations.relu
        True
        >>> mk.activations.get(None) is mk.activations.linear
        True
    """
    if identifier is None:
        return linear
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(
        "activations.get: expected None, an activation name or a callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )


def serialize(activation):
    """What a config holds for `activation`: a built-in's name, or a function entry.

    As in Keras: a built-in activation is its name; a function of the user's an
    entry naming it (by its registered name, see
    `minikeras.saving.register_keras_serializable`, else by its own), which
    `deserialize` finds in the registry or in `custom_objects`.

    Args:
        activation: an activation function.

    Returns:
        The name (a string), or a dict.

    Raises:
        ValueError: for a lambda or other callable without a name, or a custom
            function that has the name of a built-in activation.

    Example:
        >>> mk.activations.serialize(mk.activations.relu)
        'relu'
        >>> mk.activations.serialize(mk.activations.silu)
        'swish'
    """
    for name, function in _ACTIVATIONS.items():
        if function is activation:
            return name
    name = getattr(activation, "__name__", None)
    if not callable(activation) or name is None or name == "<lambda>":
        raise ValueError(
            f"activations.serialize: cannot name {activation!r}; "
            "use a built-in activation or a def-function with a name"
        )
    if name in _ACTIVATIONS and not serialization_lib.is_registered(activation):
        raise ValueError(
            f"activations.serialize: custom function {name!r} has the name of a built-in "
            "activation and would come back as the built-in; rename it"
        )
    # A function of the user's: Keras's function entry (by its registered name, else its
    # own), which loading finds in the registry or in custom_objects.
    return serialization_lib.serialize_keras_object(activation)


def deserialize(config, custom_objects=None):
    """Returns the activation function a name or an entry stands for.

    Args:
        config: an activation name (or a registered `"package>name"`), or an
            entry that `serialize` wrote.
        custom_objects: optional dict of name -> function, for a name that is
            not a built-in's (a built-in activation's name is always the built-in,
            as in Keras).

    Returns:
        A callable taking and returning a Tensor.

    Raises:
        ValueError: if no activation has that name.

    Example:
        >>> mk.activations.deserialize("silu") is mk.activations.swish
        True
    """
    if isinstance(config, str):  # a built-in's name is the built-in, as in Keras; another
        found = _ACTIVATIONS.get(config)  # (a custom function older files name) is looked up
        found = found or serialization_lib.get_registered_object(config, custom_objects)
        if found is None:
            known = ", ".join(sorted(_ACTIVATIONS))
            raise ValueError(
                f"Unknown activation {config!r}; known activations: {known}"
                + serialization_lib.unknown_custom_hint(config)
            )
        return found
    return serialization_lib.deserialize_keras_object(
        config, custom_objects=custom_objects, module_objects=_ACTIVATIONS
    )
