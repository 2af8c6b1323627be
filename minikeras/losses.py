"""Losses: how far predictions are from targets, as a differentiable number.

A loss function (`mean_squared_error`, ...) maps `(y_true, y_pred)` to one
loss per sample. A `Loss` object wraps one, and adds `sample_weight` and a
reduction to a scalar. Everything is written in `minikeras.ops`, so
`GradientTape` differentiates it; float32 predictions give float32 losses and
gradients (integer labels are cast to the prediction's dtype).

Shapes follow Keras: `y_true` and `y_pred` have the same shape, except that one
may carry an extra trailing axis of size 1 ((32,) against (32, 1)); anything
else is a ValueError naming the loss and both shapes, where Keras would often
broadcast silently.

One deliberate difference from Keras: given 1-D targets and predictions of
shape (batch,), the element-wise `Loss` objects (mean squared/absolute error,
Huber, binary cross-entropy) see one value per sample. Keras averages them into
a single number before weighting, which makes `sample_weight` and
`reduction="none"` meaningless. The loss functions themselves follow Keras
(mean over the last axis).
"""

import re
import warnings

from minikeras import config, ops

_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def standardize_reduction(reduction, name="loss"):
    """Checks a reduction name and returns it.

    Args:
        reduction: one of `"sum_over_batch_size"`, `"sum"`, `"mean"`,
            `"mean_with_sample_weight"`, `"none"` or None.
        name: the loss's name, for the error message.

    Returns:
        `reduction`, unchanged.

    Raises:
        ValueError: for any other value.

    Example:
        >>> standardize_reduction("sum")
        'sum'
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Loss {name!r}: invalid reduction {reduction!r}; expected one of "
            f"{', '.join(repr(r) for r in _REDUCTIONS)}"
        )
    return reduction


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Aligns ranks that differ by a trailing axis of size 1, as Keras does.

    If one operand has one more axis than the other and that last axis has
    size 1, it is squeezed; except that a 1-D partner is expanded instead
    (with `expand_rank_1`), so (32,) against (32, 1) gives two (32, 1)s.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.
        expand_rank_1: expand a 1-D operand rather than squeeze its partner.

    Returns:
        The pair `(x1, x2)` as Tensors, possibly reshaped.

    Example:
        >>> a, b = squeeze_or_expand_to_same_rank(ops.ones((4,)), ops.ones((4, 1)))
        >>> a.shape, b.shape
        ((4, 1), (4, 1))
    """
    x1, x2 = ops.convert_to_tensor(x1), ops.convert_to_tensor(x2)
    rank1, rank2 = x1.ndim, x2.ndim
    if rank1 == rank2 + 1 and x1.shape[-1] == 1:
        if rank2 == 1 and expand_rank_1:
            x2 = ops.expand_dims(x2, -1)
        else:
            x1 = ops.squeeze(x1, -1)
    elif rank2 == rank1 + 1 and x2.shape[-1] == 1:
        if rank1 == 1 and expand_rank_1:
            x1 = ops.expand_dims(x1, -1)
        else:
            x2 = ops.squeeze(x2, -1)
    return x1, x2


