"""`GradientTape`: TensorFlow 2's imperative reverse mode, on autograd.

autograd is functional: `grad(f)(x)` traces `f`. A tape instead records
whatever runs inside its `with` block. It does so with autograd's own
machinery: on entry it takes a fresh trace id; every watched Variable read in
the block (see `read_variable`) and every watched Tensor becomes an autograd
box with a root node of this tape; autograd primitives then build the graph.
`gradient` walks that graph backwards with each node's VJP.

Trace ids only grow, so a tape nested in another records on top of it (its
gradients are themselves recorded by the outer tape: higher-order gradients).
When a tape's block ends its id leaves the thread's `recording_traces`, and every
op strips the boxes of such finished tapes from its inputs (`value_of`): a
Tensor left over from an old tape is a constant for everything that follows,
and work done after the block never joins the old tape's graph.
"""

import itertools
import warnings

import numpy as np
from autograd.core import VJPNode
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras import tree
from minikeras.engine import tensor as _tensor
from minikeras.engine.backward import _backward, may_overwrite
from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import (
    TRACED_TYPES,
    Tensor,
    drop_stale_boxes,
    dtype_of,
    value_of,
    wrap,
)
from minikeras.engine.trace_boxes import _box_at_level, _node_in, _unbox_level
from minikeras.engine.variable import Variable
from minikeras.engine.variable_reads import note_effect

__all__ = ["GradientTape", "may_overwrite"]

# Start above the ids autograd's own `grad` uses, so that our tapes nest inside them.
_trace_ids = itertools.count(_tensor.FIRST_TAPE_TRACE)


def _root_vjp(g):
    """A root node has no parents to pass gradients to."""
    return ()


