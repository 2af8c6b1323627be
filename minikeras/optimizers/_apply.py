"""One update of an optimizer: checks, clipping, weight decay, the rule, EMA, constraints.

`checked_updates` turns what `apply` received into `(index, gradient,
variable)` triples, raising before anything changes. `apply_update` then
runs the steps in Keras 3's order. The rule runs either as the optimizer's
`update_step` (a user's optimizer) or as a built-in's `_fused_step`, which
writes into arrays chosen by `_buffers.UpdateBuffers`.
"""

import operator
from operator import is_

import numpy as np

from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import is_unshared
from minikeras.optimizers import _ema
from minikeras.optimizers._blas import add_scaled
from minikeras.optimizers._buffers import FlatSlots
from minikeras.optimizers._clipping import clip_gradients
from minikeras.optimizers._packed import PackedRule
from minikeras.optimizers._traced import RuleRunner

__all__ = ["apply_update", "checked_updates", "descend", "label"]

_ONE = np.array(1, np.int32)  # the step `iterations` takes
_second = operator.itemgetter(1)
_flattened = operator.methodcaller("reshape", -1)


def label(variable):
    """How messages name a variable: its path ("dense/kernel") or its name.

    Args:
        variable: a Variable, or anything else.

    Returns:
        A string.

    Example:
        >>> mk.optimizers._apply.label(mk.Variable([1.0], name="w"))
        'w'
    """
    return getattr(variable, "path", None) or getattr(variable, "name", None) or repr(variable)


def _warn_no_gradient(variable):
    from minikeras.layers import tracking  # only on this rare path: optimizers import no layers

    tracking.warn(
        f"Variable {label(variable)!r} received no gradient (None): it does not "
        "influence the loss and was not updated"
    )


def checked_updates(optimizer, grads, trainable_variables):
    """`(index, gradient array, variable)` for each gradient that is not None; builds first."""
    if trainable_variables is None:
        if not optimizer.built:
            raise ValueError(
                f"Optimizer {optimizer.name!r}: pass the variables to the first apply(), "
                "which builds the optimizer's state for them"
            )
        trainable_variables = optimizer._trainable_variables
    trainable_variables = list(trainable_variables)
    if len(grads) != len(trainable_variables):
        raise ValueError(
            f"Optimizer {optimizer.name!r}: got {len(grads)} gradients for "
            f"{len(trainable_variables)} variables; pass one gradient per variable"
        )
    if not grads:
        return []
    if not optimizer.built:
        optimizer.build(trainable_variables)
    known = optimizer._trainable_variables
    if len(trainable_variables) == len(known) and all(map(is_, trainable_variables, known)):
        indices = range(len(known))  # (the usual call: the variables it was built for, in order)
    else:
        indices = [_index_of(optimizer, variable) for variable in trainable_variables]
    updates = []
    for index, grad, variable in zip(indices, grads, trainable_variables):
        if grad is None:
            _warn_no_gradient(variable)
            continue
        value, target = grad._value if type(grad) is Tensor else grad, variable._value
        if type(value) is not np.ndarray or value.dtype != target.dtype:
            value = np.asarray(grad, dtype=variable.dtype)
        if value.shape != target.shape:
            raise ValueError(
                f"Optimizer {optimizer.name!r}: the gradient for variable {label(variable)!r} "
                f"has shape {value.shape}, but the variable has shape {variable.shape}"
            )
        updates.append((index, value, variable))
    return updates


