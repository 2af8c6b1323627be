"""`Layer`: config in `__init__`, weights in `build(input_shape)`, math in `call`.

`__call__` is the only caller of `build`, once, on the first call, when the
input shape is known. It also watches the call: which Variables were read
(through `read_variable`), which layers or Variables were created inside
`call()`, and what the layer holds where tracking cannot see. See
`minikeras.layers.tracking` for how weights are found.
"""

import functools

import numpy as np

from minikeras import config, constraints, initializers, regularizers
from minikeras.engine import tensor as engine
from minikeras.engine.tensor import Tensor, Variable
from minikeras.layers import call_checks, tracking
from minikeras.layers.call_checks import call_stack as _call_stack
from minikeras.layers.call_checks import reads as _reads
from minikeras.layers.input_layer import SymbolicTensor, symbolic_call
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["Layer", "unique_name"]

_name_counts = {}


def unique_name(base):
    """Returns `base`, then `base_1`, `base_2`, ... on later calls (Keras's naming).

    Args:
        base: the name wanted, usually the snake_case class name.

    Returns:
        A name not handed out before in this process.

    Example:
        >>> unique_name("doc_example"), unique_name("doc_example")
        ('doc_example', 'doc_example_1')
    """
    count = _name_counts.get(base, 0)
    _name_counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


# Numbers the outermost calls. A layer keeps the number of its latest call, and each
# loss given to add_loss() the number current when it came; `losses` counts those
# added during or after the latest call. That is Keras's "added losses are cleared
# at the start of each outermost call", without walking every sub-layer at each call.
_call_count = 0


def _shape_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [_shape_of(x) for x in inputs]
    if isinstance(inputs, dict):
        return {key: _shape_of(x) for key, x in inputs.items()}
    return tuple(inputs.shape)


