"""`Layer`: config in `__init__`, weights in `build(input_shape)`, math in `call`.

`__call__` (in `layer_call.LayerCall`, a base) is the only caller of `build`,
once, on the first call, when the input shape is known. It also watches the
call: which Variables were read (through `read_variable`), which layers or
Variables were created inside `call()`, and what the layer holds where
tracking cannot see. See `minikeras.layers.tracking` for how weights are found.
"""

import functools

from minikeras import regularizers
from minikeras.engine.context import state as _state
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers import auto_config, call_checks, layer_containers, layer_record, tracking
from minikeras.layers.attribute_sets import count_set
from minikeras.layers.layer_call import LayerCall
from minikeras.layers.layer_config import LayerConfig, layer_dtype_policy
from minikeras.layers.layer_dtypes import LayerDTypes
from minikeras.layers.layer_losses import LayerLosses
from minikeras.layers.layer_shapes import LayerShapes, computed_attribute
from minikeras.layers.layer_weights import LayerWeights
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


class _NotInitializedError(AttributeError, RuntimeError):
    """A missing attribute of a layer whose base `Layer.__init__` has not run yet.

    An `AttributeError`, so that `hasattr` and `getattr(..., default)` in an
    `__init__` before `super().__init__()` work as in Keras; a `RuntimeError`
    for the message that says what to do.
    """


class Layer(LayerDTypes, LayerCall, LayerConfig, LayerShapes, LayerLosses, LayerWeights):
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
        dtype: the dtype policy: None (the global one,
            `mk.config.dtype_policy()`, that of `config.floatx()` unless set), a
            name (`"float32"`, `"float64"`, `"mixed_float16"`), a `DTypePolicy`
            or its Keras config dict. `"mixed_float16"` keeps the weights in
            float32 and computes in float16: floating inputs are cast to float16
            and, inside `call`, float weights are read as float16.
        autocast: whether, under a mixed policy, `call` reads the float weights
            in the compute dtype (Keras's autocast; True by default).
        activity_regularizer: None, or a regularizer (a name, a config dict or a
            callable) of the outputs: its penalty, divided by the batch size
            as in Keras 3, joins `losses` at each call.

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
         "_weights_cache", "_dtype_policy", "_compute_dtype", "_autocast_alone",
         "_layer_record"}
    )  # fmt: skip
    # What the built layer's weights require of its inputs, checked at each call (set in
    # build; see minikeras.layers.input_spec). None: nothing is checked.
    input_spec = None
    # Whether the default compute_mask passes an incoming mask on unchanged.
    supports_masking = False
    # Whether the class never makes weights (the merge layers): one made inside another
    # layer's call() is then no mistake, and is not flagged.
    _never_has_weights = False

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
        autocast = kwargs.pop("autocast", True)  # (Keras's argument; not in its config)
        # Every layer takes it, as in Keras 3: a penalty on its outputs, added at each call.
        activity_regularizer = regularizers.get(kwargs.pop("activity_regularizer", None))
        if kwargs:  # a ValueError, in Keras 3's words
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs!r:.200}"
            )
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
        self.autocast = bool(autocast)
        self._set_dtype_policy(layer_dtype_policy(self, dtype))
        self._input_shape_arg = None if input_shape is None else (None, *input_shape)
        self._output_shape = None
        self._first_call_done = False
        call_checks.warn_if_created_in_call(self)

    def __setattr__(self, name, value):
        if "_added_weights" not in self.__dict__:
            # Before super().__init__(), as Keras allows (its RNN guide sets a cell's
            # state_size first): tracking reads the attributes later; the layers it
            # holds take their place now, as Keras's tracker (made on demand) places them.
            if isinstance(value, _HOLDERS) and name not in self._untracked_attributes:
                value = layer_containers.recorded(self, value)
                layer_record.note(self, self.__dict__.get(name), value)
            object.__setattr__(self, name, value)
            return
        attributes = self.__dict__
        old = attributes.get(name)
        counted = attributes.get("built") and name not in self._untracked_attributes
        self._release_added_weight(name, value)
        if name not in self._untracked_attributes and name != "_layers":
            # A list or dict of layers is copied into one that records what goes in
            # and out later, as Keras's tracker copies it (see layer_containers).
            value = layer_containers.recorded(self, value)
        object.__setattr__(self, name, value)
        if counted:
            # What `call` reads may have changed: a recording of it is stale (see
            # `models.replayed_call`); counted once the value is in place, so that a call
            # recorded meanwhile reads the new one. Bookkeeping during a call bypasses this.
            count_set(attributes)
        if name not in self._untracked_attributes and (
            tracking.may_hold_weights(value) or tracking.may_hold_weights(old)
        ):
            # It may hold (or have held) weights: cached weight lists are stale.
            object.__setattr__(self, "_tracked_ids", None)
            TrackingGeneration.bump()
            if (old is not value or type(value) in _RECORDED) and (
                isinstance(value, _HOLDERS) or isinstance(old, _HOLDERS)
            ):
                # (Keras's tracker keeps a replaced layer; `self.blocks += [...]` places)
                layer_record.note(self, old, value)

    def __getattr__(self, name):
        # Reached only when the normal lookup failed. Without the base's attributes, the
        # subclass's __init__ never called super().__init__(): say so.
        if "_added_weights" in self.__dict__ or name.startswith("__"):
            return object.__getattribute__(self, name)  # the lookup's own AttributeError
        raise _NotInitializedError(
            f"{type(self).__name__}: its __init__ must call super().__init__() (the base "
            f"Layer is not initialized, so it has no {name!r})"
        )

    def __delattr__(self, name):
        attributes = self.__dict__
        counted = attributes.get("built")
        self._release_added_weight(name, None)
        old = attributes.get(name)
        object.__delattr__(self, name)
        if counted:
            count_set(attributes)
        if name not in self._untracked_attributes and isinstance(old, _HOLDERS):
            layer_record.note(self, old, None)
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
    def _accepts_strings(self):
        # Whether call() takes string (or object) arrays: the string preprocessing layers
        # do (a class attribute there), and a layer holding one (a custom embedding whose
        # call starts with a StringLookup); each layer still checks what reaches it.
        return any(layer._accepts_strings for layer in tracking.tracked_layers(self))

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


def _model_get_config(cls):
    """`Model.get_config` if `cls` is a model (its base config for subclassed models)."""
    for klass in cls.__mro__:
        if klass.__name__ == "Model" and klass.__module__ == "minikeras.models.model":
            return klass.get_config
    return None


# What may hold a layer (for layer_record): a layer, or a list, tuple or dict of them.
_HOLDERS = (Layer, list, tuple, dict)
_RECORDED = (layer_containers.RecordedList, layer_containers.RecordedDict)
