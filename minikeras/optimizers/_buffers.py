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
"""

import numpy as np

from minikeras.engine.variable import is_unshared

__all__ = ["UpdateBuffers"]


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
        if is_unshared(variable):
            out = variable._value
        else:
            spare = self._spares[index]
            if spare._value is None or not is_unshared(spare):
                spare._value = np.empty_like(variable._value)
            out = spare._value
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
