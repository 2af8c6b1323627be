"""`GradientTape`: TensorFlow 2's imperative reverse mode, on autograd.

autograd is functional: `grad(f)(x)` traces `f`. A tape instead records
whatever runs inside its `with` block. It does so with autograd's own
machinery: on entry it takes a fresh trace id; every watched Variable read in
the block (see `read_variable`) and every watched Tensor becomes an autograd
box with a root node of this tape; autograd primitives then build the graph.
`gradient` walks that graph backwards with each node's VJP.

Trace ids only grow, so a tape nested in another records on top of it (its
gradients are themselves recorded by the outer tape: higher-order gradients),
and a stale box left over from an old tape never joins a new one.
"""

import itertools

import numpy as np
from autograd.core import VJPNode, add_outgrads
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import isbox, new_box
from autograd.util import toposort

from minikeras.engine import tensor as _tensor
from minikeras.engine.tensor import Tensor, Variable, wrap

# Start above the ids autograd's own `grad` uses, so that our tapes nest inside them.
_trace_ids = itertools.count(1_000_000)


def _node_in(value, trace_id):
    """The node of `value` in trace `trace_id`, looking through nested boxes."""
    while isbox(value):
        if value._trace == trace_id:
            return value._node
        value = value._value
    return None


def _flatten(structure):
    """The leaves of a (nested) list, tuple or dict, in order."""
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in _flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, leaves):
    """Rebuilds `structure` with its leaves taken in order from iterator `leaves`."""
    if isinstance(structure, dict):
        return {key: _pack(structure[key], leaves) for key in structure}
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, leaves) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else type(structure)(items)
    return next(leaves)


