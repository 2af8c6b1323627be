"""The loss base classes: `Loss`, and `LossFunctionWrapper`, which wraps a loss function."""

import numpy as np

from minikeras import config, ops
from minikeras.losses.reduction import (
    apply_mask,
    reduce_weighted_values,
    standardize_reduction,
)
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["Loss", "LossFunctionWrapper", "loss_dtype"]


def loss_dtype(prediction_dtype):
    """The dtype a loss computes in when given none: see `Loss`'s `dtype`.

    Args:
        prediction_dtype: the numpy dtype of `y_pred`.

    Returns:
        A numpy dtype: the wider of `prediction_dtype` and floatx, or floatx
        for a prediction that is not floating.

    Example:
        >>> from minikeras.losses.base import loss_dtype
        >>> loss_dtype(np.dtype("float16")), loss_dtype(np.dtype("float64"))
        (dtype('float32'), dtype('float64'))
    """
    floatx = config.floatx()
    if prediction_dtype.kind != "f" or prediction_dtype == floatx:
        return np.dtype(floatx) if prediction_dtype.kind != "f" else prediction_dtype
    return np.promote_types(prediction_dtype, floatx)


class Loss:
    """Base class of losses: per-sample `call`, then weighting and reduction.

    Subclasses implement `call(y_true, y_pred)`, returning one loss per
    sample; `__call__` converts the inputs, calls it, and applies
    `sample_weight` and the reduction (see `reduce_weighted_values`).

    Args:
        name: the loss's name; the class name in snake case by default.
        reduction: `"sum_over_batch_size"` (the default: the weighted sum
            divided by the number of losses), `"sum"`, `"mean"`,
            `"mean_with_sample_weight"` (divided by the sum of the weights
            broadcast to the losses; see `reduce_weighted_values` for where
            Keras differs),
            or `"none"` / None for the per-sample losses.
        dtype: the dtype to compute in; None keeps `y_pred`'s float dtype
            if it is at least as wide as floatx (float64 stays float64), else
            floatx (integer predictions, float16 ones of mixed precision, as
            Keras computes them in float32). Keras always uses floatx.

    Raises:
        ValueError: for an unknown reduction.

    Example:
        >>> class Squares(mk.losses.Loss):
        ...     def call(self, y_true, y_pred):
        ...         return mk.ops.sum(mk.ops.square(y_pred - y_true), axis=-1)
        >>> float(Squares(reduction="sum")([[0.0], [0.0]], [[1.0], [2.0]]))
        5.0
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction, self.name)
        self.dtype = None if dtype is None else config.standardize_dtype(dtype)

    def __call__(self, y_true, y_pred, sample_weight=None, mask=None):
        """Computes the weighted, reduced loss.

        Args:
            y_true: targets (labels for the sparse loss).
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.
            mask: None, or booleans of the per-sample losses' shape (for a
                sequence model, `model.compute_mask(x)`: (batch, steps)); the
                masked entries do not count, and a mean is over the others
                (see `apply_mask`). Keras reads it from `y_pred`; minikeras
                takes it explicitly, and `fit` passes the model's output mask.

        Returns:
            A scalar Tensor, or per-sample losses for reduction `"none"` / None.

        Raises:
            ValueError: if the shapes do not fit, naming the loss and the shapes.

        Example:
            >>> from minikeras.losses import MeanSquaredError
            >>> float(MeanSquaredError()([[1.0], [1.0]], [[0.0], [2.0]], sample_weight=[1.0, 3.0]))
            2.0
            >>> float(MeanSquaredError()([[1.0], [1.0]], [[0.0], [9.0]], mask=[True, False]))
            1.0
        """
        y_pred = ops.convert_to_tensor(y_pred)
        dtype = self.dtype or loss_dtype(y_pred.dtype)
        losses = self.call(y_true, ops.cast(y_pred, dtype))
        if mask is not None:
            sample_weight = self._masked_weights(losses, sample_weight, mask)
        return reduce_weighted_values(losses, sample_weight, self.reduction, self.name)

    def _masked_weights(self, losses, sample_weight, mask):
        """`apply_mask`'s weights, after checking the mask against the losses' shape."""
        mask_shape, shape = np.shape(mask), ops.convert_to_tensor(losses).shape
        if shape == ():  # one loss for the batch (Dice's): weighted by the mask, as in Keras
            return apply_mask(sample_weight, mask, losses.dtype, self.reduction, self.name)
        if mask_shape != shape and mask_shape != (*shape, 1):
            raise ValueError(
                f"Loss {self.name!r}: the mask has shape {mask_shape}, but the per-sample "
                f"losses have shape {shape}; a mask marks each loss (for a sequence "
                "model, (batch, steps))"
            )
        if mask_shape != shape:
            mask = np.reshape(mask, shape)
        return apply_mask(sample_weight, mask, losses.dtype, self.reduction, self.name)

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
            >>> from minikeras.losses import MeanAbsoluteError
            >>> MeanAbsoluteError().call([[1.0, 3.0]], mk.ops.zeros((1, 2))).numpy()
            array([2.], dtype=float32)
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred)")

    def get_config(self):
        """Returns the constructor arguments, for `from_config`.

        `dtype` is written only when one was given: Keras 3.15 never writes
        it (a given dtype is lost on its round trip; minikeras keeps it).

        Returns:
            A dict.

        Example:
            >>> from minikeras.losses import MeanSquaredError
            >>> MeanSquaredError().get_config()
            {'name': 'mean_squared_error', 'reduction': 'sum_over_batch_size'}
            >>> MeanSquaredError(dtype="float64").get_config()["dtype"]
            'float64'
        """
        config = {"name": self.name, "reduction": self.reduction}
        if self.dtype is not None:
            config["dtype"] = self.dtype
        return config

    @classmethod
    def from_config(cls, config):
        """Makes a loss from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new loss.

        Example:
            >>> from minikeras.losses import Huber
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
        >>> from minikeras.losses import huber
        >>> loss = mk.losses.LossFunctionWrapper(huber, delta=0.5)
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
            >>> from minikeras.losses import MeanSquaredError
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
            >>> from minikeras.losses import BinaryCrossentropy
            >>> BinaryCrossentropy(from_logits=True).get_config()["from_logits"]
            True
        """
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is LossFunctionWrapper:
            from minikeras.losses import serialize  # the package imports this module

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
            >>> from minikeras.losses import mae
            >>> mk.losses.LossFunctionWrapper.from_config({"fn": "mae", "name": "l1"}).fn is mae
            True
        """
        if cls is LossFunctionWrapper and isinstance(config.get("fn"), str):
            from minikeras.losses import get  # the package imports this module

            config = {**config, "fn": get(config["fn"])}
        return cls(**config)
