"""`Layer`: config in `__init__`, weights in `build(input_shape)`, math in `call`.

`__call__` is the only caller of `build`, once, on the first call, when the
input shape is known. It also watches the call: which Variables were read
(through `read_variable`), which layers or Variables were created inside
`call()`, and what the layer holds where tracking cannot see. See
`minikeras.layers.tracking` for how weights are found.
"""

import functools

import numpy as np

from minikeras import config, regularizers
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers import auto_config, call_checks, call_helpers, call_spec, tracking
from minikeras.layers.call_helpers import contains
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.input_spec import check_input_spec
from minikeras.layers.layer_config import LayerConfig
from minikeras.layers.layer_losses import LayerLosses
from minikeras.layers.layer_shapes import LayerShapes, computed_attribute
from minikeras.layers.layer_weights import LayerWeights
from minikeras.layers.symbolic import symbolic_call
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["Layer", "computed_attribute", "unique_name"]


def unique_name(base):
    """Returns `base`, then `base_1`, `base_2`, ... on later calls (Keras's naming).

    Args:
        base: the name wanted, usually the snake_case class name.

    Returns:
        A name not handed out before in this thread's session.

    Example:
        >>> mk.layers.layer.unique_name("doc_example"), mk.layers.layer.unique_name("doc_example")
        ('doc_example', 'doc_example_1')
    """
    counts = _state.name_counts  # the thread's, reset by minikeras.utils.clear_session()
    count = counts.get(base, 0)
    counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _shape_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [_shape_of(x) for x in inputs]
    if isinstance(inputs, dict):
        return {key: _shape_of(x) for key, x in inputs.items()}
    return tuple(inputs.shape)


