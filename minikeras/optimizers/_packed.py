"""A user's elementwise rule run once on its small variables packed together.

Design note. A rule written as `update_step` costs a dozen or more ops per
variable, each ~1 µs of Python whatever the variable's size, so on a model of
small weights the update is nearly all overhead. The built-ins avoid it by
running their fused rule once on the packed slots of the small variables
(`_buffers.FlatSlots`). A user's rule can be run the same way only if running
it on a concatenation gives, element for element, what running it on each
part gives: true of Adam, Adagrad, Lion, RMSprop as written in Keras, false of
a rule that reads a norm, a mean, a shape or a name (LAMB, LARS, Adafactor).
Nothing in Python can tell the two apart, and Keras has no such notion, so
the user says so: `elementwise_rule = True` on the class. Then, at each update
that covers every variable in the built order:

- the slots of the small variables live as views of one packed array per
  slot kind (`FlatSlots`, packed afresh when a read of them is held);
- without weight decay, so are their values (`FlatSlots.pack_values`, as
  for the built-ins), and a stand-in Variable holds the packed values; with
  it, each variable decays on its own and the stand-in holds a copy of them;
- `update_step` runs once, on the stand-in and the concatenated gradients;
  for that call the first small variable's slots hold the packed arrays, and
  `_get_variable_index(stand_in)` gives that variable's index, so the rule
  finds its slots as it always does;
- what the rule's `assign`s wrote (new arrays: a packed array, which views
  refer to, is never unshared) is copied into the packed arrays, unless the
  rule kept a read of those: then the new arrays take their place. With
  weight decay each variable takes its part of the stand-in's new value,
  written as an update is (see `_buffers.UpdateBuffers`).

The packing is declined, and every variable runs one by one, when the
optimizer keeps state the base did not make per variable (a Variable made
with `add_variable` in `build`, which the packed call would pair with the
wrong shape), or when fewer than two variables qualify.
"""

import numpy as np

from minikeras.engine.variable import Variable, is_unshared
from minikeras.optimizers._buffers import FlatSlots, unpacked

__all__ = ["PackedRule"]


