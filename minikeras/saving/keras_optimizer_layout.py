"""The order of an optimizer's variables in Keras 3's `model.weights.h5`: `optimizer/vars/<i>`.

Keras numbers an optimizer's variables: `iteration`, the learning rate,
the moving averages (with `use_ema`), then the slots in the order its
`build` creates them. `optimizer_variables` lists a minikeras optimizer's
variables in that order, so `keras_file` and `keras_writer` can read and
write them by position. A `LossScaleOptimizer` lists its own four, then
its inner optimizer's (Keras also writes those again under
`optimizer/inner_optimizer/vars`).
"""

__all__ = ["optimizer_variables"]


# Keras creates an optimizer's slots in calls of `add_optimizer_variables`: within one
# call they are interleaved variable by variable, calls follow one another.
_SLOT_CALLS = {
    "Adam": [("momentum", "velocity"), ("velocity_hat",)],
    "AdamW": [("momentum", "velocity"), ("velocity_hat",)],
    "SGD": [("momentum",)],
    "RMSprop": [("velocity",), ("momentum",), ("average_gradient",)],
    "Adagrad": [("accumulator",)],
    "Adamax": [("momentum", "norm")],
    # (r and c are scalar placeholders for a variable of fewer than two axes, as in Keras)
    "Adafactor": [("r", "c", "velocity")],
}


def _known_kind(cls):
    """The built-in optimizer whose layout `cls` has: its own name, or, for a subclass of
    a built-in that makes the same slots (its `build` not overridden), the built-in's."""
    for base in cls.__mro__:
        if base.__name__ in _SLOT_CALLS and base.__module__.startswith("minikeras."):
            return base.__name__ if base is cls or cls.build is base.build else cls.__name__
    return cls.__name__


def optimizer_variables(optimizer, order=None):
    """A built optimizer's variables in the order of Keras's `optimizer/vars/<i>`.

    `iterations`, then the learning rate (unless it is a schedule, which
    Keras keeps in the config), then the moving averages of the weights (with
    `use_ema`), then the slots as Keras creates them.

    Args:
        optimizer: a built minikeras optimizer of a kind Keras has.
        order: positions in the optimizer's variables of the model's
            trainable variables in Keras's order (`keras_order.trainable_order`);
            the optimizer's own order if None.

    Returns:
        A list of Variables.

    Raises:
        ValueError: for an optimizer whose Keras layout minikeras does not know.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="d")])
        >>> optimizer = mk.optimizers.Adam()
        >>> optimizer.build(model.trainable_weights)
        >>> [v.name for v in mk.saving.keras_optimizer_layout.optimizer_variables(optimizer)][:4]
        ['iteration', 'learning_rate', 'd_kernel_momentum', 'd_kernel_velocity']
    """
    kind = _known_kind(type(optimizer))
    inner = getattr(optimizer, "inner_optimizer", None)
    if kind == "LossScaleOptimizer" and inner is not None:
        # Keras's: its own `iteration`, `learning_rate`, `step_counter` and
        # `dynamic_scale`, then the inner optimizer's variables in their order.
        return list(optimizer._variables) + optimizer_variables(inner, order)
    if kind not in _SLOT_CALLS:
        raise ValueError(
            f"the Keras layout of {kind}'s state is not known to minikeras; known: "
            f"{sorted(_SLOT_CALLS)}"
        )
    variables = list(optimizer.variables)
    leading = optimizer._leading  # `iterations`, and the learning rate unless a schedule
    found = variables[:leading]
    by_slot = {}
    for slots in _SLOT_CALLS[kind]:
        for slot in slots:
            by_slot[slot] = [v for v in variables[leading:] if v.name.endswith("_" + slot)]
    count = len(optimizer._trainable_variables)
    indices = range(count) if order is None else order
    averages = list(getattr(optimizer, "_averages", None) or [])
    if averages:  # (use_ema: Keras's base optimizer makes them before any slot)
        if len(averages) != count:
            raise ValueError(
                f"{kind} keeps moving averages of {len(averages)} variables, but updates {count}"
            )
        found.extend(averages[index] for index in indices)
    for slots in _SLOT_CALLS[kind]:
        present = [slot for slot in slots if len(by_slot[slot]) == count and count]
        for index in indices:
            found.extend(by_slot[slot][index] for slot in present)
    return found
