"""Where an optimizer's update writes: the one place that reuses arrays in place.

Design note. Reads of a Variable are snapshots (see `Variable.assign`): a
Tensor read before an update, a slice of it, or what a persistent tape
recorded keeps the value it saw. So an update writes into an array only when
nothing else holds it, and every such decision asks one question,
`engine.variable.is_unshared`, whose reference count is calibrated once, in
`engine/variable.py`. `Variable.assign`, `assign_add` and `assign_sub` ask it
too, so an optimizer written with `update_step` gets the same guarantee
without knowing any of this.

For the built-in optimizers' fused updates (`Optimizer._fused_step`) the
new value of a variable goes:

1. into the variable's own array, when it is unshared (as in a training
   loop: a tape lets go of what it read once `gradient` has run);
2. otherwise into the array the variable had before its previous update
   (its spare), if nothing holds that one any more;
3. otherwise into a new array.

Slot variables (moments, velocities) are updated in their own arrays, copied
first when someone holds them. Intermediate results go to scratch arrays
that are never handed out.

Small variables are updated together (`FlatSlots`, as PyTorch's "foreach"
optimizers do): a model's biases and small kernels cost a dozen numpy calls
each per update, nearly all of it call overhead. Their slots are views into
one array per slot kind, their gradients are copied into one array, and the
rule runs once on those. Without weight decay the variables' values are
packed the same way and the rule writes the new values in place, in one
call; with it, each variable takes its share of the step, as the rule wrote
it into `delta`. A held read (a view or a slice of a packed array included)
is found by reference counts as above, and the slots or values are packed
afresh, into new arrays, before the next update writes.
"""

from sys import getrefcount

import numpy as np

from minikeras.engine.variable import UNSHARED_REFS, is_unshared

__all__ = ["FlatSlots", "UpdateBuffers", "unpacked"]

# Variables up to this many entries are updated together: past it the call
# overhead a flat update saves is small next to the copy of the gradient.
FLAT_MAX_SIZE = 16384


class _Spare:
    """Holds a variable's previous array, in `_value` so that `is_unshared` can ask about it."""

    __slots__ = ("_value",)

    def __init__(self):
        self._value = None


class UpdateBuffers:
    """The arrays one optimizer writes into: spares per variable, scratch per shape.

    Example:
        >>> buffers = mk.optimizers._buffers.UpdateBuffers(1)
        >>> w = mk.Variable([1.0, 2.0])
        >>> out, _, _ = buffers.prepare(0, w, [])
        >>> out is w._value  # nothing else holds it
        True
    """

    def __init__(self, count):
        self._spares = [_Spare() for _ in range(count)]
        self._scratch = {}  # (shape, dtype) -> a pair of arrays
        self.flat = None  # the FlatSlots of the small variables, made at the first update
        self.flat_checked = False

    def target(self, index, variable):
        """The array the new value of `variable` goes to (the value part of `prepare`).

        Args:
            index: the variable's index in the optimizer's list.
            variable: the Variable.

        Returns:
            The variable's own array if it is unshared, else its spare.

        Example:
            >>> w = mk.Variable([1.0])
            >>> mk.optimizers._buffers.UpdateBuffers(1).target(0, w) is w._value
            True
        """
        if is_unshared(variable):
            return variable._value
        spare = self._spares[index]
        if spare._value is None or not is_unshared(spare):
            spare._value = np.empty_like(variable._value)
        return spare._value

    def prepare(self, index, variable, slots):
        """Where the update of `variable` (number `index`) writes, decided in one call.

        Args:
            index: the variable's index in the optimizer's list.
            variable: the Variable.
            slots: its slot Variables.

        Returns:
            `(out, slot_arrays, scratch)`: the array for the new value (the
            variable's own if it is unshared, else a spare); the slots'
            arrays, each copied first if someone else holds it; and the pair
            of scratch arrays for its shape.

        Example:
            >>> buffers = mk.optimizers._buffers.UpdateBuffers(1)
            >>> w, slot = mk.Variable([1.0]), mk.Variable([0.0])
            >>> held = w.value
            >>> out, (slot_array,), scratch = buffers.prepare(0, w, [slot])
            >>> out is w._value, slot_array is slot._value
            (False, True)
        """
        out = self.target(index, variable)
        arrays = []
        for slot in slots:
            if not is_unshared(slot):
                slot._value = slot._value.copy()
            arrays.append(slot._value)
        pair = self._scratch.get((out.shape, out.dtype))
        if pair is None:
            pair = self.scratch(out)
        return out, arrays, pair

    def commit(self, index, variable, out):
        """Makes `out` the value of `variable`; its old array becomes the spare.

        Args:
            index: the variable's index.
            variable: the Variable.
            out: the array `prepare` returned, now holding the new value.

        Returns:
            None.

        Example:
            >>> buffers = mk.optimizers._buffers.UpdateBuffers(1)
            >>> w = mk.Variable([1.0])
            >>> buffers.commit(0, w, np.array([2.0], np.float32))
            >>> w.numpy()
            array([2.], dtype=float32)
        """
        if out is not variable._value:
            self._spares[index]._value = variable._value
            variable._value = out

    def scratch(self, like):
        """Two arrays shaped like `like` for intermediate results, shared per shape.

        Args:
            like: a numpy array.

        Returns:
            A list of two C-ordered arrays of `like`'s shape and dtype.

        Example:
            >>> pair = mk.optimizers._buffers.UpdateBuffers(0).scratch(np.zeros((2, 3), np.float32))
            >>> [array.shape for array in pair]
            [(2, 3), (2, 3)]
        """
        key = (like.shape, like.dtype)
        pair = self._scratch.get(key)
        if pair is None:
            pair = self._scratch[key] = [np.empty(like.shape, like.dtype) for _ in range(2)]
        return pair