class PackedRule:
    """The small variables of an optimizer with `elementwise_rule`, updated by one call.

    Args:
        optimizer: a built `Optimizer`.
        indices: the variables to pack (from `FlatSlots.members`).

    Example:
        >>> class MySGD(mk.optimizers.Optimizer):
        ...     elementwise_rule = True
        ...     def update_step(self, gradient, variable, learning_rate):
        ...         self.assign_sub(variable, learning_rate * gradient)
        >>> a, b = mk.Variable([1.0, 2.0]), mk.Variable([3.0])
        >>> optimizer = MySGD(learning_rate=0.5)
        >>> optimizer.apply([np.ones(2), np.ones(1)], [a, b])
        >>> optimizer._packed_rule.indices, a.numpy(), b.numpy()
        ((0, 1), array([0.5, 1.5], dtype=float32), array([2.5], dtype=float32))
    """

    @staticmethod
    def for_optimizer(optimizer):
        """A `PackedRule` for `optimizer`'s small variables, or None when it must not pack.

        Args:
            optimizer: a built `Optimizer` whose class sets `elementwise_rule`.

        Returns:
            A `PackedRule`, or None.
        """
        variables, slots = optimizer._trainable_variables, optimizer._slots
        made = optimizer._leading + sum(len(member) for member in slots) + len(optimizer._averages)
        if len(optimizer._variables) != made:
            return None  # state of its own, which the packed call could not pair up
        indices = FlatSlots.members(variables, slots)
        return PackedRule(optimizer, indices) if indices else None

    def __init__(self, optimizer, indices):
        variables = optimizer._trainable_variables
        self.indices = tuple(indices)
        self.slots = FlatSlots(self.indices, variables, optimizer._slots)
        self._bounds = self.slots._bounds
        first = variables[self.indices[0]]
        self._first_slots = optimizer._slots[self.indices[0]]
        total = self._bounds[-1][1]
        self.variable = Variable(
            np.zeros(total, first.dtype), dtype=first.dtype, name="packed_variables"
        )
        self.variable.path = f"{optimizer.name}/packed_variables"
        # The stand-in finds the first small variable's slots (see the module docstring).
        optimizer._trainable_variables_indices[id(self.variable)] = self.indices[0]

    def covers(self, updates):
        """Whether `updates` (from `checked_updates`) has every packed variable at its index."""
        count = len(updates)
        return all(index < count and updates[index][0] == index for index in self.indices)

    def update(self, optimizer, updates, grads, learning_rate, decay):
        """Runs `update_step` once for the packed variables; returns the other `(update, grad)`s.

        Args:
            optimizer: the optimizer.
            updates: `(index, gradient, variable)` triples, `covers(updates)` true.
            grads: the (clipped) gradients, in the order of `updates`.
            learning_rate: this step's learning rate.
            decay: the weight decay factor, or None.

        Returns:
            A list of the `(update, gradient)` pairs of the variables not packed.
        """
        if not self.slots.intact():
            self.slots.pack()
        # A new array each step: a rule may keep its gradient, as one given by a tape.
        gradient = np.concatenate([grads[index].reshape(-1) for index in self.indices])
        if decay is None:  # the stand-in holds the packed values, of which the variables are views
            if not self.slots.values_intact():
                self.slots.pack_values()
            self.variable._value = self.slots.values
        else:  # each decays (or not) on its own first; the stand-in holds a copy
            members = [updates[index][2] for index in self.indices]
            for index, variable in zip(self.indices, members):
                if optimizer._decayed[index]:
                    optimizer.assign(variable, variable._value * decay)
            self._gather(members)
        views = [slot._value for slot in self._first_slots]
        for kind, slot in enumerate(self._first_slots):  # (no local left bound to an array)
            slot._value = self.slots.flats[kind]
        try:
            optimizer._rule_runner.run(optimizer, gradient, self.variable, learning_rate)
        finally:
            self._give_back(views)
            if decay is None:
                self._take_values()
        if decay is not None:
            self._scatter(optimizer, members)
        if len(self.indices) == len(updates):
            return ()
        return unpacked(updates, grads, self.indices)

    def _give_back(self, views):
        """Makes the first variable's slots their views again, the packed arrays up to date.

        A packed array is never unshared (its views refer to it), so a rule's
        `assign` to a slot wrote a new array: it is copied into the packed one,
        unless someone (the rule itself) kept a read of that; then the new
        array takes its place, and the next update packs afresh.
        """
        slots, flats = self._first_slots, self.slots.flats
        written = []
        for kind in range(len(slots)):  # (a loop variable bound to a view would count as a hold)
            if slots[kind]._value is flats[kind]:
                slots[kind]._value = views[kind]
            else:
                written.append(kind)
        if written:
            counts = self.slots._counts()
            for kind in written:
                if counts[kind] == self.slots._refs[kind]:
                    np.copyto(flats[kind], slots[kind]._value)
                    slots[kind]._value = views[kind]
                else:  # the rule kept a read of the packed array: the slots move to the new one
                    flats[kind] = slots[kind]._value
                    self.slots._view(kind)
                    self.slots._refs = None  # and the next update packs afresh

    def _take_values(self):
        """Puts the stand-in's new value into the packed values (the variables' own arrays).

        The packed values are never unshared (their views refer to them), so the
        rule's `assign` wrote a new array: it is copied in, unless someone (the
        rule itself) kept a read of the packed values; then the new array takes
        their place, and the next update packs afresh.
        """
        flat, stand_in = self.slots, self.variable
        new = stand_in._value
        stand_in._value = _IDLE  # (the stand-in must not count as a hold of the values)
        if new is flat.values:
            return  # the rule did not write the variable
        if flat._values_count() == flat._values_refs:
            np.copyto(flat.values, new)
            return
        flat.values = new
        for variable, (start, stop, shape) in zip(flat._variables, self._bounds):
            variable._value = new[start:stop].reshape(shape)
        flat._values_refs = None

    def _gather(self, members):
        """The stand-in gets the variables' values, concatenated, in an array of its own."""
        stand_in = self.variable
        if stand_in._value.size != self._bounds[-1][1] or not is_unshared(stand_in):
            stand_in._value = np.empty(self._bounds[-1][1], members[0].dtype)
        np.concatenate([v._value.reshape(-1) for v in members], out=stand_in._value)

    def _scatter(self, optimizer, members):
        """Each variable takes its part of the stand-in's value, written as an update is."""
        result = self.variable._value
        buffers = optimizer._buffers
        for index, variable, (start, stop, shape) in zip(self.indices, members, self._bounds):
            out = buffers.target(index, variable)
            np.copyto(out, result[start:stop].reshape(shape))
            buffers.commit(index, variable, out)


_IDLE = np.empty(0)  # the stand-in's value between updates