class GradientTape:
    """Records operations so that gradients can be computed in reverse mode.

    Inside `with GradientTape() as tape:` every trainable Variable that is read
    is watched automatically; `tape.watch(x)` watches anything else. Afterwards
    `tape.gradient(target, sources)` returns d(target)/d(sources).

    Args:
        persistent: allow several `gradient` calls (the tape keeps its graph).
        watch_accessed_variables: watch trainable Variables automatically.

    Example:
        >>> w = Variable([1.0, 2.0])
        >>> with GradientTape() as tape:
        ...     loss = ops.sum(w * w)
        >>> tape.gradient(loss, w).numpy()
        array([2., 4.], dtype=float32)
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._trace_id = None
        self._nodes = {}  # id(variable or watched tensor) -> root node
        self._keep_alive = []  # the sources behind the ids above
        self._restore = []  # (tensor, value) for tensors boxed by watch()
        self._used = False

    def __enter__(self):
        if self._trace_id is not None:
            raise RuntimeError("GradientTape: a tape can be entered only once; make a new one")
        self._trace_id = next(_trace_ids)
        _tensor._active_tapes.append(self)
        return self

    def __exit__(self, *exc_info):
        _tensor._active_tapes.remove(self)
        for watched, value in reversed(self._restore):
            watched._value = value
        self._restore = []

    def _root(self, source):
        node = self._nodes.get(id(source))
        if node is None:
            node = VJPNode.new_root()
            self._nodes[id(source)] = node
            self._keep_alive.append(source)
        return node

    def _record_read(self, variable, value):
        """Boxes a Variable's value if this tape watches it (see `read_variable`)."""
        node = self._nodes.get(id(variable))
        if node is None:
            if not (self.watch_accessed_variables and variable.trainable):
                return value
            node = self._root(variable)
        return ArrayBox(value, self._trace_id, node)

    def watch(self, tensor):
        """Makes the tape record operations on `tensor` (or a structure of them).

        Args:
            tensor: a Tensor, a Variable (even a non-trainable one), or a
                list/tuple/dict of them.

        Returns:
            None.

        Raises:
            RuntimeError: if the tape is not recording (outside its `with`).
            TypeError: if `tensor` is not a Tensor.

        Example:
            >>> x = Tensor([3.0])
            >>> with GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.gradient(y, x).numpy()
            array([6.], dtype=float32)
        """
        if self not in _tensor._active_tapes:
            raise RuntimeError("GradientTape.watch: call it inside the tape's `with` block")

        def watch_one(item):
            if not isinstance(item, Tensor):
                raise TypeError(
                    f"GradientTape.watch expects Tensors or Variables, got {type(item).__name__}"
                )
            if isinstance(item, Variable):
                self._root(item)
            elif _node_in(item._value, self._trace_id) is None:
                self._restore.append((item, item._value))
                item._value = new_box(item._value, self._trace_id, self._root(item))

        for item in _flatten(tensor):
            watch_one(item)

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Computes the gradient of `target` with respect to each of `sources`.

        A non-scalar target is summed first (as TensorFlow does), unless
        `output_gradients` gives the vector to pull back.

        Args:
            target: a Tensor computed inside the tape.
            sources: a Variable or Tensor, or a list, tuple or dict of them.
            output_gradients: optional array of `target`'s shape to start from.
            unconnected_gradients: `"none"` gives None for a source that
                `target` does not depend on (TensorFlow's default); `"zero"`
                gives zeros.

        Returns:
            Gradients as Tensors, in the same structure as `sources`.

        Raises:
            RuntimeError: on a second call to a non-persistent tape.
            ValueError: if `unconnected_gradients` is unknown or
                `output_gradients` has the wrong shape.

        Example:
            >>> a, b = Variable(2.0), Variable(5.0)
            >>> with GradientTape() as tape:
            ...     y = a * a
            >>> tape.gradient(y, {"a": a, "b": b})
            {'a': <Tensor shape=() dtype=float32
            4.0>, 'b': None}
        """
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(
                "GradientTape.gradient: unconnected_gradients must be 'none' or 'zero', "
                f"got {unconnected_gradients!r}"
            )
        if self._used and not self.persistent:
            raise RuntimeError(
                "GradientTape.gradient can be called only once on a non-persistent tape; "
                "use GradientTape(persistent=True) to call it several times"
            )
        if self._trace_id is None:
            raise RuntimeError("GradientTape.gradient: the tape never recorded (use `with`)")
        self._used = True
        sources_flat = _flatten(sources)
        nodes = [self._source_node(source) for source in sources_flat]
        wanted = {node: None for node in nodes if node is not None}
        target_value = target._value if isinstance(target, Tensor) else target
        end_node = _node_in(target_value, self._trace_id)
        if end_node is not None and wanted:
            _backward(end_node, self._seed(target_value, output_gradients), wanted)
        grads = []
        for source, node in zip(sources_flat, nodes):
            grad = wanted.get(node) if node is not None else None
            if grad is not None:
                grads.append(wrap(grad))
            elif unconnected_gradients == "zero":
                grads.append(wrap(np.zeros(source.shape, dtype=source.dtype)))
            else:
                grads.append(None)
        if not self.persistent:
            self._nodes, self._keep_alive = {}, []
        return _pack(sources, iter(grads))

    def _source_node(self, source):
        if not isinstance(source, Tensor):
            raise TypeError(
                "GradientTape.gradient: sources must be Variables or Tensors, "
                f"got {type(source).__name__}"
            )
        node = self._nodes.get(id(source))
        if node is None and not isinstance(source, Variable):
            node = _node_in(source._value, self._trace_id)
        return node

    @staticmethod
    def _seed(target_value, output_gradients):
        shape, dtype = np.shape(target_value), target_value.dtype
        if output_gradients is None:
            return np.ones(shape, dtype=dtype)
        seed = np.asarray(output_gradients, dtype=dtype)
        if seed.shape != shape:
            raise ValueError(
                f"GradientTape.gradient: output_gradients has shape {seed.shape}, "
                f"but the target has shape {shape}"
            )
        return seed


def _backward(end_node, seed, wanted):
    """Pulls `seed` back from `end_node`; stores the gradient of each wanted node.

    Like autograd's `backward_pass`, but it keeps the gradients of many nodes.
    """
    outgrads = {end_node: (seed, False)}
    for node in toposort(end_node):
        grad = outgrads.pop(node)[0]
        if node in wanted:
            wanted[node] = grad
        if node.parents:
            for parent, parent_grad in zip(node.parents, node.vjp(grad)):
                outgrads[parent] = add_outgrads(outgrads.get(parent), parent_grad)
