"""The functional API's symbolic tensors: `is_keras_tensor`, and `get_source_inputs`.

`get_source_inputs` gives the `Input`s a symbolic tensor was computed from.
"""

__all__ = ["get_source_inputs", "is_keras_tensor"]


def is_keras_tensor(x):
    """Returns whether `x` is a symbolic tensor of the functional API (what `Input` gives).

    Keras calls those `KerasTensor`s; minikeras's are `SymbolicTensor`s.
    Also `minikeras.backend.is_keras_tensor`.

    Args:
        x: anything.

    Returns:
        A bool: False for data (arrays, `Tensor`s, `Variable`s).

    Example:
        >>> mk.utils.is_keras_tensor(mk.Input((3,))), mk.utils.is_keras_tensor(np.ones(3))
        (True, False)
    """
    from minikeras.layers.input_layer import SymbolicTensor  # layers sit above utils

    return isinstance(x, SymbolicTensor)


def get_source_inputs(tensor):
    """Returns the `Input` tensors that `tensor` was computed from, in the order first met.

    Follows the recorded layer calls back from `tensor`, as Keras's
    `keras.utils.get_source_inputs` does: an `Input` gives itself.

    Args:
        tensor: a symbolic tensor (made by `Input` or by calling layers on one).

    Returns:
        A list of the `Input` symbolic tensors, each once.

    Raises:
        TypeError: if `tensor` is not a symbolic tensor.

    Example:
        >>> a, b = mk.Input((2,), name="a"), mk.Input((2,), name="b")
        >>> out = mk.layers.Dense(1)(mk.layers.Add()([a, b]))
        >>> [x.name for x in mk.utils.get_source_inputs(out)]
        ['a', 'b']
    """
    from minikeras.layers.input_layer import SymbolicTensor  # layers sit above utils

    if not isinstance(tensor, SymbolicTensor):
        raise TypeError(
            "get_source_inputs: expected a symbolic tensor of the functional API (from "
            f"Input or a layer called on one), got {type(tensor).__name__}"
        )
    found, seen, pending = [], set(), [tensor]
    while pending:  # depth first, leftmost input first, without recursion
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.node is None:
            found.append(current)
        else:
            pending.extend(reversed(current.node.input_tensors()))
    return found