class GradientTape:
    """Records operations so that gradients can be computed in reverse mode.

    Inside `with GradientTape() as tape:` every trainable Variable that is read
    is watched automatically; `tape.watch(x)` watches anything else. Afterwards
    `tape.gradient(target, sources)` returns d(target)/d(sources).

    For higher-order gradients nest tapes: the work of `inner.gradient` is
    recorded by the tapes around it, not by `inner` itself (so one persistent
    tape differentiating its own gradient gets None, unlike TensorFlow).

    Args:
        persistent: allow several `gradient` calls (the tape keeps its graph).
        watch_accessed_variables: watch trainable Variables automatically.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> with mk.GradientTape() as tape:
        ...     loss = mk.ops.sum(w * w)
        >>> tape.gradient(loss, w).numpy()
        array([2., 4.], dtype=float32)
    """

    # No instance dict: a tape is made every training step.
    __slots__ = (
        "persistent",
        "watch_accessed_variables",
        "_trace_id",
        "_nodes",
        "_keep_alive",
        "_watched_tensors",
        "_used",
        "__weakref__",
    )

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._trace_id = None
        self._nodes = {}  # id(variable or watched tensor) -> root node
        self._keep_alive = []  # the sources behind the ids above
        self._watched_tensors = []  # (tensor, value boxed, value found) from watch()
        self._used = False

    def __enter__(self):
        if self._trace_id is not None:
            raise RuntimeError("GradientTape: a tape can be entered only once; make a new one")
        self._trace_id = next(_trace_ids)
        if TRACING[0] and _state.effect_observers:
            note_effect("a GradientTape")  # (a traced optimizer rule: it cannot tape its values)
        _state.active_tapes.append(self)
        _state.recording_traces.add(self._trace_id)
        return self

    def __exit__(self, *exc_info):
        _state.active_tapes.remove(self)
        _state.recording_traces.discard(self._trace_id)
        for watched, boxed, original in self._watched_tensors:
            value = _unbox_level(watched._value, self._trace_id)
            # Give back what watch() found, stale boxes of older tapes included,
            # so that those tapes can still differentiate the Tensor.
            watched._value = original if value is boxed else value
        self._watched_tensors = []

    def _root(self, source):
        return self._nodes.get(id(source)) or self._new_root(source)  # (a node is never false)

    def _new_root(self, source):
        # What VJPNode.new_root makes, without its two extra calls per read (made so
        # inline too in `_record_read` and `engine.tape_nodes.read_roots`).
        node = VJPNode.__new__(VJPNode)
        node.parents, node.vjp = (), _root_vjp
        self._nodes[id(source)] = node
        self._keep_alive.append(source)
        return node

    def _record_read(self, variable, value):
        """Boxes a Variable's value if this tape watches it (see `read_variable`)."""
        # (engine.tape_nodes.read_roots decides as this does, for the nodes alone)
        node = self._nodes.get(id(variable))
        if node is None:
            # Integers and booleans have no gradient: not watched, as in TensorFlow.
            # (A Variable's `trainable` is its `_trainable`; a subclass's may be its own.)
            trainable = variable._trainable if type(variable) is Variable else variable.trainable
            kind = variable._value.dtype.kind
            if not (self.watch_accessed_variables and trainable and kind in "fc"):
                return value
            node = VJPNode.__new__(VJPNode)  # (`_new_root`, inline: every read of a step)
            node.parents, node.vjp = (), _root_vjp
            self._nodes[id(variable)] = node
            self._keep_alive.append(variable)
        return ArrayBox(value, self._trace_id, node)

    def watch(self, tensor):
        """Makes the tape record operations on `tensor` (or a structure of them).

        Only floating-point (and complex) values have gradients: an integer
        or boolean one is not watched, with a warning, as in TensorFlow (nor
        is an integer Variable the tape reads).

        Args:
            tensor: a Tensor, a Variable (even a non-trainable one), or a
                list/tuple/dict of them.

        Returns:
            None.

        Raises:
            RuntimeError: if the tape is not recording (outside its `with`).
            TypeError: if `tensor` is not a Tensor.

        Example:
            >>> x = mk.Tensor([3.0])
            >>> with mk.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.gradient(y, x).numpy()
            array([6.], dtype=float32)
        """
        if self not in _state.active_tapes:
            raise RuntimeError("GradientTape.watch: call it inside the tape's `with` block")

        def watch_one(item):
            if not isinstance(item, Tensor):
                raise TypeError(
                    f"GradientTape.watch expects Tensors or Variables, got {type(item).__name__}"
                )
            if item.dtype.kind not in "fc":  # (no gradient: TensorFlow warns and goes on)
                warnings.warn(
                    f"GradientTape.watch: the watched tensor has dtype {item.dtype}; only "
                    "floating-point tensors have gradients, so it is not watched",
                    stacklevel=3,
                )
                return
            if isinstance(item, Variable):
                self._root(item)
            elif _node_in(item._value, self._trace_id) is None:
                original = item._value
                value = drop_stale_boxes(original)
                if type(value) in TRACED_TYPES:  # (a traced optimizer rule's)
                    value = value._operand()  # the tape spoiled that trace: the array itself
                item._value = _box_at_level(value, self._trace_id, self._root(item))
                self._watched_tensors.append((item, value, original))

        for item in tree.flatten(tensor):
            watch_one(item)

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Computes the gradient of `target` with respect to each of `sources`.

        A non-scalar target is summed first (as TensorFlow does), unless
        `output_gradients` gives the vector to pull back. A list (or other
        structure) of targets means the gradient of their sum. Only what ran
        inside the `with` block counts: a target computed afterwards from the
        tape's Tensors has no gradient.

        Args:
            target: a Tensor computed inside the tape, or a list, tuple or dict
                of them.
            sources: a Variable or Tensor, or a list, tuple or dict of them
                (nested as you like).
            output_gradients: optional array of `target`'s shape to start from
                (a structure of them for a structure of targets).
            unconnected_gradients: `"none"` gives None for a source that
                `target` does not depend on (TensorFlow's default); `"zero"`
                gives zeros.

        Returns:
            Gradients as Tensors, in the same structure as `sources`; each has
            its source's dtype if that is floating.

        Raises:
            RuntimeError: on a second call to a non-persistent tape, or if the
                tape was never entered.
            TypeError: if a source is not a Tensor or Variable.
            ValueError: if `unconnected_gradients` is unknown or
                `output_gradients` does not match `target`.

        Example:
            >>> a, b = mk.Variable(2.0), mk.Variable(5.0)
            >>> with mk.GradientTape() as tape:
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
        # The common call, `gradient(loss, weights)`: a flat list of Variables,
        # whose nodes are the tape's roots, and one Tensor target to start from.
        kind = type(sources)  # (a list subclass too: a layer's recorded list of weights)
        flat = kind is list or kind is tuple or isinstance(sources, list)
        nodes = None
        if flat:
            roots, nodes = self._nodes, []
            for source in sources:
                if type(source) is not Variable:
                    nodes = None
                    break
                nodes.append(roots.get(id(source)))
        variables = nodes is not None  # (then each source's dtype is its array's)
        if variables:
            sources_flat = sources
        else:
            flat = flat and all(isinstance(source, Tensor) for source in sources)
            sources_flat = sources if flat else tree.flatten(sources)
            nodes = [self._source_node(source) for source in sources_flat]
        if type(target) is Tensor and output_gradients is None:
            # The usual loss, a scalar in one box of this tape: its seed as `_seed` makes it.
            value = target._value
            array = value._value if type(value) is ArrayBox else None
            if (
                (type(array) is np.ndarray or isinstance(array, np.generic))
                and not array.shape
                and value._trace == self._trace_id
            ):
                seeds = {value._node: np.array(1, dtype=array.dtype)}
            else:
                # (a watched Tensor as its own target: its root, as TensorFlow gives 1)
                end = _node_in(value, self._trace_id) or self._nodes.get(id(target))
                seeds = {} if end is None else {end: _seed(value, None)}
        else:
            seeds = self._seeds(target, output_gradients)
        self._used = True
        wanted = dict.fromkeys(nodes)  # (the nodes asked for; None is no node)
        wanted.pop(None, None)
        if seeds and wanted:
            # A tape used once lets go of its graph as it goes (activations, and
            # its hold on the Variables' buffers, which then update in place).
            _backward(seeds, wanted, release=not self.persistent)
        grads, new_tensor = [], Tensor.__new__
        for source, node in zip(sources_flat, nodes):
            grad = wanted[node] if node is not None else None
            # The common case, an array of the source's dtype, wrapped here (as `wrap`).
            dtype = source._value.dtype if variables else source.dtype
            if type(grad) is np.ndarray and grad.dtype == dtype:
                grads.append(new_tensor(Tensor))
                grads[-1]._value = grad
            else:
                grads.append(_as_gradient(source, grad, unconnected_gradients))
        if not self.persistent:
            self._nodes, self._keep_alive = {}, []
        if flat:
            return tuple(grads) if kind is tuple else grads
        return tree.pack_sequence_as(sources, grads)

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

    def _seeds(self, target, output_gradients):
        """{end node: gradient to start from} for the targets this tape recorded."""
        seeds = {}
        if isinstance(target, Tensor):
            pairs = [(target, output_gradients)]
        else:
            pairs = zip(tree.flatten(target), _flatten_as(target, output_gradients))
        for item, output_gradient in pairs:
            if isinstance(item, Variable):
                node = self._nodes.get(id(item))
            elif isinstance(item, Tensor):
                node = _node_in(item._value, self._trace_id) or self._nodes.get(id(item))
            else:
                continue  # a constant
            seed = _seed(item._value, output_gradient)
            if node is not None:
                seeds[node] = seed if node not in seeds else seeds[node] + seed
        return seeds


def _flatten_as(structure, values):
    """The parts of `values` where `structure` has its leaves (all None if None).

    In the order of `tree.flatten(structure)` (a dict's by sorted key); unlike
    it, a leaf of `values` may itself be a list (an output gradient).
    """
    if isinstance(structure, (dict, list, tuple)):
        keys = range(len(structure))
        if isinstance(structure, dict):
            try:
                keys = sorted(structure)
            except TypeError:
                keys = list(structure)
        if values is not None and (
            not isinstance(values, (dict, list, tuple)) or len(values) != len(structure)
        ):
            raise ValueError(
                "GradientTape.gradient: output_gradients must have the structure of the "
                f"target ({len(structure)} items), got {type(values).__name__}"
            )
        return [
            leaf
            for key in keys
            for leaf in _flatten_as(structure[key], None if values is None else values[key])
        ]
    return [values]


def _seed(target_value, output_gradient):
    """The gradient of a target to pull back: ones (a sum), or `output_gradient`."""
    value = getval(target_value)
    if type(value) is np.ndarray or isinstance(value, np.generic):
        shape, dtype = value.shape, value.dtype
    else:
        shape, dtype = np.shape(value), np.result_type(value)
    if output_gradient is None:
        # np.array, not np.ones, for the usual scalar loss: one C call.
        return np.ones(shape, dtype=dtype) if shape else np.array(1, dtype=dtype)
    # value_of keeps an outer tape's box, so a vector-Jacobian product stays differentiable.
    seed = value_of(output_gradient)
    if np.shape(seed) != shape:
        raise ValueError(
            f"GradientTape.gradient: output_gradients has shape {np.shape(seed)}, "
            f"but the target has shape {shape}"
        )
    return seed if isbox(seed) else np.asarray(seed, dtype=dtype)


def _as_gradient(source, grad, unconnected_gradients):
    """The Tensor `gradient` returns for one source."""
    if grad is None:
        if unconnected_gradients == "zero":
            return wrap(np.zeros(source.shape, dtype=source.dtype))
        return None
    dtype = source.dtype
    if type(grad) is np.ndarray and grad.dtype == dtype:
        return wrap(grad)  # the common case, decided without further calls
    # Boxes of tapes that ended meanwhile (an outer tape, say) are history.
    grad = drop_stale_boxes(grad)
    # Data in float64 must not turn a float32 weight's gradient into float64.
    if dtype.kind == "f" and (dtype_of(grad) or dtype) != dtype:
        grad = grad.astype(dtype)
    return wrap(grad)
