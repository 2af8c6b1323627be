"""`LossScaleOptimizer`: dynamic loss scaling around another optimizer (Keras 3's).

In float16 small gradients underflow to zero. The training step multiplies
the loss by a large scale before taking gradients (`scale_loss`), so the
gradients are scaled too; `apply` divides them back and hands them to the
wrapped optimizer. The scale adapts:

    if every gradient is finite:
        inner.apply(gradients / scale)
        step_counter += 1; after dynamic_growth_steps such steps: scale *= 2, step_counter = 0
    else (an inf or NaN: the scale was too large):
        no update; scale /= 2, step_counter = 0
"""

import numpy as np

from minikeras import serialization_lib
from minikeras.engine.tensor import Tensor
from minikeras.optimizers._checks import POSITIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["LossScaleOptimizer"]

# Keras's base-optimizer arguments and their defaults: LossScaleOptimizer takes none of
# them (they belong on the inner optimizer).
_INNER_ONLY = {
    "weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
    "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
    "loss_scale_factor": None, "gradient_accumulation_steps": None,
}  # fmt: skip


class LossScaleOptimizer(Optimizer):
    """Wraps an optimizer with dynamic loss scaling, for float16 training.

    `compile` wraps the optimizer in one when the model's dtype policy is
    `"mixed_float16"` (as Keras does); `train_step` scales the loss with
    `scale_loss` before taking gradients. The update rule is in the module's
    docstring. `learning_rate` and `iterations` are the inner optimizer's;
    `variables` are `step_counter` and `dynamic_scale`, then the inner's.

    Args:
        inner_optimizer: the `Optimizer` that updates the weights.
        initial_scale: the first loss scale, a number > 0 (2**15).
        dynamic_growth_steps: an int >= 1: the scale doubles after this
            many steps in a row with finite gradients (2000).
        name: a name (default `"loss_scale_optimizer"`).
        **kwargs: Keras's `dynamic=True` is accepted; the base optimizer's
            arguments are refused (set them on the inner optimizer).

    Raises:
        ValueError: for a bad argument, `dynamic=False`, or a base-optimizer
            argument (`clipnorm`, ...).
        TypeError: if `inner_optimizer` is not an `Optimizer`.

    Example:
        >>> w = mk.Variable([1.0], name="w")
        >>> optimizer = mk.mixed_precision.LossScaleOptimizer(
        ...     mk.optimizers.SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
        >>> optimizer.apply([np.array([4.0])], [w])  # a scaled gradient: 4 * 1.0
        >>> w.numpy(), float(optimizer.dynamic_scale.numpy())
        (array([0.5], dtype=float32), 4.0)
        >>> optimizer.apply([np.array([np.inf])], [w])  # skipped, the scale halves
        >>> w.numpy(), float(optimizer.dynamic_scale.numpy())
        (array([0.5], dtype=float32), 2.0)
    """

    def __init__(
        self,
        inner_optimizer,
        initial_scale=2.0**15,
        dynamic_growth_steps=2000,
        name=None,
        **kwargs,
    ):
        if not kwargs.pop("dynamic", True):
            raise ValueError(
                "LossScaleOptimizer: `dynamic=False` is not supported (as in Keras 3); scale "
                "the loss yourself for a fixed scale"
            )
        for key, default in _INNER_ONLY.items():
            if key in kwargs and kwargs.pop(key) != default:
                raise ValueError(
                    f"LossScaleOptimizer does not support `{key}`; set it on the inner optimizer"
                )
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments {sorted(kwargs)}")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer: `inner_optimizer` must be an Optimizer, got "
                f"{type(inner_optimizer).__name__}"
            )
        self.inner_optimizer = inner_optimizer  # (before the base: `learning_rate` is its)
        self.initial_scale = check_number(
            "LossScaleOptimizer", "initial_scale", initial_scale, POSITIVE
        )
        if (
            isinstance(dynamic_growth_steps, bool)
            or not isinstance(dynamic_growth_steps, (int, np.integer))
            or dynamic_growth_steps < 1
        ):
            raise ValueError(
                "LossScaleOptimizer: `dynamic_growth_steps` must be an int >= 1, got "
                f"{dynamic_growth_steps!r}"
            )
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        super().__init__(learning_rate=0.0, name=name or "loss_scale_optimizer")
        self.step_counter = self.dynamic_scale = None  # made by `build`

    @property
    def learning_rate(self):
        """The inner optimizer's learning rate (setting it sets the inner's)."""
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if self._learning_rate is None:  # (the base's __init__: the inner keeps its own)
            Optimizer.learning_rate.fset(self, value)
        else:
            self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        """The inner optimizer's `iterations` (a skipped step does not count)."""
        return self.inner_optimizer.iterations

    @property
    def variables(self):
        """`step_counter` and `dynamic_scale` (once built), then the inner optimizer's."""
        own = [] if self.step_counter is None else [self.step_counter, self.dynamic_scale]
        return own + self.inner_optimizer.variables

    def build(self, variables):
        """Makes `step_counter` and `dynamic_scale`, and builds the inner optimizer.

        Args:
            variables: the floating-point Variables to update.

        Example:
            >>> optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD())
            >>> optimizer.build([mk.Variable([1.0], name="w")])
            >>> [v.name for v in optimizer.variables]
            ['step_counter', 'dynamic_scale', 'iteration', 'learning_rate']
        """
        variables = list(variables)
        super().build(variables)
        self.step_counter = self.add_variable((), "zeros", "int32", "step_counter")
        self.dynamic_scale = self.add_variable(
            (), lambda shape, dtype=None: np.full(shape, self.initial_scale), "float32",
            "dynamic_scale",
        )  # fmt: skip
        if not self.inner_optimizer.built:
            self.inner_optimizer.build(variables)

    def scale_loss(self, loss):
        """The loss times the current scale (`initial_scale` before the first `apply`).

        A float16 loss is scaled in float32, as Keras's product with its
        float32 `dynamic_scale` is: 2**15 times a float16 loss above 2 would
        overflow float16. Differs from Keras 3 before the optimizer is built,
        where Keras multiplies by the Python number `initial_scale` and keeps
        the loss's float16 (Keras's `fit` builds the optimizer before its
        first step, minikeras's in it, so minikeras scales in float32 from
        the first step on).

        Args:
            loss: a scalar Tensor (taken inside the tape).

        Returns:
            A Tensor, float32 for a float16 or float32 loss (float64 stays float64).

        Example:
            >>> optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(), 8.0)
            >>> float(optimizer.scale_loss(mk.ops.convert_to_tensor(0.5)))
            4.0
            >>> optimizer.scale_loss(mk.ops.convert_to_tensor(np.float16(10.0))).dtype
            dtype('float32')
        """
        from minikeras import ops

        loss = ops.convert_to_tensor(loss)
        dtype = np.result_type(loss.dtype, np.float32)
        scale = self.dynamic_scale if self.built else self.initial_scale
        return ops.multiply(ops.cast(loss, dtype), ops.cast(scale, dtype))

    def apply(self, grads, trainable_variables=None):
        """Unscales the gradients and applies them, or skips the step if one is not finite.

        Args:
            grads: one gradient (of the scaled loss) per variable, or None.
            trainable_variables: the Variables, as for `Optimizer.apply`.

        Returns:
            None.

        Raises:
            ValueError: as `Optimizer.apply` does.

        Example:
            >>> w = mk.Variable([1.0])
            >>> optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(1.0), 2.0)
            >>> optimizer.apply([np.array([1.0])], [w]); w.numpy()
            array([0.5], dtype=float32)
        """
        grads = list(grads)
        if not self.built:
            if trainable_variables is None:
                raise ValueError(
                    f"Optimizer {self.name!r}: pass the variables to the first apply(), which "
                    "builds the optimizer's state for them"
                )
            self.build(trainable_variables)
        arrays = [None if g is None else np.asarray(g._value if type(g) is Tensor else g)
                  for g in grads]  # fmt: skip
        scale = self.dynamic_scale._value
        if all(a is None or np.isfinite(a).all() for a in arrays):
            unscaled = [None if a is None else a / scale.astype(a.dtype) for a in arrays]
            self.inner_optimizer.apply(unscaled, trainable_variables)
            if int(self.step_counter._value) >= self.dynamic_growth_steps - 1:
                self.step_counter.assign(0)
                self.dynamic_scale.assign(scale * 2)
            else:
                self.step_counter.assign_add(1)
        else:
            self.step_counter.assign(0)
            self.dynamic_scale.assign(scale * 0.5)

    def finalize_variable_values(self, var_list):
        """The inner optimizer's (its moving averages, with `use_ema`).

        Args:
            var_list: the variables.

        Example:
            >>> optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD())
            >>> optimizer.finalize_variable_values([])
        """
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        """The constructor arguments, the inner optimizer serialized (Keras 3's layout).

        Returns:
            A dict: `name`, `inner_optimizer`, `initial_scale`, `dynamic_growth_steps`.

        Example:
            >>> optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD())
            >>> sorted(optimizer.get_config())
            ['dynamic_growth_steps', 'initial_scale', 'inner_optimizer', 'name']
        """
        return {
            "name": self.name,
            "inner_optimizer": serialization_lib.serialize_keras_object(self.inner_optimizer),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Makes one from the dict `get_config` returned (the inner optimizer too).

        Args:
            config: the dict.
            custom_objects: optional dict of custom classes.

        Returns:
            A `LossScaleOptimizer`.

        Example:
            >>> LSO = mk.mixed_precision.LossScaleOptimizer
            >>> LSO.from_config(LSO(mk.optimizers.Adam()).get_config()).inner_optimizer
            <Adam 'adam' learning_rate=0.001 iterations=0>
        """
        config = dict(config)
        inner = serialization_lib.deserialize_keras_object(
            config.pop("inner_optimizer"), custom_objects=custom_objects
        )
        return cls(inner, **config)

    def __repr__(self):
        scale = self.initial_scale if self.dynamic_scale is None else self.dynamic_scale._value
        inner = self.inner_optimizer
        return f"<LossScaleOptimizer {self.name!r} scale={float(scale)} inner={inner!r}>"
