"""`LayerCall`: what `Layer.__call__` does around `call`, a base of `Layer`.

A call converts its inputs (floating ones to the layer's compute dtype),
builds the layer on the first call, opens Keras's autocast scope for a
mixed-precision layer, checks the
inputs against `input_spec`, passes `training` and masks down to the layers
it calls, and watches the call: which Variables were read (through
`read_variable`), so that one the layer does not track is named loudly, and
what the layer holds where tracking cannot see. Symbolic inputs go to
`symbolic.symbolic_call` instead, which records a node of a functional graph.
"""

import numpy as np

from minikeras import tree
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor, dtype_of, wrap
from minikeras.engine.variable import Variable
from minikeras.layers import call_checks, call_helpers, call_spec
from minikeras.layers.call_helpers import contains
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.input_spec import check_input_spec
from minikeras.layers.layer_losses import activity_loss
from minikeras.layers.layer_shapes import LayerShapes
from minikeras.layers.symbolic import symbolic_call

__all__ = ["LayerCall"]


class LayerCall:
    """The machinery of `Layer.__call__` (see the module); `Layer` inherits it.

    Example:
        >>> layer = mk.layers.Dense(2)
        >>> layer(np.ones((1, 3))).shape, layer.built
        ((1, 2), True)
    """

    # Float inputs are cast to the compute dtype; a functional model leaves that to its
    # Inputs, each converting to its own dtype (as Keras's Functional: no float32 data
    # rounded to float16 by a mixed model before a float32 Input sees it).
    _casts_float_inputs = True

    def __call__(self, *args, **kwargs):
        if args:
            inputs, args = args[0], args[1:]
        else:  # every argument by keyword: layer(query=q, value=v)
            inputs = call_helpers.pop_first_argument(self, kwargs)
        if type(inputs) is not Tensor:  # the common case skips the structure checks
            plain = type(inputs) is np.ndarray  # (an array is never symbolic)
            if (not plain and contains(inputs, SymbolicTensor)) or (
                (args or kwargs) and call_helpers.symbolic_among(args, kwargs)
            ):
                return symbolic_call(self, inputs, args, kwargs)
            if plain and inputs.dtype == self._compute_dtype:
                inputs = wrap(inputs)  # what _convert_inputs makes of it, without its checks
            else:
                inputs = self._convert_inputs(inputs)
        elif not _ready(inputs, self._compute_dtype):
            inputs = self._convert_inputs(inputs)
        training = kwargs.pop("training", None)
        mask = kwargs.pop("mask", _NOT_GIVEN)
        if args:  # further tensor arguments are converted like the inputs, as in Keras,
            args = tuple(self._convert_arguments(a) for a in args)  # nested ones too
        if kwargs:
            for key, value in kwargs.items():
                if type(value) not in call_helpers._PLAIN:  # (flags: nothing to convert)
                    kwargs[key] = self._convert_arguments(value)
        profile = _profiles.get(type(self).call) or _profile(self)
        if mask is _NOT_GIVEN:  # models pass masks explicitly; a direct call reads the inputs'
            if not (profile.reads_masks or self.supports_masking):
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
        # Bookkeeping written to the instance dict, past Layer.__setattr__'s tracking
        # (as object.__setattr__ would, at a third of its cost: this runs at every call).
        attributes = self.__dict__
        attributes["_latest_call"] = number
        if self._losses and self._losses[0][0] < number:
            self._losses[:] = [entry for entry in self._losses if entry[0] >= number]
        if not self.built:
            self._build_on_first_call(inputs, args, kwargs)
        if self.input_spec is not None and type(inputs) is Tensor:
            shape = inputs.shape
            if shape != attributes.get("_spec_checked"):  # each new shape is checked once
                check_input_spec(self, shape)
                attributes["_spec_checked"] = shape
        if training is not None and profile.takes_training:
            kwargs["training"] = training
        if mask is not None and profile.takes_mask:
            kwargs["mask"] = mask
        if profile.argument_masks:  # `query_mask` for `query`...: what they carry
            call_helpers.fill_argument_masks(self, inputs, args, kwargs)
        if outermost:
            state.reads.clear()
            state.read_observers.append(call_checks.observe_read)
        # Keras's autocast scope: inside a mixed-precision layer's call (and the calls
        # it makes), floating Variables are read in its compute dtype (variable_reads).
        scope = state.autocast
        if scope is None:
            autocast = self._autocast_alone
        else:  # inside another layer's scope: this layer's compute dtype, if it autocasts
            compute = self._compute_dtype
            autocast = compute if self.autocast and compute.startswith("float") else None
        if autocast != scope:
            state.autocast = autocast
        stack.append(call_checks.Frame(self, "call", training))
        try:
            outputs = self.call(inputs, *args, **kwargs)
        except (ValueError, TypeError, IndexError) as error:
            call_helpers.explain_mismatch(self, inputs, error)
            raise
        finally:
            stack.pop()
            if autocast != scope:
                state.autocast = scope
            if outermost:
                state.read_observers.remove(call_checks.observe_read)
        if outermost and state.reads:
            call_checks.check_reads(self)
        if self.activity_regularizer is not None:
            for output in tree.flatten(outputs):  # (Keras's order: a dict's by sorted key)
                if isinstance(output, Tensor):
                    self.add_loss(activity_loss(self.activity_regularizer, output))
        if not self._first_call_done:
            self._after_first_call(inputs)
        # (`supports_masking` is read from the layer: Keras code sets it in __init__)
        if profile.makes_masks or (mask is not None and self.supports_masking):
            call_helpers.attach_keras_mask(outputs, self.compute_mask(inputs, mask))
        elif profile.mask_of_call and self._output_mask is not None:  # a model's, if any
            call_helpers.attach_keras_mask(outputs, self._output_mask)
        # For summary(), from the latest call: a Sequential's output changes with add/pop.
        if type(outputs) is Tensor:
            shape = outputs.shape
        else:
            shape = _shape_of(outputs) if _is_tensor_tree(outputs) else None
        attributes["_output_shape"] = shape
        return outputs

    def _convert_inputs(self, inputs):
        if isinstance(inputs, Variable):
            # Read here, as Keras makes a tensor of a Variable argument: the call sees
            # its value (a tape still records the read), and the untracked-weight
            # check, which watches the reads inside the call, does not take an
            # argument for a weight the layer hides.
            inputs = inputs.value
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
            # (Keras's autocast: a layer made with autocast=False takes floats as they come)
            if value.dtype != self._compute_dtype and self.autocast and self._casts_float_inputs:
                from minikeras import ops

                value = ops.cast(value, self._compute_dtype)
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

    def _convert_arguments(self, value):
        # An array or Tensor anywhere in lists, tuples and dicts (a cell's states), as
        # Keras converts a call's arguments; anything else is left as it is.
        kind = type(value)
        if kind is Tensor and _ready(value, self._compute_dtype):
            return value  # (the usual argument: nothing to do)
        if call_helpers.is_array(value):
            return self._convert_inputs(value)
        if kind is list or kind is tuple:
            dtype = self._compute_dtype
            if all(type(item) is Tensor and _ready(item, dtype) for item in value):
                return value  # (a cell's states, at every step of a sequence)
            return kind([self._convert_arguments(item) for item in value])
        if kind is dict:
            return {key: self._convert_arguments(item) for key, item in value.items()}
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
        self.__dict__["_first_call_done"] = True  # (bookkeeping: no attribute set to count)
        if not _state.call_stack:
            call_checks.warn_untrackable(self)


