"""Optimizers: how gradients change the weights, with Keras 3's names and update rules.

Each optimizer's docstring writes its rule out, and its `_update_step` follows
the rule line by line with numpy ufuncs writing into arrays made once (`out=`):
float32 weights are updated in float32, with no float64 temporaries and no
allocation per step. Scalars (the learning rate, bias corrections) are Python
floats, which numpy applies without changing an array's dtype.

Design note, where new values go: reads of a Variable are snapshots (see
`Variable._update`), so a Tensor read before an update, a slice of it, or what
a persistent tape recorded keeps the value it saw. An update therefore writes
in place only into an array nothing else holds: the Variable's own array when
it is unshared (as in a training loop: a tape lets go of what it read once
`gradient` has run); otherwise the array the Variable had before the previous
update, if nothing holds that one any more; otherwise a new array.
`sys.getrefcount` says which arrays are unshared. The optimizer's own state
(moments, velocities) is updated in place, copied first if someone holds it.
"""

import math
import sys

import numpy as np

from minikeras import initializers, schedules, serialization_lib
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import Variable
from minikeras.layers import tracking
from minikeras.schedules import NON_NEGATIVE, POSITIVE, check_number

__all__ = [
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Nadam",
    "Optimizer",
    "RMSprop",
    "SGD",
    "deserialize",
    "get",
    "serialize",
]

# Rules for `check_number`, besides the ones in `schedules`.
_FRACTION = (lambda value: 0.0 <= value < 1.0, "a number in [0, 1)")
_UNIT_INTERVAL = (lambda value: 0.0 <= value <= 1.0, "a number in [0, 1]")
_LEARNING_RATE = (
    lambda value: math.isfinite(value) and value >= 0,
    "a finite number >= 0, a LearningRateSchedule or a callable of the step",
)

# sys.getrefcount of an array that exactly one object (a Variable, a list) holds,
# read the way the code below reads it: the call adds references of its own.
_held = [np.empty(0)]
_SOLE_OWNER_REFCOUNT = sys.getrefcount(_held[0])
del _held


_ONE = np.array(1, np.int64)  # the step `iterations` takes


def _writable(variable):
    """`variable`'s array, to update in place; copied first if anything else holds it."""
    if sys.getrefcount(variable._value) > _SOLE_OWNER_REFCOUNT:
        variable._value = variable._value.copy()
    return variable._value


def _update_moment(moment, target, decay, scratch):
    """`moment = moment + (target - moment) * (1 - decay)`, in place (`target` may be `scratch`)."""
    np.subtract(target, moment, out=scratch)
    scratch *= 1.0 - decay
    moment += scratch


def _label(variable):
    """How messages name a variable: its path ("dense/kernel") or its name."""
    return getattr(variable, "path", None) or getattr(variable, "name", None) or repr(variable)


def _squared_norm(gradient):
    flat = gradient.ravel()
    return float(np.dot(flat, flat))


def _scale_to_norm(gradient, norm, clip_norm):
    """`gradient * clip_norm / max(norm, clip_norm)`: a new array, or `gradient` itself."""
    if norm <= clip_norm:
        return gradient
    # A non-finite norm makes every value NaN, as in Keras, rather than hiding the problem.
    return gradient * (clip_norm / norm if math.isfinite(norm) else math.nan)