def _float_pair(y_true, y_pred):
    """`y_pred` as a float Tensor (floatx if integer), `y_true` cast to its dtype."""
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, config.floatx())
    y_true = ops.convert_to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = ops.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def _matched(name, y_true, y_pred):
    """Float Tensors of one shape, after Keras's trailing-axis alignment."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    aligned_true, aligned_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    if aligned_true.shape != aligned_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape (up to a trailing axis "
            f"of size 1); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
        )
    return aligned_true, aligned_pred


def _check_smoothing(name, label_smoothing):
    label_smoothing = float(label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{name}: label_smoothing must lie in [0, 1], got {label_smoothing}")
    return label_smoothing


# ---------------------------------------------------------------- functions


def mean_squared_error(y_true, y_pred):
    """Mean squared error over the last axis: `mean((y_true - y_pred) ** 2, axis=-1)`.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
        array([0.5], dtype=float32)
    """
    y_true, y_pred = _matched("mean_squared_error", y_true, y_pred)
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """Mean absolute error over the last axis: `mean(abs(y_true - y_pred), axis=-1)`.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mean_absolute_error([[0.0, 1.0]], [[2.0, 1.0]]).numpy()
        array([1.], dtype=float32)
    """
    y_true, y_pred = _matched("mean_absolute_error", y_true, y_pred)
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Huber loss: quadratic for small errors, linear for large ones.

        error = y_pred - y_true
        loss = 0.5 * error ** 2                      if |error| <= delta
               delta * |error| - 0.5 * delta ** 2    otherwise
        result = mean(loss, axis=-1)

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.
        delta: positive float, where the loss turns from quadratic to linear.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, or `delta` is not positive.

    Example:
        >>> huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()
        array([1.3125], dtype=float32)
    """
    delta = float(delta)
    if not delta > 0:
        raise ValueError(f"huber: delta must be positive, got {delta}")
    y_true, y_pred = _matched("huber", y_true, y_pred)
    error = y_pred - y_true
    abs_error = ops.abs(error)
    quadratic = 0.5 * ops.square(error)
    linear = delta * abs_error - 0.5 * delta * delta
    return ops.mean(ops.where(abs_error <= delta, quadratic, linear), axis=-1)


