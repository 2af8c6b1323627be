"""`OptimizerState`: the variables an optimizer keeps and the contract of its update rule.

A subclass writes two methods, as in Keras 3: `build(variables)`, which
makes its slot variables with `add_variable_from_reference`, and
`update_step(gradient, variable, learning_rate)`, which applies its rule to
one variable with `self.assign`, `self.assign_add` and `self.assign_sub`.
Those write in place when nothing else holds the array (see `_buffers.py`),
so a user's rule needs to know nothing about buffers.

The built-in optimizers also define `_fused_step`, a private fast path that
computes the same rule with numpy ufuncs writing into arrays made once
(`out=`). A class that overrides `update_step` leaves that fast path and
runs its own rule, traced once per variable and then replayed (`_traced.py`).
"""

from minikeras import initializers
from minikeras.engine.variable import Variable
from minikeras.optimizers._apply import label
from minikeras.optimizers._buffers import UpdateBuffers

__all__ = ["OptimizerState"]


class OptimizerState:
    """The base of `Optimizer`: `iterations`, the slots, and the update contract.

    A subclass whose `update_step` treats every element alike may say so
    with `elementwise_rule = True` (a minikeras extension; Keras has none):
    the base then runs it once on all its small variables packed together,
    which on small weights is several times faster, and gives the same
    numbers. Say it only if every element of the rule's result depends on
    the same element of the gradient, the variable and its slots, and on
    numbers common to all variables (the learning rate, `iterations`, the
    hyperparameters); not on a norm, a mean, the variable's shape, name or
    path. The rule must find its slots with `self._get_variable_index(variable)`
    in lists made with `add_variable_from_reference` (or
    `add_optimizer_variables`); an optimizer that also makes state with
    `add_variable` is never packed. A subclass that writes its own
    `update_step` does not inherit the declaration. See `_packed.py`.

    Args:
        name: the optimizer's name, which prefixes the paths of its variables.

    Example:
        >>> class Momentum(mk.optimizers.Optimizer):
        ...     def build(self, variables):
        ...         super().build(variables)
        ...         self.velocities = self.add_optimizer_variables(variables, "velocity")
        ...     def update_step(self, gradient, variable, learning_rate):
        ...         velocity = self.velocities[self._get_variable_index(variable)]
        ...         self.assign(velocity, 0.9 * velocity - learning_rate * gradient)
        ...         self.assign_add(variable, velocity)
        >>> w = mk.Variable([1.0], name="w")
        >>> optimizer = Momentum(learning_rate=0.1)
        >>> for _ in range(2):
        ...     optimizer.apply([np.array([1.0])], [w])
        >>> w.numpy()  # 1 - 0.1, then - (0.9 * 0.1 + 0.1)
        array([0.71], dtype=float32)
        >>> [v.name for v in optimizer.variables]
        ['iteration', 'learning_rate', 'w_velocity']
    """

    # Its Variables (`iterations`, slots) are its own, never a layer's weights: a
    # model holding an optimizer in an attribute (a GAN's `d_optimizer`) is fine.
    _owns_its_variables = True

    def __init__(self, name):
        self.name = name
        # int32, as Keras's `dtype="int"` on every backend but TensorFlow (int64 there).
        self._iterations = Variable(0, dtype="int32", trainable=False, name="iteration")
        self._iterations.path = f"{name}/iteration"
        self._variables = [self._iterations]
        self._leading = 1  # variables made before `build` (`iterations`, a learning rate)
        self.built = False
        self._trainable_variables = []
        self._trainable_variables_indices = {}  # id(variable) -> its index in the lists of state
        self._slots = None  # per variable, its slots in build order (None outside `build`)
        self._buffers = UpdateBuffers(0)
        self._packed_rule, self._packed_checked = None, False  # see `elementwise_rule`

    def __getstate__(self):
        # A pickled or deep-copied optimizer keeps its Variables (their values, as they
        # are now) and leaves behind what only speeds its updates up: the spares,
        # scratch and packed arrays, whose slots and values are views of each other
        # (copies are not) and whose maps are keyed by `id`. The copy makes them anew.
        state = dict(self.__dict__)
        state["_buffers"] = UpdateBuffers(len(self._trainable_variables))
        state["_packed_rule"], state["_packed_checked"] = None, False
        state.pop("_rule_runner", None)
        state.pop("_trainable_variables_indices", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._trainable_variables_indices = {
            id(variable): index for index, variable in enumerate(self._trainable_variables)
        }

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A class that writes its own rule runs it, not a built-in's fast path.
        if "update_step" in cls.__dict__ and "_fused_step" not in cls.__dict__:
            cls._fused_step = None
        # The elementwise declaration is about one rule: a new rule must make its own.
        if "update_step" in cls.__dict__ and "elementwise_rule" not in cls.__dict__:
            cls.elementwise_rule = False
        # So is the plain-descent lane, taken inside `apply`: a class with a rule, constants
        # or an `apply` of its own must declare its own.
        own = ("update_step", "_fused_step", "_step_constants", "apply")
        if any(name in cls.__dict__ for name in own) and "_descent_lane" not in cls.__dict__:
            cls._descent_lane = None

    @property
    def iterations(self):
        """The number of updates applied so far: an int32 non-trainable Variable.

        It is named `"iteration"` and is int32, as Keras 3's on its JAX, torch
        and numpy backends (int64 on TensorFlow).

        Example:
            >>> iterations = mk.optimizers.SGD().iterations
            >>> iterations.name, str(iterations.dtype)
            ('iteration', 'int32')
        """
        return self._iterations

    @property
    def variables(self):
        """The optimizer's state: `iterations`, the learning rate, then the slots in build order.

        As in Keras 3: the iteration count (a Variable named `"iteration"`),
        then a float learning rate's Variable (`"learning_rate"`; none for a
        schedule or callable), then with `use_ema` the moving averages, then
        the slots.

        Example:
            >>> optimizer = mk.optimizers.Adam()
            >>> optimizer.apply([np.ones(2)], [mk.Variable([0.0, 0.0], name="w")])
            >>> [variable.name for variable in optimizer.variables]
            ['iteration', 'learning_rate', 'w_momentum', 'w_velocity']
        """
        return list(self._variables)

    def build(self, variables):
        """Creates the state for `variables`; the first `apply` calls it.

        A subclass calls `super().build(variables)` first, then makes its
        slots with `add_variable_from_reference`.

        Args:
            variables: the floating-point Variables this optimizer will update.

        Raises:
            ValueError: if an item is not a floating Variable, or appears twice.

        Example:
            >>> optimizer = mk.optimizers.SGD(momentum=0.9)
            >>> optimizer.build([mk.Variable([1.0], name="w")])
            >>> [variable.name for variable in optimizer.variables]
            ['iteration', 'learning_rate', 'w_momentum']
        """
        variables = list(variables)
        indices = {}
        for index, variable in enumerate(variables):
            if not isinstance(variable, Variable) or variable.dtype.kind != "f":
                kind = getattr(variable, "dtype", type(variable).__name__)
                raise ValueError(
                    f"Optimizer {self.name!r} can update only floating-point Variables, got "
                    f"{label(variable)!r} of {kind}"
                )
            if id(variable) in indices:
                raise ValueError(
                    f"Optimizer {self.name!r}: variable {label(variable)!r} appears twice in "
                    "the variable list"
                )
            indices[id(variable)] = index
        self._trainable_variables = variables
        self._trainable_variables_indices = indices
        self._slots = [[] for _ in variables]
        self._buffers = UpdateBuffers(len(variables))
        self._packed_rule, self._packed_checked = None, False
        self._rule_runner = None  # (a traced rule's programs and packing were of the old state)
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
        """Creates a slot shaped like `reference_variable`, named after it.

        Args:
            reference_variable: the Variable the slot belongs to.
            name: what the slot is, e.g. `"momentum"`.
            initializer: an initializer or its name.

        Returns:
            The new `Variable`, named like `"dense_kernel_momentum"`.

        Example:
            >>> optimizer = mk.optimizers.SGD()
            >>> optimizer.add_variable_from_reference(mk.Variable([1.0], name="w"), "momentum").name
            'w_momentum'
        """
        prefix = label(reference_variable).replace("/", "_")
        slot = self.add_variable(
            reference_variable.shape, initializer, reference_variable.dtype, f"{prefix}_{name}"
        )
        index = self._trainable_variables_indices.get(id(reference_variable))
        if self._slots is not None and index is not None:
            self._slots[index].append(slot)
        return slot

    def add_optimizer_variables(self, variables, name, initializer="zeros"):
        """Creates one slot per item of `variables` (see `add_variable_from_reference`).

        Args:
            variables: the Variables.
            name: what the slot is, e.g. `"velocity"`.
            initializer: an initializer or its name.

        Returns:
            A list of new Variables, in the order of `variables`.

        Example:
            >>> optimizer = mk.optimizers.SGD()
            >>> len(optimizer.add_optimizer_variables([mk.Variable([1.0])], "velocity"))
            1
        """
        return [self.add_variable_from_reference(v, name, initializer) for v in variables]

    def _get_variable_index(self, variable):
        """The index of `variable` in the list the optimizer was built for (Keras's name)."""
        return self._trainable_variables_indices[id(variable)]

    # ---------------------------------------------------- writes of update_step

    def assign(self, variable, value):
        """Sets `variable` (a trained variable or a slot) to `value`.

        Written in place when nothing else holds the variable's array (see
        `_buffers.py`); earlier reads keep the value they saw.

        Args:
            variable: a `Variable`.
            value: a Tensor, numpy array or number of its shape (a scalar
                broadcasts), cast to its dtype.

        Example:
            >>> v = mk.Variable([1.0])
            >>> mk.optimizers.SGD().assign(v, [3.0])
            >>> v.numpy()
            array([3.], dtype=float32)
        """
        if self._rule_trace is not None:  # (tracing update_step: see _traced.py)
            self._rule_trace.write(variable, value, "assign")
            return
        variable.assign(value)

    def assign_add(self, variable, value):
        """Adds `value` to `variable`, as `assign` writes.

        Args:
            variable: a `Variable`.
            value: what to add.

        Example:
            >>> v = mk.Variable([1.0])
            >>> mk.optimizers.SGD().assign_add(v, [3.0])
            >>> v.numpy()
            array([4.], dtype=float32)
        """
        if self._rule_trace is not None:  # (tracing update_step: see _traced.py)
            self._rule_trace.write(variable, value, "assign_add")
            return
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        """Subtracts `value` from `variable`, as `assign` writes.

        Args:
            variable: a `Variable`.
            value: what to subtract.

        Example:
            >>> v = mk.Variable([1.0])
            >>> mk.optimizers.SGD().assign_sub(v, [3.0])
            >>> v.numpy()
            array([-2.], dtype=float32)
        """
        if self._rule_trace is not None:  # (tracing update_step: see _traced.py)
            self._rule_trace.write(variable, value, "assign_sub")
            return
        variable.assign_sub(value)

    def update_step(self, gradient, variable, learning_rate):
        """Applies the rule to one variable; what a subclass writes.

        A subclass's rule is traced on each variable's second update and
        replayed as plain numpy calls after (`_traced.py`), as Keras compiles
        it: Python code that does not touch the step's data (reading a
        hyperparameter) runs at tracing only, and the replay follows what
        the trace saw, with the new step's arrays. A rule that takes the
        data into Python (`float`, `bool`, `np.asarray`), reads or writes
        another Variable (reading `self.learning_rate` is fine: it is the
        `learning_rate` argument's value), draws random numbers or writes with `out=` stays
        eager; a change of an attribute (a counter kept on `self`) or of the
        learning rate traces it again, and changes at every step soon keep
        it eager for good. A rule with Python side effects the optimizer
        does not see (a global counter) sets `trace_update_step = False`.

        Args:
            gradient: the (clipped) gradient, a numpy array of the variable's
                dtype (under tracing, a stand-in that numpy and `mk.ops`
                treat as one). Read it; do not write into it.
            variable: the `Variable` to update (weight decay already applied).
                `self._get_variable_index(variable)` finds its slots.
            learning_rate: the learning rate of this step, a Python float
                (the value of the float32 `learning_rate` Variable, or of the
                schedule at this step), read once per update.

        Raises:
            NotImplementedError: on the base class.

        Example:
            >>> w = mk.Variable([1.0])
            >>> optimizer = mk.optimizers.SGD()
            >>> optimizer.build([w])
            >>> optimizer.update_step(np.array([1.0], np.float32), w, 0.5)
            >>> w.numpy()
            array([0.5], dtype=float32)
        """
        raise NotImplementedError(f"{type(self).__name__} must implement update_step")

    # Whether `update_step` may run once on the small variables packed (see the class docstring).
    elementwise_rule = False

    # Whether `update_step` is traced on a variable's second update and replayed after
    # (`_traced.py`); False runs it eagerly every time (a rule with Python side effects).
    trace_update_step = True
    _rule_trace = None  # the `_trace_record.Trace` while one records
    _rule_runner = None  # the `_traced.RuleRunner`, made by the first update through `update_step`

    # The built-ins' fast path (see the module docstring): `_fused_step(gradient,
    # value, out, slots, scratch, constants)` writes the new value into `out` from
    # `value` (the two may be one array); `slots` are the variable's slot arrays in
    # build order, `scratch` two arrays of its shape, `constants` `_step_constants`'s tuple.
    # It must compute `out = value + step` or `value - step` element by element, reading
    # `value` only there and writing nothing else but `out`, the slots and scratch:
    # small variables run it once, packed, on zeros (`_buffers.FlatSlots`).
    _fused_step = None

    # Whether the whole rule is `w -= learning_rate * g` (SGD without momentum):
    # `apply` (and so `apply_gradients`) then takes `_apply.descend`, a few lines.
    _descent_lane = None

    def _step_constants(self, learning_rate, step):
        """A tuple of the Python floats every `_fused_step` uses at `step` (1 on the first)."""
        return (learning_rate,)
