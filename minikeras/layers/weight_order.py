"""The order of a layer's weights: Keras 3's, so that `get_weights` / `set_weights` cross.

Keras 3's `Layer.weights` lists a layer's own weights, then each sub-layer's
weights, recursively:

- own weights are those the layer made with `add_weight` or holds in its
  attributes outside any sub-layer: first those made trainable, then those
  made non-trainable, each in creation order (Keras keeps the two in separate
  lists; a flag changed later, freezing, moves nothing);
- sub-layers come in the order their attributes were set (a Sequential's in
  its order, a functional model's in Keras's `layers` order);
- a weight or layer reached twice counts where it is first met.

A layer whose class sets `_weights_in_creation_order` (one that keeps as own
weights what Keras keeps in sub-layers, made in the order Keras tracks them,
as MultiHeadAttention) lists all its weights in creation order.
`minikeras.layers.tracking` finds what each layer holds and caches the result.
"""

__all__ = ["in_keras_order"]


def in_keras_order(root, held):
    """The weights and layers under `root`, in Keras 3's order (see the module).

    Args:
        root: a `Layer`.
        held: `held(layer)` gives one layer's own Variables and its direct
            sub-layers, each in attribute order.

    Returns:
        `(weights, layers)`: a tuple of Variables, and a list of the layers
        under `root` (not `root`), each before the layers it holds.

    Example:
        >>> inner = mk.layers.Dense(2)
        >>> inner.build((None, 3))
        >>> outer = mk.layers.Layer()
        >>> outer.inner = inner
        >>> scale = outer.add_weight(shape=(2,), name="scale")
        >>> held = {outer: ([scale], [inner]), inner: ([inner.kernel, inner.bias], [])}
        >>> weights, layers = mk.layers.weight_order.in_keras_order(outer, held.get)
        >>> [w.name for w in weights], [layer is inner for layer in layers]
        (['scale', 'kernel', 'bias'], [True])
    """
    weights, layers = [], []
    _add(root, held, weights, layers, set(), {id(root)})
    return tuple(weights), layers


def _add(layer, held, weights, layers, seen_weights, seen_layers):
    start = len(weights)
    own, children = held(layer)
    for variable in sorted(own, key=lambda v: (not v._made_trainable, v._index)):
        if id(variable) not in seen_weights:
            seen_weights.add(id(variable))
            weights.append(variable)
    for child in children:
        if id(child) not in seen_layers:
            seen_layers.add(id(child))
            layers.append(child)
            _add(child, held, weights, layers, seen_weights, seen_layers)
    if getattr(type(layer), "_weights_in_creation_order", False):
        weights[start:] = sorted(weights[start:], key=lambda variable: variable._index)