class Layer(LayerConfig, LayerShapes, LayerLosses, LayerWeights):
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
        >>> class Scale(mk.Layer):
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
         "_build_input_shape", "_losses", "_callable_losses", "_inbound_nodes",
         "_auto_config", "_auto_config_problem", "_spec_checked", "_build_shapes_dict",
         "_weights_cache"}
    )  # fmt: skip
    # What the built layer's weights require of its inputs, checked at each call (set in
    # build; see minikeras.layers.input_spec). None: nothing is checked.
    input_spec = None
    # Whether the default compute_mask passes an incoming mask on unchanged.
    supports_masking = False
    # Whether call() takes string (or object) arrays: the string preprocessing layers do.
    _accepts_strings = False

    def __init_subclass__(cls, **kwargs):
        # A user's build() need not call super().build(): calling it, directly or
        # through __call__, marks the layer built, as in Keras.
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            user_build = cls.__dict__["build"]

            @functools.wraps(user_build)
            def build(self, *args, **kwargs):
                user_build(self, *args, **kwargs)
                self.built = True
                # Saving records it, so that loading can build the layer the same way. A
                # build of several shapes (Keras's MultiHeadAttention) records its own.
                if len(args) + len(kwargs) == 1:
                    shape = args[0] if args else next(iter(kwargs.values()))
                    object.__setattr__(self, "_build_input_shape", shape)
                elif kwargs and not args:
                    object.__setattr__(self, "_build_shapes_dict", dict(kwargs))

            cls.build = build

    def __new__(cls, *args, **kwargs):
        layer = super().__new__(cls)
        # Keras 3's default get_config: the constructor's plain arguments (see auto_config).
        if cls.get_config is Layer.get_config or cls.get_config is _model_get_config(cls):
            config, problem = auto_config.capture_arguments(cls, args, kwargs)
            object.__setattr__(layer, "_auto_config", config)
            object.__setattr__(layer, "_auto_config_problem", problem)
        return layer

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
        setter(self, "_inbound_nodes", [])  # its calls on symbolic tensors (functional API)
        self.activity_regularizer = activity_regularizer
        self.name = name or unique_name(_snake_case(type(self).__name__))
        self.built = False
        self._trainable = bool(trainable)
        self.dtype = config.standardize_dtype(dtype)
        self._input_shape_arg = None if input_shape is None else (None, *input_shape)
        self._output_shape = None
        self._first_call_done = False
        call_checks.warn_if_created_in_call(self)

    def __setattr__(self, name, value):
        if "_added_weights" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: call super().__init__() at the start of __init__, "
                f"before assigning attributes (assigning {name!r})"
            )
        old = self.__dict__.get(name)
        self._release_added_weight(name, value)
        object.__setattr__(self, name, value)
        if tracking.may_hold_weights(value) or tracking.may_hold_weights(old):
            # It may hold (or have held) weights: cached weight lists are stale.
            object.__setattr__(self, "_tracked_ids", None)
            TrackingGeneration.bump()

    def __delattr__(self, name):
        self._release_added_weight(name, None)
        object.__delattr__(self, name)
        object.__setattr__(self, "_tracked_ids", None)
        TrackingGeneration.bump()

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
        return list(tracking.weight_lists(self)[0])

    @property
    def variables(self):
        """Same as `weights`."""
        return self.weights

    @property
    def trainable_weights(self):
        """The tracked Variables that training updates."""
        return list(tracking.weight_lists(self)[1])

    @property
    def trainable_variables(self):
        """Same as `trainable_weights`."""
        return self.trainable_weights

    @property
    def non_trainable_weights(self):
        """The tracked Variables that training leaves alone."""
        return list(tracking.weight_lists(self)[2])

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
            >>> layer = mk.Layer()
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
            >>> mk.Layer()(np.ones(2)).numpy()
            array([1., 1.], dtype=float32)
        """
        return inputs

    def __call__(self, *args, **kwargs):
        if args:
            inputs, args = args[0], args[1:]
        else:  # every argument by keyword: layer(query=q, value=v)
            inputs = call_helpers.pop_first_argument(self, kwargs)
        if type(inputs) is not Tensor:  # the common case skips the structure checks
            if contains(inputs, SymbolicTensor) or (
                (args or kwargs) and call_helpers.symbolic_among(args, kwargs)
            ):
                return symbolic_call(self, inputs, args, kwargs)
            inputs = self._convert_inputs(inputs)
        else:
            dtype = inputs.dtype
            if dtype != self.dtype and dtype.kind == "f":
                inputs = self._convert_inputs(inputs)
        training = kwargs.pop("training", None)
        mask = kwargs.pop("mask", _NOT_GIVEN)
        if args:  # further tensor arguments are converted like the inputs, as in Keras
            args = tuple(self._convert_inputs(a) if call_helpers.is_array(a) else a for a in args)
        if kwargs:
            for key, value in kwargs.items():
                if call_helpers.is_array(value):
                    kwargs[key] = self._convert_inputs(value)
        profile = _profiles.get(type(self).call) or _profile(self)
        if mask is _NOT_GIVEN:  # models pass masks explicitly; a direct call reads the inputs'
            if not profile.reads_masks:
                mask = None
            elif type(inputs) is Tensor:
                mask = getattr(inputs, "_keras_mask", None)
            else:
                mask = call_helpers.keras_mask_of(inputs)
        state = _state  # the thread's (a threading.local: read it once)
        stack = state.call_stack
        outermost = not stack
        if training is None and not outermost:
            training = stack[-1].training
        # This call's number (a new one if outermost); losses of earlier calls are forgotten.
        counter = call_checks.counter
        if outermost:
            counter.outermost_calls += 1
        number = counter.outermost_calls
        object.__setattr__(self, "_latest_call", number)
        if self._losses and self._losses[0][0] < number:
            self._losses[:] = [entry for entry in self._losses if entry[0] >= number]
        if not self.built:
            self._build_on_first_call(inputs, args, kwargs)
        if self.input_spec is not None and type(inputs) is Tensor:
            shape = inputs.shape
            if shape != self.__dict__.get("_spec_checked"):  # each new shape is checked once
                check_input_spec(self, shape)
                object.__setattr__(self, "_spec_checked", shape)
        if training is not None and profile.takes_training:
            kwargs["training"] = training
        if mask is not None and profile.takes_mask:
            kwargs["mask"] = mask
        if profile.argument_masks:  # `query_mask` for `query`...: what they carry
            call_helpers.fill_argument_masks(self, inputs, args, kwargs)
        if outermost:
            state.reads.clear()
            state.read_observers.append(call_checks.observe_read)
        stack.append(call_checks.Frame(self, "call", training))
        try:
            outputs = self.call(inputs, *args, **kwargs)
        except (ValueError, TypeError, IndexError) as error:
            call_helpers.explain_mismatch(self, inputs, error)
            raise
        finally:
            stack.pop()
            if outermost:
                state.read_observers.remove(call_checks.observe_read)
        if outermost and state.reads:
            call_checks.check_reads(self)
        if self.activity_regularizer is not None:
            for output in _tensors_in(outputs):
                self.add_loss(self.activity_regularizer(output))
        if not self._first_call_done:
            self._after_first_call(inputs)
        if profile.makes_masks or (mask is not None and profile.passes_masks):
            call_helpers.attach_keras_mask(outputs, self.compute_mask(inputs, mask))
        elif profile.mask_of_call and self._output_mask is not None:  # a model's, if any
            call_helpers.attach_keras_mask(outputs, self._output_mask)
        # For summary(), from the latest call: a Sequential's output changes with add/pop.
        if type(outputs) is Tensor:
            shape = outputs.shape
        else:
            shape = _shape_of(outputs) if _is_tensor_tree(outputs) else None
        object.__setattr__(self, "_output_shape", shape)
        return outputs

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
            value = self._as_tensor(inputs)
        kind = value.dtype.kind
        if kind == "f":
            if value.dtype != self.dtype:
                from minikeras import ops

                value = ops.cast(value, self.dtype)
        elif kind not in "biu" and not (kind in "USO" and self._accepts_strings):
            raise TypeError(
                f"{type(self).__name__} '{self.name}' takes numbers or booleans, got an input "
                f"of dtype {value.dtype} and shape {value.shape}"
                + (
                    " (strings go to string preprocessing layers such as StringLookup)"
                    if kind in "USO"
                    else ""
                )
            )
        return value

    def _as_tensor(self, inputs):
        try:
            return Tensor(inputs)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{type(self).__name__} '{self.name}' cannot take {type(inputs).__name__} "
                f"inputs as an array: {error}"
            ) from None

    def _build_on_first_call(self, inputs, args=(), kwargs=None):
        """Calls `build` with the shapes of the call's tensor arguments (see `call_spec`)."""
        tensors = call_spec.tensor_arguments(self, inputs, args, kwargs or {})
        shapes = call_spec.shapes_for(self.build, self, tensors)
        before = dict(vars(self))
        _state.call_stack.append(call_checks.Frame(self, "build", None))
        try:
            self.build(**shapes)
        finally:
            _state.call_stack.pop()
        self.built = True
        call_checks.check_build_attributes(self, before)

    def _after_first_call(self, inputs):
        self._first_call_done = True
        if not _state.call_stack:
            call_checks.warn_untrackable(self)

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


