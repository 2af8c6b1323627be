"""The order Keras 3 gives a functional model's layers, and so its trainable variables.

A `.keras` file lists the optimizer's slots by position (`optimizer/vars/<i>`),
in the order of the model's `trainable_variables` as Keras builds the model.
For a functional model Keras orders the layers by depth (from the outputs, the
deepest first), and layers of one depth by when a walk back from the outputs
first met them (`keras/src/ops/function.py`, `map_graph`; minikeras's
`models.graph_order.functional_order`). minikeras's `trainable_weights`
follow the same order (`minikeras.layers.weight_order`); an
optimizer's own list may not (one built on a list in another order), so the
slots are written, and read, by the model's.
"""

__all__ = ["trainable_order"]


def trainable_order(model, variables):
    """Positions in `variables` (an optimizer's) of Keras's `model.trainable_variables`.

    Args:
        model: the model the optimizer trains.
        variables: the optimizer's variables, in its own order.

    Returns:
        A list of indices into `variables`, in Keras's order (the model's
        `trainable_weights`); `range(len(variables))` when the two lists do not
        hold the same variables.

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> mk.saving.keras_order.trainable_order(model, model.trainable_weights)
        [0, 1]
    """
    own = list(range(len(variables)))
    position = {id(variable): index for index, variable in enumerate(variables)}
    order = [position.get(id(w), -1) for w in model.trainable_weights]
    return order if sorted(order) == own else own
