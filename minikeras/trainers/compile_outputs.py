"""A model's outputs as `compile` sees them: their names, and one entry per output.

One output, or several: a model whose call returns a list (or a dict) of
outputs takes a loss per output, as a list in output order or a dict keyed by
output name (a single loss applies to every output), and metrics per output.
Output names are the names of the layers that make the outputs (the keys of a
dict of outputs; `output_<i>` for a subclassed model that returns a list).
"""

__all__ = ["flat", "one_output", "output_names"]


def output_names(model, y_pred):
    """The names of a model's outputs, in the order of the flat outputs.

    A dict of outputs is ordered by sorted key, as Keras 3 flattens it: a list
    of losses, loss weights or metrics given to `compile` follows that order.
    A functional model's outputs are named by the layers that make them; if
    two share a name (`Model(x, [y, y])`, two outputs of one layer), all are
    named by position, `output_0`, ..., in the logs and a loss dict. (Keras 3
    names both after the layer and logs one `<name>_loss`, the last one's.)

    Args:
        model: the model.
        y_pred: one batch of its outputs (to count them, or take a dict's keys).

    Returns:
        A list of strings.

    Example:
        >>> x = mk.Input((2,))
        >>> model = mk.Model(x, [mk.layers.Dense(1, name="a")(x), mk.layers.Dense(1, name="b")(x)])
        >>> mk.trainers.compile_outputs.output_names(model, [0, 0])
        ['a', 'b']
        >>> y = mk.layers.Dense(1, name="a")(x)
        >>> mk.trainers.compile_outputs.output_names(mk.Model(x, [y, y]), [0, 0])
        ['output_0', 'output_1']
    """
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    count = len(y_pred) if isinstance(y_pred, (list, tuple)) else 1
    names = None
    if getattr(model, "_inputs", None) is not None:
        outputs = model.outputs
        names = [getattr(getattr(t, "node", None), "layer", None) for t in outputs]
        names = [layer.name if layer is not None else None for layer in names]
        if len(names) != count or None in names or len(set(names)) != count:
            names = None
    return names or [f"output_{i}" for i in range(count)]


def flat(structure, names):
    """A model's outputs (or targets) as a list in output order (dicts by name)."""
    if isinstance(structure, dict):
        missing = [name for name in names if name not in structure]
        if missing:
            raise ValueError(
                f"the targets are a dict keyed by output name, but lack {missing} "
                f"(the outputs are {names}); got keys {list(structure)}"
            )
        return [structure[name] for name in names]
    if isinstance(structure, (list, tuple)):
        return list(structure)
    return [structure]


def one_output(structure, model, y_pred):
    """One output's targets (or sample weights), unwrapped from a one-item structure.

    As Keras 3 does for a model with one output, `[y]` and `(y,)` mean `y`. A
    one-item dict keyed by the output's name means its value too (Keras 3.15
    fails there with `Invalid dtype`, as it packs the dict's key, not its
    value). Anything else comes back as it is.

    Args:
        structure: `y`, `sample_weight`, or a one-item list, tuple or dict of it.
        model: the model (to name its output, for a dict).
        y_pred: one batch of its output.

    Returns:
        The single entry.

    Raises:
        ValueError: for a one-item dict keyed by another name than the output's.

    Example:
        >>> x = mk.Input((2,))
        >>> model = mk.Model(x, mk.layers.Dense(1, name="out")(x))
        >>> mk.trainers.compile_outputs.one_output({"out": 3}, model, 0)
        3
        >>> mk.trainers.compile_outputs.one_output((3,), model, 0)
        3
    """
    if isinstance(structure, (list, tuple)) and len(structure) == 1:
        return structure[0]
    if isinstance(structure, dict) and len(structure) == 1:
        (name,) = output_names(model, y_pred)
        if name not in structure:
            raise ValueError(
                f"the targets (or sample weights) are a dict keyed by {list(structure)}, "
                f"but the model's one output is named {name!r}"
            )
        return structure[name]
    return structure


def _per_output(value, names, what, make, every_output=False):
    """`value` (one entry, a list in output order, or a dict by name) as one entry per output.

    With `every_output` (a loss dict, as Keras 3 requires) a dict must name every
    output of a model with several; otherwise a missing one gets None.
    """
    if isinstance(value, dict):
        unknown = set(value) - set(names)
        if unknown:
            raise ValueError(
                f"compile: {what} has keys {sorted(unknown)} that are not output names; "
                f"the outputs are {names}"
            )
        missing = [name for name in names if name not in value]
        if every_output and missing and len(names) > 1:
            raise ValueError(
                f"compile: the {what} dict lacks the outputs {missing} (it has keys "
                f"{sorted(value)}; the outputs are {names}); give every output "
                f"a {what}, or None for an output that has none"
            )
        return [make(value.get(name)) for name in names]
    if isinstance(value, (list, tuple)) and len(names) > 1:
        if len(value) != len(names):
            raise ValueError(
                f"compile: {what} has {len(value)} entries but the model has {len(names)} "
                f"outputs {names}; give one per output, or a dict keyed by output name"
            )
        return [make(entry) for entry in value]
    return [make(value) for _ in names]