def _ready(tensor, dtype):
    """Whether a Tensor argument needs no conversion: of the layer's dtype, or not float."""
    held = dtype_of(tensor._value)  # (a box's dtype read directly, not through autograd's calls)
    if held is None:  # (a Python number: `dtype` makes it an array's)
        held = tensor.dtype
    return held == dtype or held.kind != "f"


def _shape_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [_shape_of(x) for x in inputs]
    if isinstance(inputs, dict):
        return {key: _shape_of(x) for key, x in inputs.items()}
    return tuple(inputs.shape)


class _CallProfile:
    """What `__call__` needs to know of a layer class's `call` and masks, found once."""

    __slots__ = (
        "takes_training", "takes_mask", "argument_masks", "makes_masks",
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
        self.makes_masks = (
            cls.compute_mask is not LayerShapes.compute_mask and not self.mask_of_call
        )
        # Whether the inputs' own masks matter to this call (and to a layer whose
        # `supports_masking`, of the class or set in __init__, passes them on).
        self.reads_masks = self.takes_mask or self.makes_masks


_profiles = {}  # a class's call function -> its _CallProfile


def _profile(layer):
    found = _profiles[type(layer).call] = _CallProfile(layer)
    return found


_NOT_GIVEN = object()


def _is_tensor_tree(structure):
    if isinstance(structure, Tensor):
        return True
    if isinstance(structure, (list, tuple)):
        return all(_is_tensor_tree(x) for x in structure)
    return False
