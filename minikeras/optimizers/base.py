"""`Optimizer`, the base class: what every optimizer does around its update rule.

A subclass writes `build` and `update_step` (see `OptimizerState`, in
`state.py`). The base owns the rest: the learning rate (a float held in a
float32 Variable, as in Keras 3, a schedule or a callable), skipping None
gradients, clipping, weight decay, the moving average of the weights (EMA),
constraints, and the iteration count; one update runs in `_apply.py`, and
any reuse of arrays in place lives in `_buffers.py`. How the learning rate
is held, set and saved is in `_learning_rate.py`.
"""

import re

from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import note_effect
from minikeras.engine.variable import Variable
from minikeras.optimizers import _clipping, _ema, schedules
from minikeras.optimizers._apply import apply_update, checked_updates, descend, label
from minikeras.optimizers._checks import NON_NEGATIVE, check_number
from minikeras.optimizers._learning_rate import (
    assign_learning_rate,
    called_rate,
    rate_to_config,
)
from minikeras.optimizers.state import OptimizerState

__all__ = ["Optimizer"]


class Optimizer(OptimizerState):
    """Base class: updates Variables from their gradients, keeping state per Variable.

    The first `apply` builds the state for the variables it is given (see
    `variables`); later calls may pass any subset of them, in any order. Each
    call does, as Keras 3 does: skip variables whose gradient is None (with a
    `TrackingWarning`), clip the gradients, decay the weights
    (`w = w - w * weight_decay * learning_rate`), run `update_step` for each
    variable, update the moving averages (`use_ema`), apply each variable's
    `constraint`, then add 1 to `iterations`.

    Subclasses implement `build` (calling `super().build` first, then making
    their slots with `add_variable_from_reference`) and `update_step`.

    Args:
        learning_rate: a float, kept in a Variable of `config.floatx()`
            (float32 unless set; see `learning_rate`), a
            `schedules.LearningRateSchedule` (called with the step,
            `iterations`), or a callable: one that takes no argument is
            called with none, as Keras calls it (`lambda: rate`); one that
            needs an argument is given the step (`lambda step: ...`).
        weight_decay: None, or a number >= 0: decoupled weight decay.
        clipnorm: None, or a number > 0: clip each gradient to this L2 norm.
        clipvalue: None, or a number > 0: clip each gradient value to
            [-clipvalue, clipvalue].
        global_clipnorm: None, or a number > 0: scale all gradients together
            so that their joint L2 norm is at most this.
        use_ema: keep an exponential moving average of each variable.
        ema_momentum: the average's momentum, in [0, 1]:
            `average = ema_momentum * average + (1 - ema_momentum) * w`.
        ema_overwrite_frequency: None, or an int >= 1: every this many steps
            the variables are overwritten with their averages.
        loss_scale_factor: None only (Keras 3's static loss scaling is not
            supported; `LossScaleOptimizer` scales dynamically).
        gradient_accumulation_steps: None only (Keras 3's gradient
            accumulation is not supported).
        name: a name (default: the class name in lower case).

    Raises:
        ValueError: if more than one of `clipnorm`, `clipvalue` and
            `global_clipnorm` is set, or for an invalid argument.
        NotImplementedError: for a `loss_scale_factor` or
            `gradient_accumulation_steps` other than None.

    Example:
        >>> class MySGD(mk.optimizers.Optimizer):
        ...     def update_step(self, gradient, variable, learning_rate):
        ...         self.assign_sub(variable, learning_rate * gradient)
        >>> w = mk.Variable([1.0, -2.0], name="w")
        >>> optimizer = MySGD(learning_rate=0.1)
        >>> for _ in range(2):
        ...     with mk.GradientTape() as tape:
        ...         loss = mk.ops.sum(w * w)
        ...     optimizer.apply(tape.gradient([loss], [w]), [w])
        >>> w.numpy(), int(optimizer.iterations.numpy())
        (array([ 0.64, -1.28], dtype=float32), 2)
    """

    def __init__(
        self,
        learning_rate,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
    ):
        owner = type(self).__name__
        for argument, value in (
            ("loss_scale_factor", loss_scale_factor),
            ("gradient_accumulation_steps", gradient_accumulation_steps),
        ):
            if value is not None:
                raise NotImplementedError(
                    f"{owner}: `{argument}` is not supported by minikeras; it must be None, "
                    f"got {value!r}"
                )
        self.loss_scale_factor = self.gradient_accumulation_steps = None
        self.clipnorm, self.clipvalue, self.global_clipnorm = _clipping.check_arguments(
            owner, clipnorm, clipvalue, global_clipnorm
        )
        self.weight_decay = (
            None
            if weight_decay is None
            else check_number(owner, "weight_decay", weight_decay, NON_NEGATIVE)
        )
        self.use_ema, self.ema_momentum, self.ema_overwrite_frequency = _ema.check_arguments(
            owner, use_ema, ema_momentum, ema_overwrite_frequency
        )
        self._averages = []  # one moving average per variable, with `use_ema`
        self._excluded, self._excluded_names = (), None  # from weight decay
        self._decayed = []  # per variable: whether weight decay applies to it
        super().__init__(name or owner.lower())
        self._learning_rate = None
        self.learning_rate = learning_rate

    @property
    def learning_rate(self):
        """The learning rate: a Variable, or a schedule's value at this step.

        As in Keras 3, a float learning rate is kept in a non-trainable
        `Variable` of `config.floatx()` (float32 unless set) named
        `"learning_rate"` (listed in `variables` after `iterations`), and this
        property returns that Variable: read it with `float(...)` or `.numpy()`,
        change it with `.assign(...)` or by setting the property. With a
        `schedules.LearningRateSchedule` or a callable, it is the value for
        the current `iterations` (see `learning_rate` in the class's Args), a
        Python float (Keras gives a backend tensor there). Setting a schedule
        or callable replaces a float rate and drops its Variable from
        `variables`, as in Keras.

        Raises:
            TypeError: when setting a number while the learning rate is a
                schedule or callable.
            ValueError: when setting something that is neither a number >= 0,
                a schedule nor a callable.

        Example:
            >>> optimizer = mk.optimizers.Adam(learning_rate=0.5)
            >>> optimizer.learning_rate.name, optimizer.learning_rate.dtype
            ('learning_rate', dtype('float32'))
            >>> optimizer.learning_rate = 0.25
            >>> float(optimizer.learning_rate)
            0.25
            >>> optimizer.learning_rate.assign(0.125).numpy()
            array(0.125, dtype=float32)
        """
        learning_rate = self._learning_rate
        if isinstance(learning_rate, Variable):
            return learning_rate
        return called_rate(self)

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        assign_learning_rate(self, learning_rate)

    def _current_learning_rate(self):
        """The learning rate of the next update as a Python float, read once per update."""
        learning_rate = self._learning_rate
        if isinstance(learning_rate, Variable):
            return float(learning_rate._value)
        return called_rate(self)

    # ------------------------------------------------------------------- state

    def build(self, variables):
        super().build(variables)
        names = self._excluded_names
        self._decayed = [
            all(v is not excluded for excluded in self._excluded)
            and not (names and names.search(v.name or ""))
            for v in self._trainable_variables
        ]
        if self.use_ema:
            # Made with add_variable, not as slots: no update rule reads them.
            self._averages = [
                self.add_variable(
                    v.shape, "zeros", v.dtype, label(v).replace("/", "_") + "_average"
                )
                for v in variables
            ]

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Leaves some variables out of weight decay; call it before the optimizer is built.

        Args:
            var_list: Variables to leave out.
            var_names: strings (regular expressions); a variable whose name
                contains a match is left out, e.g. `["bias"]`.

        Raises:
            ValueError: if the optimizer is already built.

        Example:
            >>> kernel, bias = mk.Variable([1.0], name="kernel"), mk.Variable([1.0], name="bias")
            >>> optimizer = mk.optimizers.SGD(learning_rate=0.1, weight_decay=0.5)
            >>> optimizer.exclude_from_weight_decay(var_names=["bias"])
            >>> optimizer.apply([np.zeros(1), np.zeros(1)], [kernel, bias])
            >>> kernel.numpy(), bias.numpy()  # 1 - 1 * 0.5 * 0.1, and no decay
            (array([0.95], dtype=float32), array([1.], dtype=float32))
        """
        if self.built:
            raise ValueError(
                f"Optimizer {self.name!r}: exclude_from_weight_decay() must be called before "
                "the optimizer is built (before its first apply)"
            )
        self._excluded = tuple(var_list or ())  # (the Variables: ids change in a copy)
        names = list(var_names or ())
        self._excluded_names = re.compile("|".join(names)) if names else None

    # ------------------------------------------------------------------- apply

    def apply_gradients(self, grads_and_vars):
        """Applies one update from `(gradient, variable)` pairs.

        Args:
            grads_and_vars: pairs, e.g. `zip(grads, variables)`; see `apply`.

        Returns:
            `iterations`.

        Raises:
            ValueError: as `apply` does.

        Example:
            >>> w = mk.Variable([1.0])
            >>> mk.optimizers.SGD(0.5).apply_gradients([(np.array([1.0]), w)]).numpy()
            array(1, dtype=int32)
            >>> w.numpy()
            array([0.5], dtype=float32)
        """
        grads, variables = [], []
        for grad, variable in grads_and_vars:  # (one loop, not a list and two comprehensions)
            grads.append(grad)
            variables.append(variable)
        self.apply(grads, variables)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Applies one update: each Variable moves along its gradient by the rule.

        Args:
            grads: one gradient per variable: Tensors, numpy arrays or None
                (None skips that variable, with a `TrackingWarning`).
            trainable_variables: the Variables. The first call builds the
                state for them; later calls may pass any of them, or None for
                all of them.

        Returns:
            None. When every gradient is None nothing changes, not even
            `iterations` (as in Keras).

        Raises:
            ValueError: if the numbers of gradients and variables differ, a
                variable was not in the list the optimizer was built for, or
                a gradient's shape is not its variable's. Nothing is updated then.

        Example:
            >>> w = mk.Variable([1.0, 2.0])
            >>> optimizer = mk.optimizers.SGD(learning_rate=0.1)
            >>> optimizer.apply([mk.Tensor([1.0, -1.0])], [w])
            >>> w.numpy()
            array([0.9, 2.1], dtype=float32)
        """
        if TRACING[0] and _state.effect_observers:
            note_effect(f"an update by optimizer {self.name!r}")  # (inside a traced rule)
        if (
            self._descent_lane
            and type(grads) is list
            and type(trainable_variables) is list
            and descend(self, grads, trainable_variables)
        ):
            return
        updates = checked_updates(self, list(grads), trainable_variables)
        if updates:
            apply_update(self, updates)

    def finalize_variable_values(self, var_list):
        """Sets the variables to their moving averages, with `use_ema`; else does nothing.

        Args:
            var_list: the variables the optimizer was built for, in that order.

        Raises:
            ValueError: if `var_list` is not as long as the built list.

        Example:
            >>> w = mk.Variable([0.0])
            >>> optimizer = mk.optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5)
            >>> for _ in range(2):
            ...     optimizer.apply([np.array([-1.0])], [w])
            >>> optimizer.finalize_variable_values([w])
            >>> w.numpy()  # average of 1 (first step) and 2: 0.5 * 1 + 0.5 * 2
            array([1.5], dtype=float32)
        """
        if self.use_ema:
            _ema.overwrite(var_list, self._averages, self.name)

    # ----------------------------------------------------------- serialization

    def get_config(self):
        """Returns the constructor arguments as a dict, for `from_config`.

        A float learning rate is stored as the Python float of its float32
        Variable's current value (as Keras 3 stores it: 0.1 becomes
        0.10000000149011612, which reads back as the same float32), so a rate
        a callback changed is the one saved. A schedule is stored as
        `schedules.serialize` gives it; a plain callable learning rate is
        stored as it is (not JSON).

        Returns:
            A dict.

        Example:
            >>> optimizer = mk.optimizers.SGD(0.5)
            >>> optimizer.learning_rate.assign(0.25)
            <Variable 'learning_rate' shape=() dtype=float32 trainable=False
            0.25>
            >>> optimizer.get_config()["learning_rate"]
            0.25
        """
        return {
            "name": self.name,
            "learning_rate": rate_to_config(self._learning_rate),
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": None,
            "gradient_accumulation_steps": None,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Makes an optimizer (with new state) from the dict `get_config` returned.

        Args:
            config: a dict of constructor arguments.
            custom_objects: optional dict of name -> schedule class.

        Returns:
            An optimizer of this class.

        Example:
            >>> Adam = mk.optimizers.Adam
            >>> Adam.from_config(Adam(learning_rate=0.5).get_config()).learning_rate.numpy()
            array(0.5, dtype=float32)
        """
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"], custom_objects)
        return cls(**config)

    def __repr__(self):
        rate = self._learning_rate
        rate = str(rate._value) if isinstance(rate, Variable) else repr(rate)
        return (
            f"<{type(self).__name__} {self.name!r} learning_rate={rate} "
            f"iterations={int(self._iterations._value)}>"
        )