def descend(optimizer, grads, variables):
    """`w -= learning_rate * g` for each pair, when that is the whole update; else False.

    The update of an optimizer whose rule is plain gradient descent (SGD
    without momentum: `_descent_lane`) with nothing around it: no clipping,
    weight decay, EMA or constraint, a gradient array of each variable's
    shape and dtype, and the variables the optimizer was built for, in its
    order. It makes the general path's numpy and BLAS calls on the same
    arrays (the small variables packed together, `_buffers.FlatSlots`; each
    other one in place when nothing else holds its array, else into a new
    one), so the numbers are the same, without the Python around them
    (`checked_updates`, `apply_update`'s steps and `_buffers`' per-variable
    choices): a custom training loop runs it at every step. Anything else
    returns False before any change, and the caller takes the general path
    (which builds the optimizer, warns, raises, casts or clips as needed).

    Args:
        optimizer: an `Optimizer`.
        grads: a list of gradients (Tensors or arrays).
        variables: a list of Variables, one per gradient.

    Returns:
        Whether the update was made.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> optimizer = mk.optimizers.SGD(0.5)
        >>> mk.optimizers._apply.descend(optimizer, [np.ones(2, np.float32)], [w])
        True
        >>> w.numpy(), int(optimizer.iterations.numpy())
        (array([0.5, 1.5], dtype=float32), 1)
    """
    if (
        optimizer.clipnorm
        or optimizer.clipvalue
        or optimizer.global_clipnorm
        or optimizer.weight_decay
        or optimizer.use_ema
        or len(grads) != len(variables)
        or not variables
        or (TRACING[0] and _state.effect_observers)
    ):
        return False
    if not optimizer.built:
        optimizer.build(variables)  # (as `checked_updates` does, once the counts match)
    known = optimizer._trainable_variables
    if len(variables) != len(known) or not all(map(is_, variables, known)):
        return False
    arrays = []
    for grad, variable in zip(grads, variables):
        array = grad._value if type(grad) is Tensor else grad
        # (no local for the variable's array: one left over would keep the last one shared)
        if (
            type(array) is not np.ndarray
            or array.dtype != variable._value.dtype
            or array.shape != variable._value.shape
            or variable.constraint is not None
        ):
            return False
        arrays.append(array)
    step = -optimizer._current_learning_rate()  # (as SGD's `_fused_step` calls `add_scaled`)
    buffers = optimizer._buffers
    flat = buffers.flat if buffers.flat_checked else _flat_slots(optimizer)
    pairs = zip(arrays, variables)
    if flat is not None:  # (`_flat_update`'s calls: the small ones packed, in one pass)
        _pack_gradients(flat, arrays)
        if not flat.values_intact():
            flat.pack_values()
        add_scaled(flat.values, step, flat.gradient, flat.scratch[0])
        pairs = [(arrays[index], variables[index]) for index in flat.others]
    for array, variable in pairs:
        if is_unshared(variable):
            add_scaled(variable._value, step, array, None)
        else:  # (someone holds the array: the new value goes into a new one)
            value = variable._value.copy()
            add_scaled(value, step, array, None)
            variable._value = value
    optimizer._iterations._update(np.add, _ONE, "assign_add")
    return True


def _index_of(optimizer, variable):
    """The index of `variable` in the optimizer's lists; raises if it has none."""
    index = optimizer._trainable_variables_indices.get(id(variable))
    if index is None:
        raise ValueError(
            f"Optimizer {optimizer.name!r}: variable {label(variable)!r} is not one of the "
            f"{len(optimizer._trainable_variables)} variables this optimizer was built for "
            "(on its first apply), and it keeps state per variable. Create a new "
            "optimizer for the new variable list."
        )
    return index


def apply_update(optimizer, updates):
    """Runs one update of `optimizer` on the `(index, gradient, variable)` triples.

    Args:
        optimizer: a built `Optimizer`.
        updates: what `checked_updates` returned (not empty).

    Example:
        >>> w = mk.Variable([1.0])
        >>> optimizer = mk.optimizers.SGD(0.5)
        >>> mk.optimizers._apply.apply_update(
        ...     optimizer, mk.optimizers._apply.checked_updates(optimizer, [np.ones(1)], [w])
        ... )
        >>> w.numpy()
        array([0.5], dtype=float32)
    """
    grads = [*map(_second, updates)]  # (each update's gradient, without a comprehension's call)
    if optimizer.clipnorm or optimizer.clipvalue or optimizer.global_clipnorm:
        grads = clip_gradients(
            grads, optimizer.clipnorm, optimizer.clipvalue, optimizer.global_clipnorm
        )
    learning_rate = optimizer._current_learning_rate()
    decay = 1.0 - optimizer.weight_decay * learning_rate if optimizer.weight_decay else None
    step = int(optimizer._iterations._value)
    fused_step = optimizer._fused_step
    if fused_step is not None:
        # The built-ins' fast path: each new value computed into an array `_buffers` chose.
        buffers, slots, decayed = optimizer._buffers, optimizer._slots, optimizer._decayed
        constants = optimizer._step_constants(learning_rate, step + 1)
        pairs = zip(updates, grads)
        flat = buffers.flat if buffers.flat_checked else _flat_slots(optimizer)
        if flat is not None and len(updates) == len(slots):
            pairs = _flat_update(optimizer, flat, updates, grads, constants, decay)
        for (index, _, variable), grad in pairs:
            out, slot_arrays, scratch = buffers.prepare(index, variable, slots[index])
            value = variable._value
            if decay is not None and decayed[index]:
                np.multiply(value, decay, out=out)
                value = out
            fused_step(grad, value, out, slot_arrays, scratch, constants)
            if out is not variable._value:
                buffers.commit(index, variable, out)
    else:
        runner = optimizer._rule_runner
        if runner is None:
            runner = optimizer._rule_runner = RuleRunner()
        runner.begin(optimizer, learning_rate)
        pairs = zip(updates, grads)
        rest = runner.run_packed(optimizer, updates, grads) if decay is None else None
        if rest is not None:  # (None: it could not)
            pairs = rest
        elif optimizer.elementwise_rule or runner.may_pack(optimizer):
            packed = _packed_rule(optimizer)
            if packed is not None and packed.covers(updates):
                if not optimizer.elementwise_rule:
                    runner.adopt(optimizer, packed)
                pairs = packed.update(optimizer, updates, grads, learning_rate, decay)
        for (index, _, variable), grad in pairs:
            if decay is not None and optimizer._decayed[index]:
                optimizer.assign(variable, variable._value * decay)
            runner.run(optimizer, grad, variable, learning_rate)
    if optimizer.use_ema:
        _ema.update(
            optimizer._averages, optimizer._trainable_variables, optimizer.ema_momentum, step
        )
        frequency = optimizer.ema_overwrite_frequency
        if frequency and (step + 1) % frequency == 0:
            _ema.overwrite(optimizer._trainable_variables, optimizer._averages, optimizer.name)
    for _, _, variable in updates:
        if variable.constraint is not None:
            variable.assign(variable.constraint(variable))
    optimizer._iterations._update(np.add, _ONE, "assign_add")  # assign_add, one call less