def kl_divergence(y_true, y_pred):
    """Kullback-Leibler divergence over the last axis.

        y_true, y_pred = clip(y_true, eps, 1), clip(y_pred, eps, 1)
        result = sum(y_true * log(y_true / y_pred), axis=-1)

    Args:
        y_true: target distributions, of `y_pred`'s shape.
        y_pred: predicted distributions (probabilities).

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> kl_divergence([[0.5, 0.5]], [[0.5, 0.5]]).numpy()
        array([0.], dtype=float32)
    """
    y_true, y_pred = _matched("kl_divergence", y_true, y_pred)
    y_true = ops.clip(y_true, config.epsilon(), 1.0)
    y_pred = ops.clip(y_pred, config.epsilon(), 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy, averaged over `axis`.

        y_true = y_true * (1 - label_smoothing) + 0.5 * label_smoothing
        p = sigmoid(y_pred) if from_logits else clip(y_pred, eps, 1 - eps)
        result = mean(-(y_true * log(p) + (1 - y_true) * log(1 - p)), axis)

    With `from_logits=True` the sigmoid is fused in, so that any logit gives a
    finite loss and gradient.

    Args:
        y_true: 0/1 targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; pulls targets towards 0.5.
        axis: the axis to average over.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if the shapes differ or `label_smoothing` is outside [0, 1].

    Example:
        >>> binary_crossentropy([[1.0, 0.0]], [[1000.0, -1000.0]], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    label_smoothing = _check_smoothing("binary_crossentropy", label_smoothing)
    y_true, y_pred = _matched("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    losses = ops.binary_crossentropy(y_true, y_pred, from_logits=from_logits)
    return ops.mean(losses, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy between one-hot (or soft) targets and predicted distributions.

        y_true = y_true * (1 - label_smoothing) + label_smoothing / num_classes
        p = softmax(y_pred) if from_logits else y_pred / sum(y_pred), clipped to [eps, 1 - eps]
        result = -sum(y_true * log(p), axis)

    With `from_logits=True` the softmax is fused in: large logits give finite
    losses and gradients.

    Args:
        y_true: one-hot or soft targets, of `y_pred`'s shape.
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; mixes the targets with the uniform
            distribution over the `y_pred.shape[axis]` classes.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ (integer labels belong to
            `sparse_categorical_crossentropy`) or `label_smoothing` is outside [0, 1].

    Example:
        >>> categorical_crossentropy([[0.0, 1.0]], [[-1000.0, 1000.0]], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    label_smoothing = _check_smoothing("categorical_crossentropy", label_smoothing)
    y_true, y_pred = _float_pair(y_true, y_pred)
    if y_true.shape != y_pred.shape:
        hint = ""
        if y_true.ndim == y_pred.ndim - 1 or (y_true.ndim and y_true.shape[-1] == 1):
            hint = "; for integer class labels use sparse_categorical_crossentropy"
        raise ValueError(
            "categorical_crossentropy: y_true and y_pred must have the same shape; got "
            f"y_true shape {y_true.shape} and y_pred shape {y_pred.shape}{hint}"
        )
    if y_pred.ndim and y_pred.shape[axis] == 1:
        warnings.warn(
            f"categorical_crossentropy: y_pred has one class (shape {y_pred.shape}), so the "
            "loss is always 0; use binary_crossentropy for two classes",
            UserWarning,
            stacklevel=2,
        )
    if label_smoothing:
        num_classes = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / num_classes
    return ops.categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Cross-entropy between integer class labels and predicted distributions.

        p = softmax(y_pred) if from_logits else clip(y_pred, eps, 1 - eps)
        result = -log(p[..., y_true])

    Args:
        y_true: integer labels of shape `y_pred.shape` without `axis`, or with
            a trailing axis of size 1 (e.g. (batch,) or (batch, 1)).
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits (the softmax is then fused
            in: large logits give finite losses and gradients).
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the label shape does not fit (one-hot targets belong to
            `categorical_crossentropy`) or a label is out of range.

    Example:
        >>> sparse_categorical_crossentropy([1, 0], [[0.0, 1000.0], [0.0, 0.0]], True).numpy()
        array([0.       , 0.6931472], dtype=float32)
    """
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, config.floatx())
    y_true = ops.convert_to_tensor(y_true)
    if not y_pred.ndim:
        raise ValueError("sparse_categorical_crossentropy: y_pred needs a class axis; got shape ()")
    sample_shape = y_pred.shape[: axis % y_pred.ndim] + y_pred.shape[axis % y_pred.ndim + 1 :]
    if y_true.shape not in (sample_shape, sample_shape + (1,)):
        hint = ""
        if y_true.shape == y_pred.shape:
            hint = "; for one-hot targets use categorical_crossentropy"
        raise ValueError(
            f"sparse_categorical_crossentropy: y_true must have shape {sample_shape} or "
            f"{sample_shape + (1,)} (y_pred's shape without its class axis); got y_true shape "
            f"{y_true.shape} and y_pred shape {y_pred.shape}{hint}"
        )
    return ops.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kl_divergence
bce = BCE = binary_crossentropy


# ---------------------------------------------------------------- reduction


def reduce_weighted_values(
    values, sample_weight=None, reduction="sum_over_batch_size", name="loss"
):
    """Weights per-sample losses and reduces them as `reduction` says.

        weighted = values * sample_weight
        "sum":                     sum(weighted)
        "sum_over_batch_size":     sum(weighted) / number of elements of values
        "mean":                    the same as "sum_over_batch_size"
        "mean_with_sample_weight": sum(weighted) / sum(sample_weight)
        "none" or None:            weighted, unreduced

    A zero divisor gives 0. A 0-d `values` is returned as it is.

    Args:
        values: Tensor of per-sample losses.
        sample_weight: None, or weights of shape (batch,) or anything that
            broadcasts to `values` once trailing axes are added (a weight per
            sample, per time step, ...).
        reduction: see above.
        name: the loss's name, for error messages.

    Returns:
        A scalar Tensor, or a Tensor of `values`' shape for `"none"` / None.

    Raises:
        ValueError: for an unknown reduction, or weights that do not fit.

    Example:
        >>> float(reduce_weighted_values(ops.convert_to_tensor([1.0, 3.0]), [1.0, 0.0]))
        0.5
    """
    reduction = standardize_reduction(reduction, name)
    values = ops.convert_to_tensor(values)
    if sample_weight is not None:
        weights = ops.cast(sample_weight, values.dtype)
        weight_shape = weights.shape
        values, weights = squeeze_or_expand_to_same_rank(values, weights)
        while weights.ndim < values.ndim:  # a weight per sample covers its trailing axes
            weights = ops.expand_dims(weights, -1)
        if not _broadcasts_to(weights.shape, values.shape):
            raise ValueError(
                f"Loss {name!r}: sample_weight of shape {weight_shape} does not fit "
                f"losses of shape {values.shape}; expected shape "
                f"{values.shape[:1]} or one that broadcasts"
            )
        values = values * weights
    if reduction in ("none", None) or values.ndim == 0:
        return values
    if sample_weight is None and reduction in ("sum_over_batch_size", "mean") and values.size:
        return ops.mean(values)  # one recorded op instead of a sum and a scaling: the hot path
    total = ops.sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = ops.sum(weights * ops.ones_like(values))
        # Dividing the losses, not their sum: ops.divide of two 0-d float64
        # Tensors gives float32 (see the report on ops.divide).
        return ops.sum(values / divisor) if float(divisor) else total * 0.0
    return total * (1.0 / values.size) if values.size else total * 0.0


def _broadcasts_to(shape, target):
    if len(shape) > len(target):
        return False
    return all(a in (1, b) for a, b in zip(shape[::-1], target[::-1]))


# ------------------------------------------------------------------ classes


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Loss:
    """Base class of losses: per-sample `call`, then weighting and reduction.

    Subclasses implement `call(y_true, y_pred)`, returning one loss per
    sample; `__call__` converts the inputs, calls it, and applies
    `sample_weight` and the reduction (see `reduce_weighted_values`).

    Args:
        name: the loss's name; the class name in snake case by default.
        reduction: `"sum_over_batch_size"` (the default: the weighted sum
            divided by the number of losses), `"sum"`, `"mean"`,
            `"mean_with_sample_weight"` (divided by the sum of the weights),
            or `"none"` / None for the per-sample losses.
        dtype: the dtype to compute in; None keeps `y_pred`'s float dtype
            (floatx for integer predictions). Keras uses floatx instead.

    Raises:
        ValueError: for an unknown reduction.

    Example:
        >>> class Squares(Loss):
        ...     def call(self, y_true, y_pred):
        ...         return ops.sum(ops.square(y_pred - y_true), axis=-1)
        >>> float(Squares(reduction="sum")([[0.0], [0.0]], [[1.0], [2.0]]))
        5.0
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction, self.name)
        self.dtype = None if dtype is None else config.standardize_dtype(dtype)

    def __call__(self, y_true, y_pred, sample_weight=None):
        """Computes the weighted, reduced loss.

        Args:
            y_true: targets (labels for the sparse loss).
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Returns:
            A scalar Tensor, or per-sample losses for reduction `"none"` / None.

        Raises:
            ValueError: if the shapes do not fit, naming the loss and the shapes.

        Example:
            >>> float(MeanSquaredError()([[1.0], [1.0]], [[0.0], [2.0]], sample_weight=[1.0, 3.0]))
            2.0
        """
        y_pred = ops.convert_to_tensor(y_pred)
        dtype = self.dtype or (y_pred.dtype if y_pred.dtype.kind == "f" else config.floatx())
        losses = self.call(y_true, ops.cast(y_pred, dtype))
        return reduce_weighted_values(losses, sample_weight, self.reduction, self.name)

    def call(self, y_true, y_pred):
        """Returns the per-sample losses; subclasses implement it.

        Args:
            y_true: targets.
            y_pred: predictions, a float Tensor.

        Returns:
            A Tensor of per-sample losses.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> MeanAbsoluteError().call([[1.0, 3.0]], ops.zeros((1, 2))).numpy()
            array([2.], dtype=float32)
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred)")

    def get_config(self):
        """Returns the constructor arguments, for `from_config`.

        Returns:
            A dict.

        Example:
            >>> MeanSquaredError().get_config()
            {'name': 'mean_squared_error', 'reduction': 'sum_over_batch_size', 'dtype': None}
        """
        return {"name": self.name, "reduction": self.reduction, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """Makes a loss from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new loss.

        Example:
            >>> Huber.from_config(Huber(delta=2.0).get_config()).delta
            2.0
        """
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} reduction={self.reduction!r}>"


class LossFunctionWrapper(Loss):
    """A `Loss` around a per-sample loss function `fn(y_true, y_pred, **kwargs)`.

    Args:
        fn: the loss function.
        reduction: as in `Loss`.
        name: the loss's name; `fn`'s name by default.
        dtype: as in `Loss`.
        **kwargs: further arguments for `fn`.

    Example:
        >>> loss = LossFunctionWrapper(huber, delta=0.5)
        >>> float(loss([[0.0]], [[2.0]]))
        0.875
    """

    # Element-wise losses read 1-D (batch,) inputs as one value per sample.
    _per_element = False

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or fn.__name__, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        """Returns `fn(y_true, y_pred, **kwargs)`: the per-sample losses.

        Args:
            y_true: targets.
            y_pred: predictions.

        Returns:
            A Tensor of per-sample losses.

        Example:
            >>> MeanSquaredError().call([1.0, 2.0], [1.0, 4.0]).numpy()
            array([0., 4.], dtype=float32)
        """
        y_true, y_pred = ops.convert_to_tensor(y_true), ops.convert_to_tensor(y_pred)
        if self._per_element and y_true.ndim == 1 and y_pred.ndim == 1:
            y_true, y_pred = ops.expand_dims(y_true, -1), ops.expand_dims(y_pred, -1)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        """Returns the constructor arguments, the function's among them.

        Returns:
            A dict.

        Example:
            >>> BinaryCrossentropy(from_logits=True).get_config()["from_logits"]
            True
        """
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is LossFunctionWrapper:
            config["fn"] = serialize(self.fn)
        return config

    @classmethod
    def from_config(cls, config):
        """Makes the loss from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new loss.

        Example:
            >>> LossFunctionWrapper.from_config({"fn": "mae", "name": "l1"}).fn is mae
            True
        """
        if cls is LossFunctionWrapper and isinstance(config.get("fn"), str):
            config = {**config, "fn": get(config["fn"])}
        return cls(**config)


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors: `mean((y_true - y_pred) ** 2)` (see `mean_squared_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
        0.5
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors: `mean(abs(y_true - y_pred))` (see `mean_absolute_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(MeanAbsoluteError()([[0.0, 1.0]], [[2.0, 1.0]]))
        1.0
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    """Huber loss, quadratic below `delta` and linear above (see `huber`).

    Args:
        delta: positive float, where the loss turns linear.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `delta` is not positive.

    Example:
        >>> float(Huber(delta=1.0)([[0.0, 0.0]], [[0.5, 3.0]]))
        1.3125
    """

    _per_element = True

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        self.delta = float(delta)
        if not self.delta > 0:
            raise ValueError(f"Huber: delta must be positive, got {delta}")
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=self.delta)


class KLDivergence(LossFunctionWrapper):
    """Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred))` (see `kl_divergence`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> round(float(KLDivergence()([[1.0, 0.0]], [[0.5, 0.5]])), 4)
        0.6931
    """

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy between 0/1 targets and probabilities or logits.

    See `binary_crossentropy` for the formula and label smoothing.

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + 0.5 * label_smoothing`.
        axis: the axis to average over.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1].

    Example:
        >>> float(BinaryCrossentropy(from_logits=True)([1, 0], [1000.0, -1000.0]))
        0.0
    """

    _per_element = True

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_crossentropy",
        dtype=None,
    ):
        self.from_logits = bool(from_logits)
        self.label_smoothing = _check_smoothing(name, label_smoothing)
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=axis,
        )


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between one-hot targets and probabilities or logits.

    See `categorical_crossentropy` for the formula and label smoothing.

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + label_smoothing / num_classes`.
        axis: the class axis.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1].

    Example:
        >>> round(float(CategoricalCrossentropy()([[0.0, 1.0]], [[0.5, 0.5]])), 4)
        0.6931
    """

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_crossentropy",
        dtype=None,
    ):
        self.from_logits = bool(from_logits)
        self.label_smoothing = _check_smoothing(name, label_smoothing)
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between integer labels and probabilities or logits.

    See `sparse_categorical_crossentropy`; labels have shape (batch,) or
    (batch, 1) for predictions of shape (batch, num_classes).

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(SparseCategoricalCrossentropy(from_logits=True)([1], [[-1000.0, 1000.0]]))
        0.0
    """

    def __init__(
        self,
        from_logits=False,
        reduction="sum_over_batch_size",
        name="sparse_categorical_crossentropy",
        dtype=None,
    ):
        self.from_logits = bool(from_logits)
        super().__init__(
            sparse_categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
        )


# ------------------------------------------------------------ lookup by name

_CLASSES = {
    cls.__name__: cls
    for cls in (
        Loss,
        LossFunctionWrapper,
        MeanSquaredError,
        MeanAbsoluteError,
        Huber,
        KLDivergence,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
    )
}
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        mean_squared_error,
        mean_absolute_error,
        huber,
        kl_divergence,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
    )
}
_ALIASES = {"mse": mse, "MSE": mse, "mae": mae, "MAE": mae, "kld": kld, "KLD": kld}
_ALIASES.update({"bce": bce, "BCE": bce})
_ALL = {**_CLASSES, **_FUNCTIONS, **_ALIASES}


def get(identifier):
    """Returns the loss `identifier` stands for.

    Args:
        identifier: None; a name: a function's (`"mse"`,
            `"categorical_crossentropy"`, which give the function) or a
            class's (`"SparseCategoricalCrossentropy"`, which gives an
            instance with default arguments); a `serialize` dict; a `Loss`
            class or instance; or any callable `fn(y_true, y_pred)`.

    Returns:
        A callable: a loss function or a `Loss` instance (None for None).

    Raises:
        ValueError: for an unknown name or anything that is not a loss.

    Example:
        >>> get("mse") is mean_squared_error, type(get("BinaryCrossentropy")).__name__
        (True, 'BinaryCrossentropy')
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(
        "losses.get: expected a loss name, config dict, Loss or callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )


def serialize(loss):
    """Returns what `deserialize` turns back into `loss`.

    Args:
        loss: a `Loss` instance, or a named loss function.

    Returns:
        `{"class_name": ..., "config": ...}` for a `Loss`; the name for a function.

    Raises:
        ValueError: for a lambda or another callable without a usable name.

    Example:
        >>> serialize(mse), serialize(Huber(delta=2.0))["config"]["delta"]
        ('mean_squared_error', 2.0)
    """
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    name = getattr(loss, "__name__", None)
    if not callable(loss) or name is None or name == "<lambda>":
        raise ValueError(
            f"losses.serialize: cannot name {loss!r}; use a Loss or a def-function with a name"
        )
    return name


def deserialize(config, custom_objects=None):
    """Returns the loss that `serialize` described.

    Args:
        config: a name (see `get`) or a `{"class_name": ..., "config": ...}` dict.
        custom_objects: optional dict of name -> function or `Loss` class,
            searched first.

    Returns:
        A loss function or a `Loss` instance.

    Raises:
        ValueError: if the name is unknown or the dict malformed.

    Example:
        >>> deserialize({"class_name": "Huber", "config": {"delta": 2.0}}).delta
        2.0
    """
    known = {**_ALL, **(custom_objects or {})}
    if isinstance(config, dict):
        if "class_name" not in config:
            raise ValueError(
                "losses.deserialize: expected a dict with 'class_name' and 'config', "
                f"got {config!r}"
            )
        cls = known.get(config["class_name"])
        if not (isinstance(cls, type) and issubclass(cls, Loss)):
            raise ValueError(f"Unknown loss class {config['class_name']!r}")
        arguments = dict(config.get("config", {}))
        if isinstance(arguments.get("fn"), str) and arguments["fn"] in known:
            arguments["fn"] = known[arguments["fn"]]  # a wrapped custom function
        return cls.from_config(arguments)
    if isinstance(config, str) and config in known:
        obj = known[config]
        return obj() if isinstance(obj, type) else obj
    raise ValueError(f"Unknown loss {config!r}; known losses: {', '.join(sorted(_ALL))}")
