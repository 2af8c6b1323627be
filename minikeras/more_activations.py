"""The rest of Keras's activations: saturating, self-normalising and smooth ones.

`minikeras.activations` names and registers them beside the common ones
(`Dense(4, activation="selu")`, `LSTM(4, recurrent_activation="hard_sigmoid")`),
and they are reached as `mk.activations.selu` and so on. Each calls the
`minikeras.ops` function of its name (`mish` and `exponential` are built from
ops), which holds the math and its gradient, with Keras 3's definitions and
defaults (Keras 3's `hard_sigmoid` is `relu6(x + 3) / 6`, not Keras 2's
`0.2 x + 0.5`).
"""

from minikeras import ops

__all__ = [
    "elu",
    "exponential",
    "hard_sigmoid",
    "hard_silu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "relu6",
    "selu",
    "softsign",
]


def relu6(x):
    """Rectified linear unit capped at 6: `relu6(x) = min(max(x, 0), 6)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.relu6([-1.0, 3.0, 8.0]).numpy()
        array([0., 3., 6.], dtype=float32)
    """
    return ops.relu6(x)


def hard_sigmoid(x):
    """Piecewise-linear sigmoid: `0` below -3, `1` above 3, `x / 6 + 0.5` between.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.hard_sigmoid([-4.0, 0.0, 1.5, 4.0]).numpy()
        array([0.  , 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return ops.hard_sigmoid(x)


def hard_silu(x):
    """Hard SiLU, also called hard swish: `x * hard_sigmoid(x)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.hard_silu([-4.0, 0.0, 1.5, 4.0]).numpy()
        array([-0.   ,  0.   ,  1.125,  4.   ], dtype=float32)
    """
    return ops.hard_silu(x)


def selu(x):
    """Scaled exponential linear unit: `scale * elu(x, alpha)`, Keras's constants.

    With `alpha ~ 1.6733` and `scale ~ 1.0507`, activations keep a mean of 0
    and a variance of 1 through layers initialised with `lecun_normal`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.selu([-1.0, 0.0, 1.0]).numpy(), 4)
        array([-1.1113,  0.    ,  1.0507], dtype=float32)
    """
    return ops.selu(x)


def softsign(x):
    """`softsign(x) = x / (|x| + 1)`, a sigmoid-shaped curve in (-1, 1).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> mk.activations.softsign([-3.0, 0.0, 1.0]).numpy()
        array([-0.75,  0.  ,  0.5 ], dtype=float32)
    """
    return ops.softsign(x)


def mish(x):
    """Mish (Misra, 2019): `x * tanh(softplus(x))`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.mish([-1.0, 0.0, 1.0]).numpy(), 4)
        array([-0.3034,  0.    ,  0.8651], dtype=float32)
    """
    return ops.multiply(x, ops.tanh(ops.softplus(x)))


def log_sigmoid(x):
    """The logarithm of the sigmoid, `-softplus(-x)`, stable for any magnitude.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.log_sigmoid([-50.0, 0.0, 50.0]).numpy(), 4)
        array([-50.    ,  -0.6931,  -0.    ], dtype=float32)
    """
    return ops.log_sigmoid(x)


def exponential(x):
    """`exponential(x) = exp(x)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.exponential([0.0, 1.0]).numpy(), 4)
        array([1.    , 2.7183], dtype=float32)
    """
    return ops.exp(x)


def log_softmax(x, axis=-1):
    """The logarithm of the softmax along `axis`: `x - logsumexp(x, axis)`, stable.

    Args:
        x: Tensor or array-like.
        axis: the axis the probabilities sum to one along.

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(np.exp(mk.activations.log_softmax([[0.0, 0.0]]).numpy()), 4)
        array([[0.5, 0.5]], dtype=float32)
    """
    return ops.log_softmax(x, axis=axis)


def elu(x, alpha=1.0):
    """Exponential linear unit: `x` if `x > 0`, else `alpha * (exp(x) - 1)`.

    Args:
        x: Tensor or array-like.
        alpha: the scale of the negative part (its limit is `-alpha`).

    Returns:
        A Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.activations.elu([-1.0, 2.0]).numpy(), 4)
        array([-0.6321,  2.    ], dtype=float32)
    """
    return ops.elu(x, alpha=alpha)
