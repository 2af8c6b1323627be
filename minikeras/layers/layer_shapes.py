"""`LayerShapes`: the part of `Layer` that answers shape, mask and graph questions.

`compute_output_shape`, `compute_output_spec`, `compute_mask`, and the
symbolic `input` / `output` of a layer's first call in a functional graph.
`Layer` inherits it; it is not used on its own.
"""

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.symbolic import output_spec
from minikeras.tree import flatten, map_structure

__all__ = ["LayerShapes", "computed_attribute"]


class computed_attribute:  # noqa: N801 (used like `property`)
    """A read-only attribute computed by a method, which an instance may still shadow.

    Unlike `property`, it defines no setter (a non-data descriptor): a
    subclass that assigns `self.output = Dense(10)` gets its own attribute,
    as plain Python would have it, instead of an error. Keras's `input`,
    `output`, `inputs`, `outputs` and their shapes use it.

    Args:
        method: the method that computes the value.

    Example:
        >>> class Point:
        ...     @mk.layers.layer.computed_attribute
        ...     def norm(self):
        ...         return 5.0
        >>> point = Point(); before = point.norm; point.norm = 1.0
        >>> before, point.norm
        (5.0, 1.0)
    """

    def __init__(self, method):
        self.method = method
        self.__doc__ = method.__doc__
        self.__name__ = method.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return self.method(instance)


class LayerShapes:
    """The shape, mask and symbolic-graph methods of `Layer`."""

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's outputs, given its inputs and their mask.

        Models call it after each layer, to give the next layer `mask=`. The
        default passes `mask` on if `supports_masking` is True, else returns
        None; layers that make masks (`Embedding`) or change them (an RNN
        without `return_sequences`) override it.

        Args:
            inputs: the inputs the layer was called on.
            mask: the inputs' mask, or None.

        Returns:
            A boolean mask (array or Tensor), a structure of them, or None.

        Example:
            >>> mask = np.array([[True, False, True]] * 2)
            >>> mk.layers.Layer().compute_mask(np.ones((2, 3)), mask) is None
            True
        """
        return mask if self.supports_masking else None

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape`, `None` where a size is not known.

        Built-in layers work it out from their arguments (no data flows).
        This default, for a layer that defines none, builds the layer if
        needed and traces it: it runs the layer twice on zeros, with each
        unknown size replaced by two different placeholder sizes, and reports
        as `None` each output size that differs between the runs.

        Args:
            input_shape: a tuple with `None` for unknown sizes (a list of
                tuples for a layer called on a list).

        Returns:
            The output shape (a tuple, or a structure of them).

        Example:
            >>> mk.layers.Layer().compute_output_shape((None, 3))
            (None, 3)
        """
        several = isinstance(input_shape, list) and all(
            isinstance(s, (list, tuple)) for s in input_shape
        )
        inputs = (
            [SymbolicTensor(s, self.compute_dtype) for s in input_shape]
            if several
            else SymbolicTensor(input_shape, self.compute_dtype)
        )
        if not self.built:
            self._build_on_first_call(inputs)
        return map_structure(lambda spec: spec.shape, self.compute_output_spec(inputs))

    def compute_output_spec(self, *args, **kwargs):
        """The symbolic outputs (shapes and dtypes) of calling the built layer this way.

        The functional API calls it; override it for a layer whose outputs'
        dtypes differ from the layer's dtype. The default uses
        `compute_output_shape` with the shapes of the tensor arguments (one
        shape, or `<argument>_shape` per argument when it takes several), or
        traces the layer when its class defines no `compute_output_shape`.

        Args:
            *args: the call's arguments (symbolic tensors and values).
            **kwargs: its keyword arguments.

        Returns:
            A `SymbolicTensor` or a structure of them.

        Example:
            >>> dense = mk.layers.Dense(3)
            >>> dense.build((None, 5))
            >>> dense.compute_output_spec(mk.Input((None, 5))).shape
            (None, None, 3)
        """
        return output_spec(self, args[0], args[1:], kwargs)

    @computed_attribute
    def input(self):
        """The symbolic input of the layer's first call on symbolic tensors.

        As Keras's `input`: the symbolic tensors of that call's arguments (its
        inputs, further arguments and keywords, a dict by sorted key) as one
        flat list, or the tensor itself when there is one. A layer called
        several times (shared) gives its first call's; later calls are not
        reachable from here.

        Raises:
            AttributeError: if the layer was never called on symbolic tensors.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> first, second = mk.Input((3,)), mk.Input((5, 3))
            >>> _ = dense(first), dense(second)
            >>> dense.input is first
            True
        """
        node = self._first_node("input")
        tensors = [
            leaf
            for leaf in flatten((node.inputs, node.args, node.kwargs))
            if isinstance(leaf, SymbolicTensor)
        ]
        return tensors[0] if len(tensors) == 1 else tensors

    @computed_attribute
    def output(self):
        """The symbolic output of the layer's first call on symbolic tensors.

        A call that gave several tensors (a tuple, a dict) gives them as one
        flat list, as Keras's `output` does; a layer called several times
        (shared) gives its first call's, as Keras does.

        Raises:
            AttributeError: if the layer was never called on symbolic tensors.

        Example:
            >>> dense = mk.layers.Dense(2)
            >>> _ = dense(mk.Input((3,))), dense(mk.Input((5, 3)))
            >>> dense.output.shape
            (None, 2)
        """
        outputs = flatten(self._first_node("output").outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _first_node(self, what):
        nodes = self.__dict__.get("_inbound_nodes", [])
        if not nodes:
            raise AttributeError(
                f"{type(self).__name__} '{self.name}' was never called on symbolic tensors, "
                f"so it has no `{what}`: it has one once called on minikeras.Input tensors "
                "(or outputs of layers called on them)"
            )
        return nodes[0]