def _packed_rule(optimizer):
    """The `_packed.PackedRule` of an optimizer that packs its rule (None if none), made once."""
    if not optimizer._packed_checked:
        optimizer._packed_rule = PackedRule.for_optimizer(optimizer)
        optimizer._packed_checked = True
    return optimizer._packed_rule


def _flat_slots(optimizer):
    """Packs the slots of the small variables together (see `_buffers.FlatSlots`), once."""
    buffers = optimizer._buffers
    members = FlatSlots.members(optimizer._trainable_variables, optimizer._slots)
    if members:
        buffers.flat = FlatSlots(members, optimizer._trainable_variables, optimizer._slots)
    buffers.flat_checked = True
    return buffers.flat


# numpy's C function itself, without the Python dispatcher of `__array_function__` around it.
_concatenate = getattr(np.concatenate, "_implementation", np.concatenate)


def _flat_update(optimizer, flat, updates, grads, constants, decay):
    """Updates the variables of `flat` with one run of the rule; returns the other pairs.

    `updates` has every variable (as `fit` gives them); unless they come in
    the optimizer's order, every variable takes the one-by-one path.
    """
    indices = flat.indices
    for index in indices:
        if updates[index][0] != index:
            return zip(updates, grads)
    _pack_gradients(flat, grads)
    if decay is None:  # the new values, written in place into the packed values
        if not flat.values_intact():
            flat.pack_values()
        values = flat.values
        optimizer._fused_step(flat.gradient, values, values, flat.flats, flat.scratch, constants)
    else:  # the step alone (rules write `out = value +- step`), then each its own decay
        optimizer._fused_step(
            flat.gradient, flat.zeros, flat.delta, flat.flats, flat.scratch, constants
        )
        _take_steps(optimizer, flat, updates, decay)
    if len(indices) == len(updates):  # (every variable is small, as in a small model)
        return ()
    # `unpacked(updates, grads, indices)`, with the other positions found once.
    return [(updates[index], grads[index]) for index in flat.others]


def _pack_gradients(flat, grads):
    """Copies the gradients of `flat`'s variables (at their indices in `grads`) into
    `flat.gradient`, after packing the slots again if a view of them is held."""
    if not flat.intact():
        flat.pack()
    _concatenate([*map(_flattened, map(grads.__getitem__, flat.indices))], out=flat.gradient)


def _take_steps(optimizer, flat, updates, decay):
    """Each variable of `flat`: its decayed value (if it decays) plus its share of `delta`."""
    buffers, decayed = optimizer._buffers, optimizer._decayed
    for index, delta in zip(flat.indices, flat.deltas):
        variable = updates[index][2]
        out = buffers.target(index, variable)
        value = variable._value
        if decay is not None and decayed[index]:
            np.multiply(value, decay, out=out)
            value = out
        np.add(value, delta, out=out)  # the rule wrote `0 +- step`: this is `value +- step`
        if out is not variable._value:
            buffers.commit(index, variable, out)