class _CallProfile:
    """What `__call__` needs to know of a layer class's `call` and masks, found once."""

    __slots__ = (
        "takes_training", "takes_mask", "argument_masks", "makes_masks", "passes_masks",
        "reads_masks", "mask_of_call",
    )  # fmt: skip

    def __init__(self, layer):
        cls = type(layer)
        self.takes_training = call_checks.accepts(layer.call, "training")
        self.takes_mask = call_checks.names_argument(layer.call, "mask")
        self.argument_masks = call_helpers.argument_masks(layer)
        # compute_mask overridden: called at every call; supports_masking with the default
        # compute_mask: the incoming mask is passed on, when there is one.
        # A model keeps the mask its call ended with: attached only when there is one.
        self.mask_of_call = getattr(cls, "_mask_is_of_call", False) and (
            cls.compute_mask is getattr(cls, "_call_mask_method", None)
        )
        self.makes_masks = cls.compute_mask is not Layer.compute_mask and not self.mask_of_call
        self.passes_masks = bool(cls.supports_masking)
        # Whether the inputs' own masks matter to this call.
        self.reads_masks = self.takes_mask or self.makes_masks or self.passes_masks


_profiles = {}  # a class's call function -> its _CallProfile


def _profile(layer):
    found = _profiles[type(layer).call] = _CallProfile(layer)
    return found


def _model_get_config(cls):
    """`Model.get_config` if `cls` is a model (its base config for subclassed models)."""
    for klass in cls.__mro__:
        if klass.__name__ == "Model" and klass.__module__ == "minikeras.models.model":
            return klass.get_config
    return None


_NOT_GIVEN = object()


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