class Layer:
    """The base class of layers and models.

    Subclasses put configuration in `__init__`, create weights in
    `build(input_shape)` with `add_weight`, and compute in `call(inputs)`.
    Weights, layers and models held in attributes, lists, dicts and tuples are
    tracked; whatever escapes tracking is reported with a `TrackingWarning`.

    Masks (Keras's mechanism, explicit): a layer may say which time steps of its
    outputs are padding with `compute_mask(inputs, mask)`; `Embedding(mask_zero=True)`
    does. `Sequential` and functional models pass each layer's output mask to the
    next layer as `mask=`, which `__call__` hands to `call` only if `call` names a
    `mask` argument. By default `compute_mask` returns None (the mask stops here),
    or the incoming mask unchanged if the class sets `supports_masking = True`.
    Called by hand, pass the mask yourself: `lstm(x, mask=embed.compute_mask(ids))`.

    Args:
        name: a unique name; by default the snake_case class name, numbered.
        trainable: whether the layer's weights are trained.
        dtype: the dtype of weights and computation, `config.floatx()` by default.
        activity_regularizer: None, or a regularizer (a name, a config dict or a
            callable) of the outputs: its penalty joins `losses` at each call.

    Example:
        >>> class Scale(Layer):
        ...     def build(self, input_shape):
        ...         self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        ...     def call(self, inputs):
        ...         return inputs * self.scale
        >>> layer = Scale()
        >>> layer(np.ones((2, 3))).shape, len(layer.weights)
        ((2, 3), 1)
    """

    # Bookkeeping attributes that tracking never walks.
    _untracked_attributes = frozenset(
        {"_added_weights", "_frozen", "_warned", "_tracked_ids", "_constants", "_untracked_seen",
         "_build_input_shape", "_losses", "_callable_losses"}
    )  # fmt: skip
    # Check that later calls keep the first call's last axis when a weight's shape uses
    # it (off for models and for layers whose last input axis may vary, such as an
    # Embedding's sequence length).
    _fixed_last_axis = True
    # Whether the default compute_mask passes an incoming mask on unchanged.
    supports_masking = False

    def __init_subclass__(cls, **kwargs):
        # A user's build() need not call super().build(): calling it, directly or
        # through __call__, marks the layer built, as in Keras.
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            user_build = cls.__dict__["build"]

            @functools.wraps(user_build)
            def build(self, input_shape, *args, **kwargs):
                user_build(self, input_shape, *args, **kwargs)
                self.built = True
                # Saving records it, so that loading can build the layer the same way. A
                # build of several shapes (Keras's MultiHeadAttention) records its own.
                if not (args or kwargs):
                    object.__setattr__(self, "_build_input_shape", input_shape)

            cls.build = build

    def __init__(self, name=None, trainable=True, dtype=None, **kwargs):
        input_shape = kwargs.pop("input_shape", None)
        if "input_dim" in kwargs:
            input_shape = (kwargs.pop("input_dim"),)
        kwargs.pop("batch_input_shape", None)
        # Every layer takes it, as in Keras 3: a penalty on its outputs, added at each call.
        activity_regularizer = regularizers.get(kwargs.pop("activity_regularizer", None))
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments {sorted(kwargs)}")
        setter = object.__setattr__
        setter(self, "_added_weights", [])
        setter(self, "_frozen", [])
        setter(self, "_warned", set())
        setter(self, "_tracked_ids", None)
        setter(self, "_constants", set())
        setter(self, "_untracked_seen", {})
        setter(self, "_losses", [])  # (call number, loss) pairs given to add_loss()
        setter(self, "_callable_losses", [])  # callables given to add_loss() outside call()
        setter(self, "_latest_call", 0)  # the number of the outermost call it last took part in
        self.activity_regularizer = activity_regularizer
        self.name = name or unique_name(_snake_case(type(self).__name__))
        self.built = False
        self._trainable = bool(trainable)
        self.dtype = config.standardize_dtype(dtype)
        self._input_shape_arg = None if input_shape is None else (None, *input_shape)
        self._last_axis = None
        self._output_shape = None
        self._first_call_done = False
        call_checks.warn_if_created_in_call(self)

    def __setattr__(self, name, value):
        if "_added_weights" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: call super().__init__() at the start of __init__, "
                f"before assigning attributes (assigning {name!r})"
            )
        self._release_added_weight(name, value)
        object.__setattr__(self, name, value)
        if isinstance(value, (Variable, Layer, list, tuple, dict)):
            object.__setattr__(self, "_tracked_ids", None)

    def __delattr__(self, name):
        self._release_added_weight(name, None)
        object.__delattr__(self, name)
        object.__setattr__(self, "_tracked_ids", None)

    def _release_added_weight(self, name, new_value):
        # An add_weight() Variable is the layer's even if never assigned; once the
        # attribute that held it lets go, it is untracked (unless reachable elsewhere).
        old = self.__dict__.get(name)
        if isinstance(old, Variable) and old is not new_value:
            self._added_weights[:] = [w for w in self._added_weights if w is not old]

    # ------------------------------------------------------------ properties

    @property
    def trainable(self):
        """Whether the layer is trained; setting it (un)freezes every layer below."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        value = bool(value)
        for layer in [self, *tracking.tracked_layers(self)]:
            layer._set_trainable(value)

    def _set_trainable(self, value):
        object.__setattr__(self, "_trainable", value)
        own = [v for path, owner, v in tracking.walk(self) if owner is self and "/" not in path]
        if not value:
            for variable in own:
                if isinstance(variable, Variable) and variable.trainable:
                    variable.trainable = False
                    self._frozen.append(variable)
        else:
            for variable in self._frozen:
                variable.trainable = True
            self._frozen.clear()

    @property
    def weights(self):
        """Every Variable the layer tracks, in creation order, each once."""
        return tracking.tracked_weights(self)

    @property
    def variables(self):
        """Same as `weights`."""
        return self.weights

    @property
    def trainable_weights(self):
        """The tracked Variables that training updates."""
        return [w for w in self.weights if w.trainable]

    @property
    def trainable_variables(self):
        """Same as `trainable_weights`."""
        return self.trainable_weights

    @property
    def non_trainable_weights(self):
        """The tracked Variables that training leaves alone."""
        return [w for w in self.weights if not w.trainable]

    @property
    def non_trainable_variables(self):
        """Same as `non_trainable_weights`."""
        return self.non_trainable_weights

    @property
    def layers(self):
        """The layers this layer holds, directly or nested."""
        return tracking.tracked_layers(self)

    # ------------------------------------------------------------- lifecycle

    def build(self, input_shape):
        """Creates the weights, once the input shape is known. Marks the layer built.

        Override it to call `add_weight`; `super().build(input_shape)` is allowed.

        Args:
            input_shape: a tuple with `None` for the batch axis (a list of
                tuples for several inputs).

        Returns:
            None.

        Example:
            >>> layer = Layer()
            >>> layer.build((None, 3)); layer.built
            True
        """
        self.built = True

    def call(self, inputs, *args, **kwargs):
        """The forward pass. The default returns `inputs` unchanged.

        Args:
            inputs: a Tensor or a structure of Tensors.
            *args: further arguments given to `__call__`.
            **kwargs: keyword arguments given to `__call__` (`training` if
                the signature accepts it).

        Returns:
            The outputs.

        Example:
            >>> Layer()(np.ones(2)).numpy()
            array([1., 1.], dtype=float32)
        """
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        if type(inputs) is not Tensor:  # the common case skips the structure checks
            if _contains(inputs, SymbolicTensor):
                return symbolic_call(self, inputs, args, kwargs)
            inputs = self._convert_inputs(inputs)
        elif inputs.dtype != self.dtype and inputs.dtype.kind == "f":
            inputs = self._convert_inputs(inputs)
        training = kwargs.pop("training", None)
        mask = kwargs.pop("mask", None)
        if training is None and _call_stack:
            training = _call_stack[-1].training
        self._start_call()
        if not self.built:
            self._build_on_first_call(inputs)
        elif self._last_axis is not None:
            self._check_last_axis(inputs)
        if training is not None and call_checks.accepts(self.call, "training"):
            kwargs["training"] = training
        if mask is not None and call_checks.names_argument(self.call, "mask"):
            kwargs["mask"] = mask
        frame = call_checks.Frame(self, "call", training)
        outermost = not _call_stack
        if outermost:
            _reads.clear()
            engine.add_read_observer(call_checks.observe_read)
        _call_stack.append(frame)
        try:
            outputs = self.call(inputs, *args, **kwargs)
        finally:
            _call_stack.pop()
            if outermost:
                engine.remove_read_observer(call_checks.observe_read)
        if outermost and _reads:
            call_checks.check_reads(self)
        if self.activity_regularizer is not None:
            for output in _tensors_in(outputs):
                self.add_loss(self.activity_regularizer(output))
        if not self._first_call_done:
            self._after_first_call(inputs)
        # For summary(), from the latest call: a Sequential's output changes with add/pop.
        if type(outputs) is Tensor:
            shape = outputs.shape
        else:
            shape = _shape_of(outputs) if _is_tensor_tree(outputs) else None
        object.__setattr__(self, "_output_shape", shape)
        return outputs

    def _start_call(self):
        """Numbers this call (a new number if outermost); forgets losses of earlier calls."""
        global _call_count
        if not _call_stack:
            _call_count += 1
        object.__setattr__(self, "_latest_call", _call_count)
        if self._losses and self._losses[0][0] < _call_count:
            self._losses[:] = [entry for entry in self._losses if entry[0] >= _call_count]

    def _convert_inputs(self, inputs):
        if isinstance(inputs, Tensor):
            value = inputs
        elif isinstance(inputs, (list, tuple)) and any(
            isinstance(x, (Tensor, np.ndarray)) for x in inputs
        ):
            return type(inputs)(self._convert_inputs(x) for x in inputs)
        elif isinstance(inputs, dict):
            return {key: self._convert_inputs(x) for key, x in inputs.items()}
        else:
            value = Tensor(inputs)
        if value.dtype.kind == "f" and value.dtype != self.dtype:
            from minikeras import ops

            value = ops.cast(value, self.dtype)
        return value

    def _build_on_first_call(self, inputs):
        input_shape = _shape_of(inputs)
        before = dict(vars(self))
        _call_stack.append(call_checks.Frame(self, "build", None))
        try:
            self.build(input_shape)
        finally:
            _call_stack.pop()
        self.built = True
        call_checks.check_build_attributes(self, before)

    def _after_first_call(self, inputs):
        self._first_call_done = True
        if self._fixed_last_axis and isinstance(inputs, Tensor) and inputs.ndim:
            # Fixed only if a weight was shaped by it: a scalar gain fits any last axis.
            size = inputs.shape[-1]
            if any(size in w.shape for w in tracking.tracked_weights(self)):
                self._last_axis = size
        if not _call_stack:
            call_checks.warn_untrackable(self)

    def _check_last_axis(self, inputs):
        if isinstance(inputs, Tensor) and inputs.shape[-1:] != (self._last_axis,):
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expected inputs with last axis "
                f"{self._last_axis}, got shape {inputs.shape}"
            )

    # ---------------------------------------------------------------- losses

    @property
    def losses(self):
        """The losses training adds to the compiled loss: `add_loss`'s and the regularizers'.

        Collected over this layer and every layer it tracks: the losses added
        during (or since) this layer's latest call, the callables added outside
        `call()` (evaluated now), then `regularizer(weight)` for every tracked
        weight that has a regularizer, from its current value (so inside a
        `GradientTape` the penalties are differentiable). A frozen weight's
        penalty is included too (as in tf.keras; Keras 3 skips it): it adds to
        the loss, but the weight does not move.

        Returns:
            A list of Tensors (scalars, unless a layer added another shape).

        Example:
            >>> from minikeras.layers import Dense
            >>> layer = Dense(2, kernel_initializer="ones", kernel_regularizer="l2")
            >>> _ = layer(np.ones((1, 3)))
            >>> [round(float(loss), 6) for loss in layer.losses]  # 0.01 * sum(square(kernel))
            [0.06]
        """
        return self._gather_losses(self._loss_sources())

    def add_loss(self, loss):
        """Adds a loss to `losses`, which `fit` adds to the compiled loss.

        Inside `call()`, the usual place, give a Tensor computed from the
        inputs or the weights. As in Keras, the losses added in `call()` are
        forgotten at the start of each outermost call, so a training step
        counts each once and nothing accumulates from step to step. Outside
        `call()`, give a zero-argument callable such as
        `lambda: ops.mean(layer.kernel)`: it is kept, and evaluated each time
        `losses` is read (a callable given inside `call()` is evaluated lazily
        too, but counts for that call only).

        Args:
            loss: a Tensor (`fit` sums it to a scalar), a number, or a
                zero-argument callable returning one.

        Returns:
            None.

        Raises:
            ValueError: for anything else.

        Example:
            >>> class Penalized(Layer):
            ...     def call(self, inputs):
            ...         self.add_loss(0.5 * ops.sum(inputs))
            ...         return inputs
            >>> layer = Penalized()
            >>> _ = layer(np.ones((2, 2))); _ = layer(np.ones((2, 2)))
            >>> [float(loss) for loss in layer.losses]  # the latest call's only
            [2.0]
        """
        if callable(loss):
            if not _call_stack:
                self._callable_losses.append(loss)
                return
        elif isinstance(loss, (np.ndarray, np.generic, int, float)) and not isinstance(loss, bool):
            loss = Tensor(loss)
        elif not isinstance(loss, Tensor):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.add_loss: expected a Tensor, a number or "
                f"a zero-argument callable, got {loss!r:.100} of type {type(loss).__name__}"
            )
        self._losses.append((_call_count, loss))

    def _loss_sources(self):
        """The layers whose added losses count, and the tracked weights with a regularizer.

        `fit` finds them once, not at every step: the walk costs tens of microseconds.
        """
        return self._training_sources()[1]

    def _training_sources(self):
        """`(trainable_weights, _loss_sources())`, from one walk over what this layer tracks."""
        layers, weights = [self], []
        for _, _, value in tracking.walk(self):
            (weights if isinstance(value, Variable) else layers).append(value)
        weights.sort(key=lambda variable: variable._index)
        regularized = [variable for variable in weights if variable.regularizer is not None]
        return [w for w in weights if w.trainable], (layers, regularized)

    def _gather_losses(self, sources):
        """`losses`, from what `_loss_sources` found."""
        layers, regularized = sources
        since = self._latest_call
        losses = []
        for layer in layers:
            losses.extend(_as_loss(loss) for number, loss in layer._losses if number >= since)
            losses.extend(_as_loss(loss) for loss in layer._callable_losses)
        losses.extend(_as_loss(variable.regularizer(variable)) for variable in regularized)
        return losses

    # --------------------------------------------------------------- weights

    def add_weight(self, *args, **kwargs):
        """Creates a weight of this layer and tracks it.

        Accepts the Keras 3 form and the TensorFlow 2 form (name first):
        `add_weight(shape=(5, 3), initializer="random_normal", trainable=True)` or
        `add_weight("kernel", shape=[5, 3], dtype="float32", initializer=...)`.

        Args:
            *args: `shape` first (Keras 3), or `name` then `shape` (TF 2).
            **kwargs: `shape`, `initializer` (default `"glorot_uniform"`; pass
                `"zeros"` for a bias), `dtype`, `trainable` (default True),
                `regularizer`, `constraint` and `name`.

        Returns:
            The new `Variable`.

        Raises:
            TypeError: for unknown arguments.
            ValueError: for a missing shape.

        Example:
            >>> layer = Layer()
            >>> w = layer.add_weight("w", shape=(2, 3), initializer="zeros")
            >>> w.shape, layer.weights[0] is w
            ((2, 3), True)
        """
        # The positional orders of tf.keras (name first) and of Keras 3.
        if args and isinstance(args[0], str):
            names = ("name", "shape", "dtype", "initializer", "regularizer", "trainable")
        else:
            names = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer")
        if len(args) > len(names):
            raise TypeError(f"add_weight: too many positional arguments ({len(args)})")
        for key, value in zip(names, args):
            if key in kwargs:
                raise TypeError(f"add_weight: got {key!r} twice")
            kwargs[key] = value
        known = {"name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint"}
        known |= {"autocast", "aggregation", "synchronization", "use_resource"}
        unknown = set(kwargs) - known
        if unknown:
            raise TypeError(f"add_weight: unexpected arguments {sorted(unknown)}")
        shape = kwargs.get("shape")
        if shape is None:
            shape = ()
        shape = tuple(int(s) for s in (shape if isinstance(shape, (list, tuple)) else (shape,)))
        name = kwargs.get("name") or f"weight_{len(self._added_weights)}"
        dtype = config.standardize_dtype(kwargs.get("dtype") or self.dtype)
        initializer = initializers.get(kwargs.get("initializer") or "glorot_uniform")
        trainable = kwargs.get("trainable")
        trainable = True if trainable is None else bool(trainable)
        variable = Variable(initializer, shape=shape, dtype=dtype, trainable=trainable, name=name)
        variable.path = f"{self.name}/{name}"
        variable.regularizer = regularizers.get(kwargs.get("regularizer"))
        variable.constraint = constraints.get(kwargs.get("constraint"))
        if not self._trainable and trainable:
            variable.trainable = False
            self._frozen.append(variable)
        self._added_weights.append(variable)
        object.__setattr__(self, "_tracked_ids", None)
        return variable

    add_variable = add_weight

    def add_constant(self, name, value):
        """Stores an array on the layer as a constant on purpose (not a weight).

        `build()` storing a plain float array is flagged, since a weight was
        probably meant; this declares that it is not.

        Args:
            name: the attribute name.
            value: the array-like constant.

        Returns:
            The constant, as a Tensor.

        Example:
            >>> layer = Layer()
            >>> layer.add_constant("table", [0.5, 1.5]).numpy()
            array([0.5, 1.5], dtype=float32)
        """
        self._constants.add(name)
        constant = value if isinstance(value, Tensor) else Tensor(value)
        setattr(self, name, constant)
        return constant

    def count_params(self):
        """The number of scalars in the layer's weights.

        Returns:
            An int.

        Raises:
            ValueError: if the layer is not built yet.

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(4); d.build((None, 3)); d.count_params()
            16
        """
        if not self.built:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is not built yet, so it has no weights "
                "to count: call it on data or call build(input_shape) first"
            )
        return int(sum(int(np.prod(w.shape)) for w in self.weights))

    def get_weights(self):
        """The weights' values as numpy arrays, in `weights` order.

        Returns:
            A list of numpy arrays (copies).

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(2); d.build((None, 3))
            >>> [w.shape for w in d.get_weights()]
            [(3, 2), (2,)]
        """
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights):
        """Sets every weight from a list of arrays, in `weights` order.

        Everything is checked before anything is assigned.

        Args:
            weights: a list of array-likes, one per weight, of matching shapes.

        Returns:
            None.

        Raises:
            ValueError: if the count or a shape does not match (all are listed).

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(2); d.build((None, 3))
            >>> d.set_weights([np.ones((3, 2)), np.zeros(2)])
            >>> float(d.kernel.numpy().sum())
            6.0
        """
        own = self.weights
        weights = list(weights)
        if len(weights) != len(own):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.set_weights: expected {len(own)} arrays "
                f"({', '.join(w.name for w in own)}), got {len(weights)}"
            )
        arrays, problems = [], []
        for variable, value in zip(own, weights):
            array = np.asarray(value)
            if array.shape != variable.shape:
                problems.append(
                    f"{variable.name}: expected shape {variable.shape}, got {array.shape}"
                )
                continue
            # Convert now: a value that cannot become the weight's dtype must fail before
            # any weight is assigned.
            try:
                arrays.append(array.astype(variable.dtype))
            except (TypeError, ValueError):
                problems.append(
                    f"{variable.name}: cannot convert {array.dtype} values to {variable.dtype}"
                )
        if problems:
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.set_weights: " + "; ".join(problems)
            )
        for variable, array in zip(own, arrays):
            variable.assign(array)

    # ---------------------------------------------------------------- config

    def get_config(self):
        """The arguments that rebuild this layer with `from_config`.

        Returns:
            A JSON-friendly dict (with `activity_regularizer` only if one is set).

        Example:
            >>> Layer(name="x").get_config()
            {'name': 'x', 'trainable': True, 'dtype': 'float32'}
        """
        base = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self.activity_regularizer is not None:
            base["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        return base

    @classmethod
    def from_config(cls, config):
        """Makes a layer from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A new, unbuilt layer.

        Example:
            >>> Layer.from_config({"name": "y"}).name
            'y'
        """
        return cls(**config)

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's outputs, given its inputs and their mask.

        Models call it after each layer, to give the next layer `mask=`. The
        default passes `mask` on if `supports_masking` is True, else returns
        None; layers that make masks (`Embedding`) or change them (an RNN
        without `return_sequences`) override it.

        Args:
            inputs: the inputs the layer was called on.
            mask: the inputs' mask, or None.

        Returns:
            A boolean mask (array or Tensor), a structure of them, or None.

        Example:
            >>> Layer().compute_mask(np.ones((2, 3)), np.array([[True, False, True]] * 2)) is None
            True
        """
        return mask if self.supports_masking else None

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape`, found by a dry call on zeros.

        Args:
            input_shape: a tuple; `None` (the batch axis) is taken as 1.

        Returns:
            The output shape, with `None` for the batch axis.

        Example:
            >>> Layer().compute_output_shape((None, 3))
            (None, 3)
        """
        concrete = tuple(1 if s is None else s for s in input_shape)
        outputs = self(np.zeros(concrete, dtype=self.dtype))
        return (
            (None, *outputs.shape[1:]) if input_shape and input_shape[0] is None else outputs.shape
        )

    def tracking_report(self, print_report=False):
        """One row per weight: attribute path, owner, shape, dtype, trainable.

        Also lists the untracked Variables seen in forward passes.

        Args:
            print_report: also print the table.

        Returns:
            A `TrackingReport`.

        Example:
            >>> from minikeras.layers import Dense
            >>> d = Dense(2); d.build((None, 3))
            >>> [row.path for row in d.tracking_report().rows]
            ['kernel', 'bias']
        """
        from minikeras.layers.report import TrackingReport

        report = TrackingReport.of(self)
        if print_report:
            print(report)
        return report

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} built={self.built}>"


def _contains(structure, kind):
    if isinstance(structure, kind):
        return True
    if isinstance(structure, (list, tuple)):
        return any(_contains(x, kind) for x in structure)
    if isinstance(structure, dict):
        return any(_contains(x, kind) for x in structure.values())
    return False


def _as_loss(loss):
    """A loss as a Tensor: a callable is evaluated now, a number converted."""
    if callable(loss):
        loss = loss()
    return loss if isinstance(loss, Tensor) else Tensor(loss)


def _tensors_in(structure):
    """The Tensors of a Tensor or a (nested) list, tuple or dict of them, in order."""
    if isinstance(structure, Tensor):
        yield structure
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            yield from _tensors_in(item)
    elif isinstance(structure, dict):
        for item in structure.values():
            yield from _tensors_in(item)


def _is_tensor_tree(structure):
    if isinstance(structure, Tensor):
        return True
    if isinstance(structure, (list, tuple)):
        return all(_is_tensor_tree(x) for x in structure)
    return False