class FlatSlots:
    """The slots of a group of small variables, packed into one array per slot kind.

    Args:
        indices: the variables' indices in the optimizer's list, ascending.
        variables: the optimizer's variables (all of `indices` share a dtype).
        slots: per variable of the optimizer, its slot Variables.

    Attributes:
        indices: as given, a tuple.
        others: the indices of the optimizer's other variables.
        gradient: the array the group's gradients are copied into.
        zeros: zeros, the `value` the rule sees: what it writes to `delta`
            is then the step itself (rules write `out = value +- step`).
        delta: the step of every variable of the group, after the rule ran.
        deltas: per variable, the view of `delta` of its shape.
        scratch: the rule's two scratch arrays.
        flats: per slot kind, the packed array.

    Example:
        >>> from minikeras.optimizers._buffers import FlatSlots
        >>> a, b = mk.Variable([1.0, 2.0]), mk.Variable([[3.0]])
        >>> ma, mb = mk.Variable([0.5, 0.5]), mk.Variable([[0.25]])
        >>> group = FlatSlots((0, 1), [a, b], [[ma], [mb]])
        >>> group.flats[0]
        array([0.5 , 0.5 , 0.25], dtype=float32)
        >>> group.flats[0][2] = 1.0; mb.numpy()
        array([[1.]], dtype=float32)
    """

    @staticmethod
    def members(variables, slots):
        """The indices worth updating together: small variables of the commonest dtype.

        Args:
            variables: the optimizer's variables.
            slots: per variable, its slot Variables.

        Returns:
            A tuple of indices, empty when fewer than two variables qualify.

        Example:
            >>> small, big = mk.Variable(np.ones(4)), mk.Variable(np.ones(20000))
            >>> mk.optimizers._buffers.FlatSlots.members([small, big, small], [[], [], []])
            (0, 2)
        """
        small = [i for i, v in enumerate(variables) if v._value.size <= FLAT_MAX_SIZE]
        if not small:
            return ()
        dtypes = [variables[i]._value.dtype for i in small]
        dtype = max(set(dtypes), key=dtypes.count)
        kinds = len(slots[small[0]])
        chosen = tuple(
            i
            for i in small
            if variables[i]._value.dtype == dtype
            and len(slots[i]) == kinds
            and all(slot._value.dtype == dtype for slot in slots[i])
        )
        return chosen if len(chosen) >= 2 else ()

    def __init__(self, indices, variables, slots):
        self.indices = tuple(indices)
        packed = set(self.indices)  # the others, by position, for an update of every variable
        self.others = tuple(i for i in range(len(variables)) if i not in packed)
        shapes = [variables[i]._value.shape for i in self.indices]
        dtype = variables[self.indices[0]]._value.dtype
        sizes = [variables[i]._value.size for i in self.indices]
        ends = np.cumsum(sizes).tolist()
        self._bounds = list(zip([0, *ends[:-1]], ends, shapes))
        total = ends[-1]
        self.gradient = np.empty(total, dtype)
        self.zeros = np.zeros(total, dtype)
        self.delta = np.empty(total, dtype)
        self.deltas = [self.delta[start:stop].reshape(shape) for start, stop, shape in self._bounds]
        self.scratch = [np.empty(total, dtype) for _ in range(2)]
        self._slots = [list(slots[i]) for i in self.indices]
        self.flats = []
        self._refs = []
        self.pack()
        self._variables = [variables[i] for i in self.indices]
        self.values = None  # the variables' values, packed by `pack_values` when first used
        self._values_refs = None

    def pack(self):
        """Copies the slots' values into new packed arrays and makes each slot a view of one.

        New arrays, not the old ones: someone may hold a view of those.

        Returns:
            None.
        """
        self.flats = [
            _packed([member[kind] for member in self._slots], self._bounds)
            for kind in range(len(self._slots[0]))
        ]
        self._refs = self._counts()

    def _view(self, kind):
        _view_into([member[kind] for member in self._slots], self.flats[kind], self._bounds)

    def _counts(self):
        # Each view of a packed array (the slots' own, and any slice of them) refers to it.
        return [getrefcount(flat) for flat in self.flats]

    def intact(self):
        """Whether every slot is still its view, and nobody else holds one.

        Returns:
            A bool; when False, `pack` before writing.
        """
        if not self.flats:  # (no slots: SGD without momentum)
            return True
        if self._counts() != self._refs:
            return False
        for member in self._slots:
            for slot, flat in zip(member, self.flats):
                # Each slot still a view of its packed array that nothing else holds. A
                # view is never `is_unshared`: its own count, and the packed array's (which
                # every view and slice of it adds to, checked above). Written out, not a
                # helper: it runs for every slot at every update.
                if slot._value.base is not flat or getrefcount(slot._value) > UNSHARED_REFS:
                    return False
        return True

    def pack_values(self):
        """Copies the variables' values into a new packed array, `values`, and views them.

        Returns:
            None.
        """
        self.values = _packed(self._variables, self._bounds)
        self._values_refs = self._values_count()

    def _values_count(self):
        return getrefcount(self.values)

    def values_intact(self):
        """Whether `values` is packed, every variable still its view, and nobody else holds one.

        Returns:
            A bool; when False, `pack_values` before writing.
        """
        # (`_values_count`, inline: this runs at every update)
        if self.values is None or getrefcount(self.values) != self._values_refs:
            return False
        values = self.values  # (only now: a local adds to the count just compared)
        for variable in self._variables:  # (each its own view, as the slots in `intact`)
            if variable._value.base is not values or getrefcount(variable._value) > UNSHARED_REFS:
                return False
        return True


