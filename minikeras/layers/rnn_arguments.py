"""How a recurrent layer's call arguments travel: initial states with the inputs, one mask.

Recurrent layers (`RNN`, `Bidirectional`) take their initial states in with
their inputs (`with_initial_state`), so that the functional API records
them as inputs of the call, and take them apart again in `call`
(`split_initial_state`); of a mask given per input they use the first
(`first_mask`), and none at all, as Keras, when it was read from inputs that
came with initial states (`mask_to_apply`).
"""

import warnings

__all__ = ["first_mask", "mask_to_apply", "split_initial_state", "with_initial_state"]


def first_mask(structure):
    """The first leaf of a list/tuple (a mask given per input), or the value itself.

    Args:
        structure: a mask, None, or a (nested) list of them.

    Returns:
        The first mask, or None.

    Example:
        >>> from minikeras.layers.rnn_arguments import first_mask
        >>> first_mask([None, "m"]) is None, first_mask([["m"], None])
        (True, 'm')
    """
    while isinstance(structure, (list, tuple)):
        structure = structure[0] if structure else None
    return structure


def mask_to_apply(mask, initial_state, layer=None):
    """The mask a recurrent call applies to its steps: Keras 3.15's choice.

    Keras fills a call's `mask` from its inputs' masks only when the call
    has one tensor argument; given initial states, a recurrent layer's call
    has several, so the sequences' own mask (an `Embedding(mask_zero=True)`
    before, say) is not applied, though the outputs still carry it. Here the
    initial states travel with the inputs, and a mask read from them is a
    list (one per input): that one is dropped. A mask given as `mask=` is
    applied. Keras drops it silently; we say so, once per layer and mask
    source, with a `UserWarning` naming `layer`.

    Args:
        mask: the call's mask: None, a mask, or one per input.
        initial_state: the initial states taken from the inputs, or None.
        layer: the layer calling, named in the warning.

    Returns:
        A mask or None.

    Example:
        >>> from minikeras.layers.rnn_arguments import mask_to_apply
        >>> mask_to_apply("m", ["h"]), mask_to_apply([None, None], ["h"]) is None
        ('m', True)
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as said:
        ...     warnings.simplefilter("always")
        ...     dropped = mask_to_apply(["m", None], ["h"])
        >>> dropped is None, "not applied because initial_state" in str(said[0].message)
        (True, True)
    """
    if initial_state and isinstance(mask, (list, tuple)):
        if first_mask(mask) is not None:
            name = f"{type(layer).__name__} '{layer.name}'" if layer is not None else "A layer"
            warnings.warn(
                f"{name}: its sequences carry a mask, which is not applied because "
                "initial_state is given, as in Keras 3 (a call with several tensor "
                "arguments takes no mask from them); pass mask= to mask the steps",
                stacklevel=4,
            )
        return None
    return first_mask(mask)


def with_initial_state(inputs, initial_state):
    """`[inputs, *initial_state]`, or `inputs` alone if there are no states.

    Recurrent layers take their initial states in with their inputs, so that
    the functional API records them as inputs of the call (an encoder's final
    states feeding a decoder, say).

    Args:
        inputs: the sequences.
        initial_state: None, a state, or a list of states.

    Returns:
        `inputs`, or a list.

    Example:
        >>> from minikeras.layers.rnn_arguments import with_initial_state
        >>> with_initial_state("x", None), with_initial_state("x", ["h", "c"])
        ('x', ['x', 'h', 'c'])
    """
    if initial_state is None:
        return inputs
    states = initial_state if isinstance(initial_state, (list, tuple)) else [initial_state]
    return [inputs, *states]


def split_initial_state(inputs, initial_state):
    """Undoes `with_initial_state`: `(sequences, initial_state)` from what call() got.

    Args:
        inputs: the sequences, or the list `[sequences, *states]`.
        initial_state: the states given separately, or None.

    Returns:
        The pair `(sequences, states)`, states a list or None.

    Example:
        >>> mk.layers.rnn_arguments.split_initial_state(["x", "h", "c"], None)
        ('x', ['h', 'c'])
    """
    if isinstance(inputs, (list, tuple)):
        inputs, *states = inputs
        initial_state = states or initial_state
    return inputs, initial_state
