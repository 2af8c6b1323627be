"""Neural-network functions: activations, softmax, cross-entropies, fused dense.

The hot ones are autograd primitives with hand-written VJPs, each right below
its forward function: one pass over memory forward, one backward, float32
throughout, instead of autograd's generic chain of small ops.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras import config
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive, record_fused
from minikeras.engine.tape import may_overwrite
from minikeras.ops.core import (
    as_float,
    normalize_axis,
    op_error,
    promote,
    shape_of,
    value_of,
    wrap,
)
from minikeras.ops.math import _tanh, _where

__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "dense",
    "elu",
    "erf",
    "gelu",
    "leaky_relu",
    "log_softmax",
    "mean_sparse_categorical_crossentropy",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "sparse_categorical_crossentropy",
]

# ---------------------------------------------------------------- activations


@primitive
def _relu(x):
    return np.maximum(x, 0)


defvjp(_relu, lambda ans, x: lambda g: g * (ans > 0))


def relu(x):
    """Rectified linear unit, `max(x, 0)`, element-wise.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> relu([-1.0, 2.0]).numpy()
        array([0., 2.], dtype=float32)
    """
    return wrap(_relu(as_float(value_of(x))))


@primitive
def _sigmoid(x):
    # tanh form: no overflow for large |x|, and no float64 temporaries.
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


defvjp(_sigmoid, lambda ans, x: lambda g: g * ans * (1.0 - ans))


def sigmoid(x):
    """Logistic sigmoid, `1 / (1 + exp(-x))`, element-wise and overflow-free.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> sigmoid([0.0, 1000.0, -1000.0]).numpy()
        array([0.5, 1. , 0. ], dtype=float32)
    """
    return wrap(_sigmoid(as_float(value_of(x))))


def softplus(x):
    """`log(1 + exp(x))`, element-wise and overflow-free.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> softplus([0.0]).numpy()
        array([0.6931472], dtype=float32)
    """
    return wrap(_softplus(as_float(value_of(x))))


@primitive
def _softplus(x):
    # max(x, 0) + log(1 + exp(-|x|)): exp never overflows.
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


defvjp(_softplus, lambda ans, x: lambda g: g * _sigmoid(x))


@primitive
def _leaky_relu(x, negative_slope):
    return np.where(x > 0, x, x * negative_slope)


defvjp(_leaky_relu, lambda ans, x, s: lambda g: _where(x > 0, g, g * s))


def leaky_relu(x, negative_slope=0.2):
    """`x` for positive inputs, `negative_slope * x` otherwise.

    Args:
        x: Tensor or array-like.
        negative_slope: the slope below zero (Keras's default is 0.2).

    Returns:
        A Tensor.

    Example:
        >>> leaky_relu([-1.0, 2.0]).numpy()
        array([-0.2,  2. ], dtype=float32)
    """
    return wrap(_leaky_relu(as_float(value_of(x)), float(negative_slope)))


def elu(x, alpha=1.0):
    """Exponential linear unit: `x` if positive, else `alpha * (exp(x) - 1)`.

    Args:
        x: Tensor or array-like.
        alpha: the scale of the negative part.

    Returns:
        A Tensor.

    Example:
        >>> elu([0.0, 1.0]).numpy()
        array([0., 1.], dtype=float32)
    """
    return wrap(_elu(as_float(value_of(x)), float(alpha)))


@primitive
def _elu(x, alpha):
    # expm1 of min(x, 0): accurate near zero, and no overflow for large x.
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


# Below zero the derivative alpha * exp(x) is ans + alpha.
defvjp(_elu, lambda ans, x, alpha: lambda g: _where(x > 0, g, g * (ans + alpha)))


def silu(x):
    """Sigmoid-weighted linear unit (swish): `x * sigmoid(x)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> silu([0.0]).numpy()
        array([0.], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(value * _sigmoid(value))


# Cephes's rational approximations (S. L. Moshier, public domain), as in scipy:
# erf(x) = x T(x^2) / U(x^2) for |x| < 1, and 1 - exp(-x^2) P(|x|) / Q(|x|) above.
_ERF_T = (
    9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
    7.00332514112805075473e3, 5.55923013010394962768e4,
)  # fmt: skip
_ERF_U = (
    1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
    2.26290000613890934246e4, 4.92673942608635921086e4,
)  # fmt: skip
_ERFC_P = (
    2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
    4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
    9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2,
)  # fmt: skip
_ERFC_Q = (
    1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
    9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
    1.65666309194161350182e3, 5.57535340817727675546e2,
)  # fmt: skip
_TWO_OVER_SQRT_PI = 1.1283791670955126  # a Python float: weak in numpy 2 promotion


def _polynomial(z, coefficients):
    """Horner's rule, highest power first; stays in `z`'s dtype."""
    result = coefficients[0] * z + coefficients[1]
    for coefficient in coefficients[2:]:
        result *= z
        result += coefficient
    return result


@primitive
def _erf(x):
    # Past 6, erf is 1 to double precision; clamping keeps P and Q finite.
    z = np.minimum(np.abs(x), 6.0)
    z2 = z * z
    near_zero = z * _polynomial(z2, _ERF_T) / _polynomial(z2, _ERF_U)
    far = 1.0 - np.exp(-z2) * _polynomial(z, _ERFC_P) / _polynomial(z, _ERFC_Q)
    return np.sign(x) * np.where(z < 1.0, near_zero, far)


defvjp(_erf, lambda ans, x: lambda g: g * _TWO_OVER_SQRT_PI * anp.exp(-x * x))


def erf(x):
    """The error function, element-wise, accurate to float64 precision.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> erf([0.0, 10.0]).numpy()
        array([0., 1.], dtype=float32)
    """
    return wrap(_erf(as_float(value_of(x))))


def gelu(x, approximate=True):
    """Gaussian error linear unit, `x * P(X <= x)` for a standard normal X.

    Args:
        x: Tensor or array-like.
        approximate: use the tanh approximation (Keras's default), else erf.

    Returns:
        A Tensor.

    Example:
        >>> gelu([0.0]).numpy()
        array([0.], dtype=float32)
    """
    value = as_float(value_of(x))
    if approximate:
        inner = 0.7978845608028654 * (value + 0.044715 * value * value * value)
        return wrap(0.5 * value * (1.0 + _tanh(inner)))
    return wrap(0.5 * value * (1.0 + _erf(value * 0.7071067811865476)))


# ------------------------------------------------------------------- softmax


@primitive
def _softmax(x, axis):
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    shifted /= np.sum(shifted, axis=axis, keepdims=True)
    return shifted


defvjp(
    _softmax,
    lambda ans, x, axis: lambda g: ans * (g - anp.sum(g * ans, axis=axis, keepdims=True)),
)


@primitive
def _log_softmax(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


defvjp(
    _log_softmax,
    lambda ans, x, axis: lambda g: g - anp.exp(ans) * anp.sum(g, axis=axis, keepdims=True),
)


def softmax(x, axis=-1):
    """Softmax along `axis`: `exp(x) / sum(exp(x))`, without overflow.

    Args:
        x: Tensor or array-like.
        axis: the axis that sums to one.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> softmax([0.0, 0.0]).numpy()
        array([0.5, 0.5], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(_softmax(value, normalize_axis("softmax", axis, np.ndim(value), value)))


def log_softmax(x, axis=-1):
    """Logarithm of the softmax along `axis`, computed stably.

    Args:
        x: Tensor or array-like.
        axis: the normalized axis.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> log_softmax([0.0, 0.0]).numpy()
        array([-0.6931472, -0.6931472], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(_log_softmax(value, normalize_axis("log_softmax", axis, np.ndim(value), value)))


# -------------------------------------------------------------- cross-entropy


def _label_index(labels):
    """Indexes the labelled class of each sample of a `(..., classes)` array."""
    if labels.ndim == 1:
        return np.arange(labels.shape[0]), labels
    return (*np.indices(labels.shape, sparse=True), labels)


def _max_last_axis(x):
    """`x.max(axis=-1, keepdims=True)`, fast for a few classes as for many.

    numpy reduces a short contiguous axis row by row: 8 µs for (128, 10),
    against 2 µs for the same maxima taken over the long axis of a
    transposed copy. Past ~32 classes the copy costs more than it saves.
    """
    classes = x.shape[-1]
    if classes > 32 or x.ndim != 2:
        return x.max(axis=-1, keepdims=True)
    return x.T.copy().max(axis=0)[:, None]


@fused_primitive
def _sparse_xent_logits(logits, labels):
    """The losses, and for the gradient the softmax and the labels' index."""
    shifted = logits - _max_last_axis(logits)
    index = _label_index(labels)
    picked = shifted[index]  # a copy: `shifted` may change now
    exps = np.exp(shifted, out=shifted)
    sums = exps.sum(axis=-1, keepdims=True)
    loss = np.log(sums[..., 0])
    loss -= picked
    exps /= sums
    return loss, (exps, index)


def _sparse_xent_logits_vjp(argnums, ans, args, residuals):
    logits, labels = args

    def vjp(g):
        if residuals is None or isbox(g):
            # An outer tape records this gradient: build it from traced ops.
            probs = _softmax(logits, -1)
            return [anp.expand_dims(g, -1) * (probs - _one_hot_like(labels, logits))]
        # Plain numpy otherwise, where the traced version costs a dozen autograd
        # calls: (softmax - one_hot(labels)) * g, in one buffer.
        softmax, index = residuals
        grad = np.multiply(softmax, np.asarray(g)[..., None], dtype=softmax.dtype)
        grad[index] -= g
        return [grad]

    return vjp


defvjp_fused(_sparse_xent_logits, _sparse_xent_logits_vjp)


def _one_hot_like(labels, logits):
    out = np.zeros(np.shape(logits), dtype=logits.dtype)
    np.put_along_axis(out, labels[..., None], 1, axis=-1)
    return out


def _to_last(op, value, axis, *operands):
    """Moves the class axis last, after checking it against the rank."""
    ndim = np.ndim(getval(value))
    axis = normalize_axis(op, axis, ndim, *(operands or (value,)))
    return value if axis == ndim - 1 else anp.moveaxis(value, axis, -1)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between integer class labels and predicted scores.

    With `from_logits=True`, `output` holds unnormalized scores and the
    softmax is fused in: large logits give finite losses and gradients.
    Probabilities are rescaled to sum to one and clipped to
    `[epsilon, 1 - epsilon]`, as in Keras.

    Args:
        target: integer labels, of `output`'s shape without `axis`.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.
        axis: the class axis of `output`.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if the shapes do not fit, `axis` is out of range or a
            label is out of range.

    Example:
        >>> loss = sparse_categorical_crossentropy([0], [[1000.0, 0.0]], from_logits=True)
        >>> loss.numpy()
        array([0.], dtype=float32)
    """
    scores, labels, output_value = _sparse_xent_operands(
        "sparse_categorical_crossentropy", target, output, axis
    )
    if from_logits:
        return wrap(call_primitive(_sparse_xent_logits, scores, labels))
    # As Keras does: rescale to sum to one, then clip away from 0 and 1.
    classes = shape_of(scores)[-1]
    probs = scores / anp.sum(scores, axis=-1, keepdims=True)
    probs = anp.clip(probs, config.epsilon(), 1.0 - config.epsilon())
    picked = anp.reshape(probs, (-1, classes))[np.arange(labels.size), labels.reshape(-1)]
    return wrap(-anp.reshape(anp.log(picked), labels.shape))


def _sparse_xent_operands(name, target, output, axis):
    """Checks labels against scores; returns `(scores with classes last, int labels, output)`."""
    output_value = as_float(value_of(output))
    labels = np.asarray(getval(value_of(target)))
    scores = _to_last(name, output_value, axis, labels, output_value)
    scores_shape = shape_of(scores)
    batch_shape, classes = scores_shape[:-1], scores_shape[-1]
    if labels.shape != batch_shape:
        if labels.shape == batch_shape + (1,):
            labels = labels[..., 0]
        else:
            problem = f"labels must have the shape of output without its class axis {axis}"
            raise op_error(name, problem, labels, output_value)
    if labels.dtype.kind not in "iu":
        if labels.size and not np.all(np.mod(labels, 1) == 0):
            raise ValueError(f"{name}: labels must be integer class indices, got {labels.dtype}")
        labels = labels.astype(np.int64)
    # Negative labels viewed as unsigned are huge: one reduction checks both ends.
    if labels.size and labels.view(labels.dtype.str.replace("i", "u")).max() >= classes:
        low, high = labels.min(), labels.max()
        problem = f"labels must lie in [0, {classes}), but range from {low} to {high}"
        raise op_error(name, problem, labels, output_value)
    return scores, labels, output_value


@fused_primitive
def _mean_sparse_xent_logits(logits, labels):
    """The mean of `_sparse_xent_logits`, keeping its residuals."""
    losses, residuals = _sparse_xent_logits.forward(logits, labels)
    return losses.sum() * _inverse_count(losses.size), residuals


def _inverse_count(count):
    """`1 / count` as a Python float, or nan for no samples (the mean of nothing)."""
    return 1.0 / count if count else float("nan")


def _mean_sparse_xent_logits_vjp(argnums, ans, args, residuals):
    """The per-sample losses' VJP, each sample's share of `g` being `g / count`."""
    logits, labels = args
    per_sample = _sparse_xent_logits_vjp(argnums, ans, args, residuals)
    shares = np.full(labels.shape, _inverse_count(labels.size), dtype=getval(logits).dtype)

    def vjp(g):
        return per_sample(g * shares)

    return vjp


defvjp_fused(_mean_sparse_xent_logits, _mean_sparse_xent_logits_vjp)


def mean_sparse_categorical_crossentropy(target, output, axis=-1):
    """The mean of `sparse_categorical_crossentropy(target, output, from_logits=True)`.

    One fused op for the usual training loss: the losses and their mean in
    one primitive, whose gradient is `(softmax - one_hot) / count`, built
    in one buffer from the softmax the forward pass kept.

    Args:
        target: integer labels, of `output`'s shape without `axis`.
        output: logits.
        axis: the class axis of `output`.

    Returns:
        A scalar Tensor: the mean loss over every sample (nan for none).

    Raises:
        ValueError: as `sparse_categorical_crossentropy` does.

    Example:
        >>> loss = mean_sparse_categorical_crossentropy([0, 1], [[0.0, 0.0], [0.0, 1000.0]])
        >>> round(float(loss), 6)  # (log 2 + 0) / 2
        0.346574
    """
    scores, labels, _ = _sparse_xent_operands(
        "sparse_categorical_crossentropy", target, output, axis
    )
    return wrap(call_primitive(_mean_sparse_xent_logits, scores, labels))


@primitive
def _xent_logits(logits, target):
    return -np.sum(target * _log_softmax(logits, -1), axis=-1)


def _xent_logits_vjp_logits(ans, logits, target):
    def vjp(g):
        probs = _softmax(logits, -1)
        total = anp.sum(target, axis=-1, keepdims=True)
        return anp.expand_dims(g, -1) * (probs * total - target)

    return vjp


defvjp(
    _xent_logits,
    _xent_logits_vjp_logits,
    lambda ans, logits, target: lambda g: -anp.expand_dims(g, -1) * _log_softmax(logits, -1),
)


def _targets_like_output(target, output):
    """Targets are data: they take the predictions' float dtype.

    float64 one-hot labels (`np.eye(10)[labels]`) must not turn a float32
    model's loss, and its whole backward pass, into float64.
    """
    target_value, scores = as_float(value_of(target)), as_float(value_of(output))
    if target_value.dtype != scores.dtype:
        target_value = target_value.astype(scores.dtype)
    return target_value, scores


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between one-hot (or soft) targets and predictions.

    Args:
        target: class probabilities, of `output`'s shape; cast to `output`'s
            float dtype.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if `target` and `output` have different shapes or `axis`
            is out of range.

    Example:
        >>> categorical_crossentropy([[0.0, 1.0]], [[0.0, 1000.0]], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    target_value, scores = _targets_like_output(target, output)
    if np.shape(target_value) != np.shape(scores):
        raise op_error(
            "categorical_crossentropy", "target and output shapes differ", target_value, scores
        )
    name = "categorical_crossentropy"
    target_value = _to_last(name, target_value, axis)
    scores = _to_last(name, scores, axis)
    if from_logits:
        return wrap(_xent_logits(scores, target_value))
    probs = scores / anp.sum(scores, axis=-1, keepdims=True)
    probs = anp.clip(probs, config.epsilon(), 1.0 - config.epsilon())
    return wrap(-anp.sum(target_value * anp.log(probs), axis=-1))


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise binary cross-entropy between 0/1 targets and predictions.

    Args:
        target: targets in [0, 1], of `output`'s shape; cast to `output`'s
            float dtype.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.

    Returns:
        A Tensor of `output`'s shape.

    Raises:
        ValueError: if `target` and `output` have different shapes.

    Example:
        >>> binary_crossentropy([1.0], [1000.0], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    z, x = _targets_like_output(target, output)
    if np.shape(z) != np.shape(x):
        raise op_error("binary_crossentropy", "target and output shapes differ", z, x)
    if from_logits:
        # log(1 + exp(x)) - x z, with the overflow-free softplus: finite for any x.
        return wrap(_softplus(x) - x * z)
    p = anp.clip(x, config.epsilon(), 1.0 - config.epsilon())
    return wrap(-(z * anp.log(p) + (1.0 - z) * anp.log(1.0 - p)))


# --------------------------------------------------------------- fused dense


@fused_primitive
def _dense(x, kernel, bias, use_relu):
    """`x @ kernel + bias`, relu'd in place if asked; the residual is the relu's output."""
    out = np.matmul(x, kernel)
    if bias is not None:
        out += bias
    if use_relu:
        np.maximum(out, 0, out=out)
        return out, out
    return out, None


def _dense_vjp(argnums, ans, args, residuals):
    x, kernel, bias, use_relu = args
    # The relu mask is a constant, even where an outer tape boxes `ans`.
    outputs = getval(ans) if use_relu else None
    traced_inputs = residuals is None and (isbox(x) or isbox(kernel))

    def vjp(g):
        if traced_inputs or isbox(g):
            # An outer tape records this gradient: build it from traced ops.
            if use_relu:
                g = g * (outputs > 0)
            return _traced_dense_grads(argnums, g, x, kernel)
        # Plain numpy otherwise: the products BLAS does anyway, without the
        # dozen autograd calls (and their checks) the traced version costs.
        if use_relu:
            if may_overwrite(g):
                g *= outputs > 0  # nobody else holds g: no new buffer, as numpy code does
            else:
                g = g * (outputs > 0)
        g_2d = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
        grads = []
        for argnum in argnums:
            if argnum == 0:
                grads.append(g @ kernel.T)
            elif argnum == 1:
                x_2d = x if x.ndim == 2 else x.reshape(-1, kernel.shape[0])
                grads.append(x_2d.T @ g_2d)
            else:
                grads.append(g_2d.sum(axis=0))
        return grads

    return vjp


def _traced_dense_grads(argnums, g, x, kernel):
    """The gradients of `_dense` from autograd ops, differentiable again."""
    grads = []
    for argnum in argnums:
        if argnum == 0:
            grads.append(anp.matmul(g, anp.transpose(kernel)))
        elif argnum == 1:
            flat_x = anp.reshape(x, (-1, np.shape(kernel)[0]))
            grads.append(anp.matmul(anp.transpose(flat_x), anp.reshape(g, (-1, np.shape(g)[-1]))))
        else:
            grads.append(anp.sum(anp.reshape(g, (-1, np.shape(g)[-1])), axis=0))
    return grads


defvjp_fused(_dense, _dense_vjp)


def dense(x, kernel, bias=None, activation=None):
    """Fused `activation(x @ kernel + bias)`, the body of a Dense layer.

    One primitive with a hand-written gradient: the bias add and the relu
    happen in place in the forward pass, and the backward pass applies the
    relu mask once for all three gradients.

    Args:
        x: Tensor of shape `(..., in_features)`.
        kernel: Tensor of shape `(in_features, units)`.
        bias: optional Tensor of shape `(units,)`.
        activation: None (linear) or `"relu"`.

    Returns:
        A Tensor of shape `(..., units)`.

    Raises:
        ValueError: if the shapes do not fit or the activation is not supported.

    Example:
        >>> dense(ops.ones((2, 3)), ops.ones((3, 4)), ops.zeros(4), "relu").numpy()[0]
        array([3., 3., 3., 3.], dtype=float32)
    """
    if activation not in (None, "linear", "relu"):
        raise ValueError(f"dense: activation must be None, 'linear' or 'relu', got {activation!r}")
    x_value, kernel_value = value_of(x), value_of(kernel)
    # One level of boxes: deeper ones (nested tapes) take the general path below.
    x_array = x_value._value if type(x_value) is ArrayBox else x_value
    kernel_array = kernel_value._value if type(kernel_value) is ArrayBox else kernel_value
    if (
        type(x_array) is not np.ndarray
        or type(kernel_array) is not np.ndarray
        or x_array.dtype != kernel_array.dtype
    ):
        x_value, kernel_value = promote(x_value, kernel_value)
        x_shape, kernel_shape = shape_of(x_value), shape_of(kernel_value)
        x_array = None  # not the arrays to compute with: the general path below
    else:
        x_shape, kernel_shape = x_array.shape, kernel_array.shape
    bias_value = None if bias is None else value_of(bias)
    bias_array = bias_value._value if type(bias_value) is ArrayBox else bias_value
    if len(kernel_shape) != 2 or not x_shape or x_shape[-1] != kernel_shape[0]:
        raise op_error(
            "dense", "x's last axis must match kernel's first axis", x_value, kernel_value
        )
    if (
        bias_value is not None
        and (bias_array.shape if type(bias_array) is np.ndarray else shape_of(bias_value))
        != kernel_shape[1:]
    ):
        raise op_error(
            "dense", f"bias must have shape ({kernel_shape[1]},)", kernel_value, bias_value
        )
    use_relu = activation == "relu"
    if type(kernel_value) is ArrayBox and type(bias_value) is ArrayBox:
        # A layer's step in one tape: kernel and bias are boxes of that tape's
        # trace and x is data or a box of it. Record the node here, without
        # call_primitive's general unboxing (this is the hottest op in training).
        trace = kernel_value._trace
        x_boxed = type(x_value) is ArrayBox
        if (
            bias_value._trace == trace
            and type(bias_array) is np.ndarray
            and type(x_array) is np.ndarray  # (None after a promotion)
            and (not x_boxed or x_value._trace == trace)
        ):
            values = (x_array, kernel_array, bias_array, use_relu)
            if x_boxed:
                argnums, parents = (0, 1, 2), (x_value._node, kernel_value._node, bias_value._node)
            else:
                argnums, parents = (1, 2), (kernel_value._node, bias_value._node)
            return wrap(record_fused(_dense, trace, argnums, parents, values))
    return wrap(call_primitive(_dense, x_value, kernel_value, bias_value, use_relu))