class Optimizer:
    """Base class: updates Variables from their gradients, keeping state per Variable.

    The first `apply` builds the state for the variables it is given (see
    `variables`); later calls may pass any subset of them, in any order. Each
    call does, as Keras 3 does: skip variables whose gradient is None (with a
    `TrackingWarning`), clip the gradients, decay the weights
    (`w = w - w * weight_decay * learning_rate`), apply the subclass's rule,
    add 1 to `iterations`, then apply each variable's `constraint`.

    Subclasses implement `build` (calling `super().build`, then making their
    state with `add_optimizer_variables`) and `_update_step`.

    Args:
        learning_rate: a float, a `schedules.LearningRateSchedule`, or any
            callable `learning_rate(step) -> float` of the step (`iterations`).
        weight_decay: None, or a number >= 0: decoupled weight decay.
        clipnorm: None, or a number > 0: clip each gradient to this L2 norm.
        clipvalue: None, or a number > 0: clip each gradient value to
            [-clipvalue, clipvalue].
        global_clipnorm: None, or a number > 0: scale all gradients together
            so that their joint L2 norm is at most this.
        name: a name (default: the class name in lower case).

    Raises:
        ValueError: if more than one of `clipnorm`, `clipvalue` and
            `global_clipnorm` is set, or for an invalid argument.

    Example:
        >>> w = mk.Variable([1.0, -2.0], name="w")
        >>> optimizer = mk.optimizers.SGD(learning_rate=0.1)
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
        name=None,
    ):
        owner = type(self).__name__
        clips = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
        given = [f"{key}={value!r}" for key, value in clips.items() if value is not None]
        if len(given) > 1:
            raise ValueError(
                f"{owner}: only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                f"set, got {', '.join(given)}"
            )
        for key, value in clips.items():
            setattr(self, key, None if value is None else check_number(owner, key, value, POSITIVE))
        self.weight_decay = (
            None
            if weight_decay is None
            else check_number(owner, "weight_decay", weight_decay, NON_NEGATIVE)
        )
        self.name = name or owner.lower()
        self._learning_rate = None
        self.learning_rate = learning_rate
        self._iterations = Variable(0, dtype="int64", trainable=False, name="iterations")
        self._iterations.path = f"{self.name}/iterations"
        self._variables = [self._iterations]
        self.built = False
        self._trainable_variables = []
        self._trainable_variables_indices = {}  # id(variable) -> its index in the lists of state
        self._spare_values = []  # per variable: its array before the last update, to reuse
        self._scratch_buffers = {}  # (shape, dtype) -> arrays for intermediate results

    # ----------------------------------------------------------- learning rate

    @property
    def iterations(self):
        """The number of updates applied so far: an int64 non-trainable Variable."""
        return self._iterations

    @property
    def learning_rate(self):
        """The learning rate of the next update, as a Python float.

        Settable to a float (as callbacks do), or to a schedule or callable.

        Raises:
            TypeError: when setting a number while the learning rate is a
                schedule or callable.
            ValueError: when setting something that is neither.

        Example:
            >>> optimizer = mk.optimizers.Adam(learning_rate=0.01)
            >>> optimizer.learning_rate = 0.005
            >>> optimizer.learning_rate
            0.005
        """
        learning_rate = self._learning_rate
        if callable(learning_rate):
            return float(learning_rate(int(self._iterations._value)))
        return learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if callable(learning_rate):
            self._learning_rate = learning_rate
            return
        if callable(self._learning_rate):
            raise TypeError(
                f"Optimizer {self.name!r} was created with a learning rate schedule "
                f"({self._learning_rate!r}), so its learning rate cannot be set to "
                f"{learning_rate!r}; create the optimizer with a float learning_rate "
                "to change it as training goes"
            )
        if isinstance(learning_rate, (np.ndarray, Tensor)) and np.ndim(learning_rate) == 0:
            learning_rate = float(learning_rate)
        self._learning_rate = check_number(
            type(self).__name__, "learning_rate", learning_rate, _LEARNING_RATE
        )

    # ------------------------------------------------------------------- state

    @property
    def variables(self):
        """The optimizer's state: `iterations` first, then per-variable state in build order.

        Example:
            >>> optimizer = mk.optimizers.Adam()
            >>> optimizer.apply([np.ones(2)], [mk.Variable([0.0, 0.0], name="w")])
            >>> [variable.name for variable in optimizer.variables]
            ['iterations', 'w_momentum', 'w_velocity']
        """
        return list(self._variables)

    def build(self, var_list):
        """Creates the state for `var_list`; the first `apply` calls it.

        Args:
            var_list: the floating-point Variables this optimizer will update.

        Returns:
            None.

        Raises:
            ValueError: if an item is not a floating Variable, or appears twice.

        Example:
            >>> optimizer = mk.optimizers.SGD(momentum=0.9)
            >>> optimizer.build([mk.Variable([1.0], name="w")])
            >>> [variable.name for variable in optimizer.variables]
            ['iterations', 'w_momentum']
        """
        var_list = list(var_list)
        indices = {}
        for index, variable in enumerate(var_list):
            if not isinstance(variable, Variable) or variable.dtype.kind != "f":
                kind = getattr(variable, "dtype", type(variable).__name__)
                raise ValueError(
                    f"Optimizer {self.name!r} can update only floating-point Variables, got "
                    f"{_label(variable)!r} of {kind}"
                )
            if id(variable) in indices:
                raise ValueError(
                    f"Optimizer {self.name!r}: variable {_label(variable)!r} appears twice in "
                    "the variable list"
                )
            indices[id(variable)] = index
        self._trainable_variables = var_list
        self._trainable_variables_indices = indices
        self._spare_values = [None] * len(var_list)
        self.built = True

    def add_variable(self, shape, initializer="zeros", dtype=None, name=None):
        """Creates a non-trainable state Variable and lists it in `variables`.

        Args:
            shape: the shape.
            initializer: an initializer or its name.
            dtype: the dtype (default `config.floatx()`).
            name: the Variable's name.

        Returns:
            The new `Variable`.

        Example:
            >>> optimizer = mk.optimizers.SGD()
            >>> optimizer.add_variable((2,), name="count").numpy()
            array([0., 0.], dtype=float32)
        """
        variable = Variable(
            initializers.get(initializer), shape=shape, dtype=dtype, trainable=False, name=name
        )
        variable.path = f"{self.name}/{variable.name}"
        self._variables.append(variable)
        return variable

    def add_variable_from_reference(self, reference_variable, name, initializer="zeros"):
        """Creates state shaped like `reference_variable`, named after it.

        Args:
            reference_variable: the Variable the state belongs to.
            name: what the state is, e.g. `"momentum"`.
            initializer: an initializer or its name.

        Returns:
            The new `Variable`, named like `"dense_kernel_momentum"`.

        Example:
            >>> optimizer = mk.optimizers.SGD()
            >>> optimizer.add_variable_from_reference(mk.Variable([1.0], name="w"), "momentum").name
            'w_momentum'
        """
        prefix = _label(reference_variable).replace("/", "_")
        return self.add_variable(
            reference_variable.shape, initializer, reference_variable.dtype, f"{prefix}_{name}"
        )

    def add_optimizer_variables(self, var_list, name, initializer="zeros"):
        """Creates one state Variable per item of `var_list` (see `add_variable_from_reference`).

        Args:
            var_list: the Variables.
            name: what the state is, e.g. `"velocity"`.
            initializer: an initializer or its name.

        Returns:
            A list of new Variables, in the order of `var_list`.

        Example:
            >>> optimizer = mk.optimizers.SGD()
            >>> len(optimizer.add_optimizer_variables([mk.Variable([1.0])], "velocity"))
            1
        """
        return [
            self.add_variable_from_reference(variable, name, initializer) for variable in var_list
        ]

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
            array(1)
            >>> w.numpy()
            array([0.5], dtype=float32)
        """
        pairs = list(grads_and_vars)
        self._apply([grad for grad, _ in pairs], [variable for _, variable in pairs])
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
        self._apply(grads, trainable_variables)

    def _apply(self, grads, trainable_variables):
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    f"Optimizer {self.name!r}: pass the variables to the first apply(), "
                    "which builds the optimizer's state for them"
                )
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(
                f"Optimizer {self.name!r}: got {len(grads)} gradients for "
                f"{len(trainable_variables)} variables; pass one gradient per variable"
            )
        if not grads:
            return
        if not self.built:
            self.build(trainable_variables)
        updates = []
        for grad, variable in zip(grads, trainable_variables):
            index = self._trainable_variables_indices.get(id(variable))
            if index is None:
                raise ValueError(
                    f"Optimizer {self.name!r}: variable {_label(variable)!r} is not one of the "
                    f"{len(self._trainable_variables)} variables this optimizer was built for "
                    "(on its first apply), and it keeps state per variable. Create a new "
                    "optimizer for the new variable list."
                )
            if grad is None:
                tracking.warn(
                    f"Variable {_label(variable)!r} received no gradient (None): it does not "
                    "influence the loss and was not updated"
                )
                continue
            value = grad._value if type(grad) is Tensor else grad
            if type(value) is not np.ndarray or value.dtype != variable._value.dtype:
                value = np.asarray(grad, dtype=variable.dtype)
            grad = value
            if grad.shape != variable._value.shape:
                raise ValueError(
                    f"Optimizer {self.name!r}: the gradient for variable {_label(variable)!r} "
                    f"has shape {grad.shape}, but the variable has shape {variable.shape}"
                )
            updates.append((index, grad, variable))
        if not updates:
            return
        clipped = self._clip_gradients([grad for _, grad, _ in updates])
        learning_rate = self.learning_rate
        constants = self._step_constants(learning_rate, int(self._iterations._value) + 1)
        decay = 1.0 - self.weight_decay * learning_rate if self.weight_decay else None
        for (index, _, variable), grad in zip(updates, clipped):
            out = self._output_buffer(index, variable)
            value = variable._value
            if decay is not None:
                np.multiply(value, decay, out=out)
                value = out
            self._update_step(index, grad, value, out, constants)
            if out is not variable._value:
                self._spare_values[index] = variable._value
                variable._value = out
        self._iterations._update(np.add, _ONE, "assign_add")
        for _, _, variable in updates:
            if variable.constraint is not None:
                variable.assign(variable.constraint(variable))

    def _clip_gradients(self, grads):
        """The gradients clipped as the clipping argument says (new arrays where changed)."""
        if self.clipnorm:
            return [_scale_to_norm(g, math.sqrt(_squared_norm(g)), self.clipnorm) for g in grads]
        if self.global_clipnorm:
            norm = math.sqrt(sum(_squared_norm(g) for g in grads))
            return [_scale_to_norm(g, norm, self.global_clipnorm) for g in grads]
        if self.clipvalue:
            return [np.clip(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _output_buffer(self, index, variable):
        """The array to write the new value of `variable` into (see the module's design note)."""
        if sys.getrefcount(variable._value) <= _SOLE_OWNER_REFCOUNT:
            return variable._value
        spares = self._spare_values
        if spares[index] is None or sys.getrefcount(spares[index]) > _SOLE_OWNER_REFCOUNT:
            spares[index] = np.empty_like(variable._value)
        return spares[index]

    def _scratch(self, like, count):
        """`count` arrays shaped like `like` for intermediate results, shared per shape."""
        key = (like.shape, like.dtype)
        buffers = self._scratch_buffers.get(key)
        if buffers is None or len(buffers) < count:
            # C-ordered, as the Variables and gradients are (see `Variable`).
            buffers = self._scratch_buffers[key] = [
                np.empty(like.shape, like.dtype) for _ in range(count)
            ]
        return buffers

    def _step_constants(self, learning_rate, step):
        """The Python floats that every variable's update uses at `step` (1 on the first)."""
        return learning_rate

    def _update_step(self, index, gradient, value, out, constants):
        """Writes the new value into `out` from `value` (the two may be one array).

        Args:
            index: the variable's index in the lists of state.
            gradient: its gradient, a numpy array of its dtype (do not modify).
            value: its current value (after weight decay).
            out: where the new value goes.
            constants: what `_step_constants` returned.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement _update_step")

    # ----------------------------------------------------------- serialization

    def get_config(self):
        """Returns the constructor arguments as a dict, for `from_config`.

        A schedule is stored as `schedules.serialize` gives it; a plain callable
        learning rate is stored as it is (not JSON).

        Returns:
            A dict.

        Example:
            >>> mk.optimizers.SGD(0.1).get_config()["learning_rate"]
            0.1
        """
        learning_rate = self._learning_rate
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            learning_rate = schedules.serialize(learning_rate)
        return {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
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
            >>> Adam.from_config(Adam(learning_rate=0.01).get_config()).learning_rate
            0.01
        """
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"], custom_objects)
        return cls(**config)

    def __repr__(self):
        return (
            f"<{type(self).__name__} {self.name!r} learning_rate={self._learning_rate!r} "
            f"iterations={int(self._iterations._value)}>"
        )


class SGD(Optimizer):
    """Stochastic gradient descent, with optional (Nesterov) momentum.

        w = w - learning_rate * g                             # momentum 0

        velocity = momentum * velocity - learning_rate * g    # momentum > 0
        w = w + velocity

        velocity = momentum * velocity - learning_rate * g    # nesterov=True
        w = w + momentum * velocity - learning_rate * g

    Args:
        learning_rate: a float, schedule or callable of the step.
        momentum: a number in [0, 1]; 0 keeps no velocity.
        nesterov: use Nesterov momentum.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for `momentum` outside [0, 1], or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> optimizer = mk.optimizers.SGD(learning_rate=0.1, momentum=0.5)
        >>> for _ in range(2):
        ...     optimizer.apply([np.array([1.0])], [w])
        >>> w.numpy()  # 1 - 0.1, then - (0.5 * 0.1 + 0.1)
        array([0.75], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = check_number("SGD", "momentum", momentum, _UNIT_INTERVAL)
        self.nesterov = bool(nesterov)

    def build(self, var_list):
        super().build(var_list)
        self.momentums = []
        if self.momentum != 0:
            self.momentums = self.add_optimizer_variables(var_list, "momentum")

    def _update_step(self, index, gradient, value, out, learning_rate):
        scaled_gradient, step = self._scratch(value, 2)
        np.multiply(gradient, learning_rate, out=scaled_gradient)
        if not self.momentums:
            np.subtract(value, scaled_gradient, out=out)
            return
        velocity = _writable(self.momentums[index])
        np.multiply(velocity, self.momentum, out=velocity)
        np.subtract(velocity, scaled_gradient, out=velocity)
        if self.nesterov:
            np.multiply(velocity, self.momentum, out=step)
            np.subtract(step, scaled_gradient, out=step)
            np.add(value, step, out=out)
        else:
            np.add(value, velocity, out=out)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class _MomentEstimator(Optimizer):
    """What Adam, Adamax and Nadam share: the arguments `beta_1`, `beta_2` and `epsilon`."""

    def __init__(self, learning_rate, beta_1, beta_2, epsilon, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = type(self).__name__
        self.beta_1 = check_number(owner, "beta_1", beta_1, _FRACTION)
        self.beta_2 = check_number(owner, "beta_2", beta_2, _FRACTION)
        self.epsilon = check_number(owner, "epsilon", epsilon, NON_NEGATIVE)

    def get_config(self):
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
        }


class Adam(_MomentEstimator):
    """Adam: steps scaled by running estimates of the gradient's first two moments.

        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        v_hat = max(v_hat, v); v = v_hat                      # amsgrad only
        alpha = learning_rate * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: a float, schedule or callable of the step.
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        amsgrad: use the maximum of past second moments (AMSGrad).
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Adam(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs
    ):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self.amsgrad = bool(amsgrad)

    def build(self, var_list):
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._velocity_hats = []
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(var_list, "velocity_hat")

    def _step_constants(self, learning_rate, step):
        return learning_rate * math.sqrt(1.0 - self.beta_2**step) / (1.0 - self.beta_1**step)

    def _update_step(self, index, gradient, value, out, alpha):
        momentum = _writable(self._momentums[index])
        velocity = _writable(self._velocities[index])
        scratch = self._scratch(value, 1)[0]
        _update_moment(momentum, gradient, self.beta_1, scratch)
        np.square(gradient, out=scratch)
        _update_moment(velocity, scratch, self.beta_2, scratch)
        if self.amsgrad:
            velocity_hat = _writable(self._velocity_hats[index])
            np.maximum(velocity_hat, velocity, out=velocity_hat)
            velocity = velocity_hat
        # The step m / (sqrt(v) + epsilon) * alpha, built in the one scratch buffer,
        # which stays in cache (a second buffer for alpha * m costs ~13% of Adam).
        np.sqrt(velocity, out=scratch)
        scratch += self.epsilon
        np.divide(momentum, scratch, out=scratch)
        scratch *= alpha
        np.subtract(value, scratch, out=out)

    def get_config(self):
        return {**super().get_config(), "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay, on by default.

        w = w - w * weight_decay * learning_rate              # then Adam's rule:
        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        v_hat = max(v_hat, v); v = v_hat                      # amsgrad only
        alpha = learning_rate * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: a float, schedule or callable of the step.
        weight_decay: a number >= 0 (not None).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        amsgrad: use the maximum of past second moments (AMSGrad).
        **kwargs: `clipnorm`, `clipvalue`, `global_clipnorm`, `name`, as for
            `Optimizer`.

    Raises:
        ValueError: if `weight_decay` is None, or as `Adam` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> mk.optimizers.AdamW(learning_rate=0.1, weight_decay=0.5).apply([np.array([1.0])], [w])
        >>> w.numpy()  # 1 * (1 - 0.5 * 0.1) - 0.1
        array([0.85], dtype=float32)
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        **kwargs,
    ):
        if weight_decay is None:
            raise ValueError("AdamW: `weight_decay` must be a number >= 0, got None")
        super().__init__(
            learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **kwargs
        )


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running root mean square of the gradient.

        velocity = rho * velocity + (1 - rho) * g^2
        average = rho * average + (1 - rho) * g               # centered only
        denominator = velocity - average^2 + epsilon          # centered
        denominator = velocity + epsilon                      # otherwise
        increment = learning_rate * g / sqrt(denominator)
        moment = momentum * moment + increment                # momentum > 0
        w = w - moment                                        # momentum > 0
        w = w - increment                                     # otherwise

    Args:
        learning_rate: a float, schedule or callable of the step.
        rho: decay of the running mean square, in [0, 1).
        momentum: a number in [0, 1]; 0 keeps no moment.
        epsilon: a number >= 0, added under the square root.
        centered: divide by the variance estimate (mean square minus the
            square of the mean) instead of the mean square.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> mk.optimizers.RMSprop(learning_rate=0.01, rho=0.75).apply([np.array([2.0])], [w])
        >>> w.numpy()  # 1 - 0.01 * 2 / sqrt(0.25 * 4)
        array([0.98], dtype=float32)
    """

    def __init__(
        self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self.rho = check_number("RMSprop", "rho", rho, _FRACTION)
        self.momentum = check_number("RMSprop", "momentum", momentum, _UNIT_INTERVAL)
        self.epsilon = check_number("RMSprop", "epsilon", epsilon, NON_NEGATIVE)
        self.centered = bool(centered)

    def build(self, var_list):
        super().build(var_list)
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._momentums = []
        if self.momentum > 0:
            self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._average_gradients = []
        if self.centered:
            self._average_gradients = self.add_optimizer_variables(var_list, "average_gradient")

    def _update_step(self, index, gradient, value, out, learning_rate):
        velocity = _writable(self._velocities[index])
        denominator = self._scratch(value, 1)[0]
        np.multiply(velocity, self.rho, out=velocity)
        np.square(gradient, out=denominator)
        denominator *= 1.0 - self.rho
        velocity += denominator
        if self.centered:
            average = _writable(self._average_gradients[index])
            np.multiply(average, self.rho, out=average)
            np.multiply(gradient, 1.0 - self.rho, out=denominator)
            average += denominator
            np.square(average, out=denominator)
            np.subtract(velocity, denominator, out=denominator)
            denominator += self.epsilon
        else:
            np.add(velocity, self.epsilon, out=denominator)
        np.sqrt(denominator, out=denominator)
        # g / denominator * learning_rate, in the one buffer (see Adam).
        increment = np.divide(gradient, denominator, out=denominator)
        increment *= learning_rate
        if self._momentums:
            moment = _writable(self._momentums[index])
            np.multiply(moment, self.momentum, out=moment)
            moment += increment
            increment = moment
        np.subtract(value, increment, out=out)

    def get_config(self):
        return {
            **super().get_config(),
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }


class Adagrad(Optimizer):
    """Adagrad: steps divided by the root of the sum of all past squared gradients.

        accumulator = accumulator + g^2           # starts at initial_accumulator_value
        w = w - learning_rate * g / sqrt(accumulator + epsilon)

    Args:
        learning_rate: a float, schedule or callable of the step.
        initial_accumulator_value: a number >= 0, the accumulators' start.
        epsilon: a number >= 0, added under the square root.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> mk.optimizers.Adagrad(learning_rate=0.1, initial_accumulator_value=0.0).apply(
        ...     [np.array([3.0])], [w]
        ... )
        >>> w.numpy()  # 1 - 0.1 * 3 / sqrt(9)
        array([0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = check_number(
            "Adagrad", "initial_accumulator_value", initial_accumulator_value, NON_NEGATIVE
        )
        self.epsilon = check_number("Adagrad", "epsilon", epsilon, NON_NEGATIVE)

    def build(self, var_list):
        super().build(var_list)
        initializer = initializers.Constant(self.initial_accumulator_value)
        self._accumulators = self.add_optimizer_variables(var_list, "accumulator", initializer)

    def _update_step(self, index, gradient, value, out, learning_rate):
        accumulator = _writable(self._accumulators[index])
        scratch = self._scratch(value, 1)[0]
        np.square(gradient, out=scratch)
        accumulator += scratch
        np.add(accumulator, self.epsilon, out=scratch)
        np.sqrt(scratch, out=scratch)
        # g / sqrt(accumulator + epsilon) * learning_rate, in the one buffer (see Adam).
        np.divide(gradient, scratch, out=scratch)
        scratch *= learning_rate
        np.subtract(value, scratch, out=out)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }


class Adamax(_MomentEstimator):
    """Adamax: Adam with the infinity norm in place of the second moment.

        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w = w - learning_rate * m / ((1 - beta_1^t) * (u + epsilon))

    Args:
        learning_rate: a float, schedule or callable of the step.
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the infinity norm, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Adamax(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def build(self, var_list):
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._norms = self.add_optimizer_variables(var_list, "norm")

    def _step_constants(self, learning_rate, step):
        return learning_rate, 1.0 - self.beta_1**step

    def _update_step(self, index, gradient, value, out, constants):
        learning_rate, bias_correction = constants
        momentum = _writable(self._momentums[index])
        norm = _writable(self._norms[index])
        scratch = self._scratch(value, 1)[0]
        _update_moment(momentum, gradient, self.beta_1, scratch)
        np.multiply(norm, self.beta_2, out=norm)
        np.abs(gradient, out=scratch)
        np.maximum(norm, scratch, out=norm)
        np.add(norm, self.epsilon, out=scratch)
        scratch *= bias_correction
        # m / denominator * learning_rate, in the one buffer (see Adam).
        np.divide(momentum, scratch, out=scratch)
        scratch *= learning_rate
        np.subtract(value, scratch, out=out)


class Nadam(_MomentEstimator):
    """Nadam: Adam with Nesterov momentum (Dozat's momentum schedule).

        t = iterations + 1
        u_t = beta_1 * (1 - 0.5 * 0.96^t)
        u_next = beta_1 * (1 - 0.5 * 0.96^(t + 1))
        u_product = u_product * u_t                   # state: the product of all u_t
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        m_hat = u_next * m / (1 - u_product * u_next) + (1 - u_t) * g / (1 - u_product)
        v_hat = v / (1 - beta_2^t)
        w = w - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

    Args:
        learning_rate: a float, schedule or callable of the step.
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `name`, as for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Nadam(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is about learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def build(self, var_list):
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        dtype = var_list[0].dtype if var_list else None
        self._u_product = self.add_variable((), "ones", dtype, "u_product")

    def _step_constants(self, learning_rate, step):
        u_t = self.beta_1 * (1.0 - 0.5 * 0.96**step)
        u_next = self.beta_1 * (1.0 - 0.5 * 0.96 ** (step + 1))
        # Once per step, before any variable's update, as Keras does.
        self._u_product.assign(float(self._u_product._value) * u_t)
        u_product = float(self._u_product._value)
        momentum_factor = u_next / (1.0 - u_product * u_next)
        gradient_factor = (1.0 - u_t) / (1.0 - u_product)
        return learning_rate, momentum_factor, gradient_factor, 1.0 - self.beta_2**step

    def _update_step(self, index, gradient, value, out, constants):
        learning_rate, momentum_factor, gradient_factor, velocity_correction = constants
        momentum = _writable(self._momentums[index])
        velocity = _writable(self._velocities[index])
        scratch, step = self._scratch(value, 2)
        _update_moment(momentum, gradient, self.beta_1, scratch)
        np.square(gradient, out=scratch)
        _update_moment(velocity, scratch, self.beta_2, scratch)
        np.multiply(momentum, momentum_factor, out=step)  # m_hat
        np.multiply(gradient, gradient_factor, out=scratch)
        step += scratch
        np.divide(velocity, velocity_correction, out=scratch)  # sqrt(v_hat) + epsilon
        np.sqrt(scratch, out=scratch)
        scratch += self.epsilon
        step *= learning_rate
        step /= scratch
        np.subtract(value, step, out=out)


_OPTIMIZERS = {
    cls.__name__.lower(): cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam)
}


def serialize(optimizer):
    """Returns `{"class_name": ..., "config": ...}`, which `deserialize` turns back.

    Args:
        optimizer: an `Optimizer`.

    Returns:
        A dict (JSON-friendly unless the learning rate is a plain callable).

    Raises:
        ValueError: for anything that is not an `Optimizer`.

    Example:
        >>> mk.optimizers.serialize(mk.optimizers.SGD(0.1))["class_name"]
        'SGD'
    """
    if not isinstance(optimizer, Optimizer):
        raise ValueError(
            "optimizers.serialize: expected an Optimizer, got "
            f"{optimizer!r} of type {type(optimizer).__name__}"
        )
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """Makes a new optimizer from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` or a name such
            as `"adam"` (any case).
        custom_objects: optional dict of class name -> Optimizer or schedule
            class, searched first.

    Returns:
        An `Optimizer`.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> mk.optimizers.deserialize(
        ...     {"class_name": "Adam", "config": {"learning_rate": 0.01}}
        ... ).learning_rate
        0.01
    """
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "optimizers.deserialize: expected a name or a dict with 'class_name' and 'config', "
            f"got {config!r}"
        )
    name = config.get("registered_name") or config["class_name"]
    cls = serialization_lib.get_registered_object(name, custom_objects) or _OPTIMIZERS.get(
        str(name).lower()
    )
    custom_objects = custom_objects or {}
    if cls is None:
        raise ValueError(f"Unknown optimizer {name!r}; known optimizers: {', '.join(_OPTIMIZERS)}")
    return cls.from_config(config.get("config") or {}, custom_objects)


def get(identifier):
    """Returns the optimizer `identifier` stands for.

    Args:
        identifier: None (returned as None, as in Keras), a name such as
            `"adam"`, a dict from `serialize`, an `Optimizer` (returned as it
            is) or an `Optimizer` class (made with its defaults).

    Returns:
        An `Optimizer`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> mk.optimizers.get("rmsprop")
        <RMSprop 'rmsprop' learning_rate=0.001 iterations=0>
    """
    if identifier is None or isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    raise ValueError(
        "optimizers.get: expected a name, a config dict or an Optimizer, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )
