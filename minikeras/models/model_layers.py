"""`ModelLayers`: the part of `Model` that says what it holds and takes.

Its graph's symbolic `inputs` and `outputs` (and their shapes), its `layers`
and `operations` in Keras's order, and `get_layer` to find one by name or
position. `Model` takes these from this base class; they read the state
`Model.__init__` sets (`_inputs`, `_outputs`, `_nodes`, `_layers`).
"""

from minikeras.layers import layer_record, tracking
from minikeras.layers.layer import Layer, computed_attribute
from minikeras.models.graph_order import graph_operations
from minikeras.tree import flatten

__all__ = ["ModelLayers"]


def _unpacked(shapes):
    """A list of one shape as that shape (Keras's `input_shape` and `output_shape` do so)."""
    return shapes[0] if len(shapes) == 1 else shapes


class ModelLayers:
    """The inputs, outputs, layers and operations of a `Model`, and `get_layer`.

    A base class of `Model` (not exported itself): a functional model answers
    from its graph, a Sequential from its layer list, a subclassed model from
    the layers its attributes hold.

    Example:
        >>> x = mk.Input((3,), name="x")
        >>> model = mk.Model(x, mk.layers.Dense(2, name="d")(x))
        >>> model.get_layer("d").name, model.input_shape, model.output_shape
        ('d', (None, 3), (None, 2))
    """

    def _layers_in_keras_order(self):
        """The graph's layers in Keras's `layers` order, which orders the model's weights."""
        if not getattr(self, "_nodes", None):
            return self._layers
        held = {id(layer) for layer in self._layers}
        ordered = [layer for layer in graph_operations(self) if id(layer) in held]
        return ordered if len(ordered) == len(self._layers) else self._layers

    def _graph_part(self, what):
        if self._inputs is None:
            raise AttributeError(
                f"{type(self).__name__} '{self.name}' has no `{what}`: a functional model has "
                "them, and so has a Sequential once its input shape is known (an Input "
                "first, or built); a subclassed model's inputs are whatever call() is given"
            )
        return self._inputs if what.startswith("input") else self._outputs

    @computed_attribute
    def inputs(self):
        """The model's symbolic inputs, as a list (functional and Sequential models).

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        leaves = flatten(self._graph_part("inputs"))
        return leaves

    @computed_attribute
    def outputs(self):
        """The model's symbolic outputs, as a list (functional and Sequential models).

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        leaves = flatten(self._graph_part("outputs"))
        return leaves

    @computed_attribute
    def input(self):
        """The model's symbolic input: one tensor, or the structure it was given.

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        return self._graph_part("input")

    @computed_attribute
    def output(self):
        """The model's symbolic output: one tensor, or the structure it was given.

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        return self._graph_part("output")

    @computed_attribute
    def input_shape(self):
        """The input's shape (`None` where unknown); a list of shapes for several inputs.

        As in Keras, one input gives its shape (also in a list, tuple or dict of
        one), and several give a flat list in `inputs` order (a tuple or dict too).

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        return _unpacked([t.shape for t in flatten(self._graph_part("input_shape"))])

    @computed_attribute
    def output_shape(self):
        """The output's shape (`None` where unknown); a list of shapes for several outputs.

        As in Keras, one output gives its shape (also in a list, tuple or dict of
        one), and several give a flat list in `outputs` order (a tuple or dict too).

        Raises:
            AttributeError: for a subclassed model, or a Sequential not built yet.
        """
        return _unpacked([t.shape for t in flatten(self._graph_part("output_shape"))])

    @property
    def layers(self):
        """The model's own layers, in order: a graph's calls, or a subclass's attributes.

        A functional model lists an `InputLayer` for each of its `Input`s
        and its layers, in Keras 3's order (`layers[0]` is an `InputLayer`,
        as in Keras; a `Sequential` lists none). Nested layers (inside a
        layer or a sub-model) are not listed, as in Keras. Nor are the Keras
        operation nodes a functional model read from a `.keras` file runs
        (the `not_equal` of a padding mask): Keras's `layers` lists Layer
        instances only; `operations` lists them too. A subclassed model lists
        its layers in the order they went into it (an attribute set, or an
        `append`, `insert`, `d[key] = ` on an attribute's list or dict), and
        keeps a layer an attribute held before it was set again or deleted,
        as Keras's tracker does (`minikeras.layers.layer_record`).

        Example:
            >>> x = mk.Input((3,), name="x")
            >>> model = mk.Model(x, mk.layers.Dense(2, name="d")(x))
            >>> [layer.name for layer in model.layers]
            ['x', 'd']
        """
        if self._inputs is not None and hasattr(self, "_nodes"):
            return [layer for layer in graph_operations(self) if not _is_operation(layer)]
        if self._inputs is not None:
            return [layer for layer in self._layers if not _is_operation(layer)]
        held = [
            value
            for _, owner, value in tracking.walk(self)
            if owner is self and isinstance(value, Layer)
        ]
        return layer_record.in_keras_order(self, held)

    @property
    def operations(self):
        """Everything a functional model's graph calls, in order: its layers and operation nodes.

        Keras's `Functional.operations`: the `layers` (`InputLayer`s
        included), and the Keras operation nodes (`minikeras.saving.keras_ops`)
        a model read from a `.keras` file runs, in Keras's order. For a
        Sequential or a subclassed model, its `layers`.

        Example:
            >>> tokens = mk.Input((3,), dtype="int32")
            >>> not_equal = mk.saving.keras_ops.KERAS_OPERATIONS["NotEqual"](name="not_equal")
            >>> vectors = mk.layers.Embedding(5, 2, name="embedding")(tokens)
            >>> gru = mk.layers.GRU(2, name="gru")
            >>> model = mk.Model(tokens, gru(vectors, mask=not_equal(tokens, 0)))
            >>> [layer.name for layer in model.layers][1:], [op.name for op in model.operations][1:]
            (['embedding', 'gru'], ['embedding', 'not_equal', 'gru'])
        """
        if self._inputs is not None and hasattr(self, "_nodes"):
            return graph_operations(self)
        return self.layers

    @property
    def _accepts_strings(self):
        # A model takes strings when one of its layers does (a StringLookup first, say),
        # or an Input says so (dtype="string"); each layer still checks what reaches it.
        if self._inputs is not None and any(t.dtype == "str" for t in flatten(self._inputs)):
            return True
        return any(layer._accepts_strings for layer in self.layers)

    def get_layer(self, name=None, index=None):
        """Finds one of the model's layers by name or by position.

        Args:
            name: the layer's name.
            index: its position in `layers` (negative counts from the end).

        Returns:
            The `Layer`.

        Raises:
            ValueError: if neither or both are given, or no layer matches (the
                message lists the layers there are).

        Example:
            >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="hidden")])
            >>> model.get_layer("hidden") is model.get_layer(index=0)
            True
        """
        layers = self.layers
        if (name is None) == (index is None):
            raise ValueError(
                f"Model '{self.name}'.get_layer: give a layer name or an index, not "
                f"{'both' if name is not None else 'neither'}"
            )
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"Model '{self.name}'.get_layer: no layer at index {index}; the model "
                    f"has {len(layers)} layers"
                )
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(
            f"Model '{self.name}' has no layer named {name!r}; its layers are "
            f"{[layer.name for layer in layers]}"
        )


def _is_operation(layer):
    # A Keras operation node (minikeras.saving.keras_ops) marks its class so: a layer
    # here, only so that it runs in the graph; in Keras it is no Layer at all.
    return getattr(type(layer), "_keras_operation", False) is True