def unpacked(updates, grads, indices):
    """The `(update, gradient)` pairs a packed run did not do: all but those at `indices`.

    A packed run requires each packed variable's update at the position of
    its index; an update at any other position (the same variable a second
    time in one `apply`) is not done by it, and runs one by one, as eagerly.

    Args:
        updates: `(index, gradient, variable)` triples, each of `indices` at its position.
        grads: the gradients, in the order of `updates`.
        indices: the packed variables' indices.

    Returns:
        A list of `(update, gradient)` pairs, in order.

    Example:
        >>> from minikeras.optimizers._buffers import unpacked
        >>> updates = [(0, "g0", "a"), (1, "g1", "b"), (0, "g2", "a")]
        >>> unpacked(updates, ["g0", "g1", "g2"], (0, 1))
        [((0, 'g2', 'a'), 'g2')]
    """
    packed = set(indices)
    return [pair for position, pair in enumerate(zip(updates, grads)) if position not in packed]


def _packed(holders, bounds):
    """A new array of the holders' values end to end; each holder becomes a view of its part."""
    flat = np.concatenate([holder._value.reshape(-1) for holder in holders])
    _view_into(holders, flat, bounds)
    return flat


def _view_into(holders, flat, bounds):
    for holder, (start, stop, shape) in zip(holders, bounds):
        holder._value = flat[start:stop].reshape(shape)
