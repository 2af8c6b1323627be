"""The lists and dicts a layer's attributes hold, recording when a layer goes in or out.

Keras 3 orders a layer's sub-layers (its `_layers`, hence `layers`,
`weights` and the `layers` group of a weights file) by when each was put
into the layer: an attribute set, or a tracked list's `append`, `insert`,
`extend` and a tracked dict's `[key] = ` and `update`, at that moment
(`keras/src/utils/tracking.py`). So an attribute's list is copied into a
`RecordedList` (a dict into a `RecordedDict`) when it is assigned, as Keras
copies it into a `TrackedList`, and its methods tell `layer_record` what
went in and out, Keras's way:

- `append`, `insert`, `extend`, dict `[key] = `, `update`: the layer is
  placed now;
- `pop`, `remove`, `del lst[i]`, `clear`, dict `pop`, `popitem`, `clear`:
  the layer leaves (Keras untracks it);
- list `[i] = `, slices, dict `setdefault`, `|=`, and `+=` through a name
  other than the attribute: Keras does not follow them. The layer put in is
  left out of `layers` and `weights` (as in Keras; a `TrackingWarning`
  says so), the layer it replaced stays, and the weights file still has
  both where the walk meets them;
- `del d[key]`, dict `[key] = ` over a layer: the former layer stays.

Only lists, dicts and `OrderedDict`s that hold a layer (or nothing yet)
are copied; those holding only numbers or Variables are left as they are.
A deep copy (or a pickle) of the owner records for the copy; a copy of the
list alone (`copy.copy`, `copy.deepcopy`) is a plain list, and one made by
`type(x)(items)` (as `tree.map_structure` and configs make them) records
nothing.
"""

import copy
import weakref
from collections import OrderedDict

from minikeras.engine.variable import TrackingGeneration
from minikeras.layers import layer_record

__all__ = ["RecordedDict", "RecordedList", "RecordedOrderedDict", "recorded"]


def recorded(owner, value):
    """`value` with its lists and dicts that may hold layers recorded for `owner`.

    Args:
        owner: the Layer whose attribute `value` is set to.
        value: the attribute's new value.

    Returns:
        `value` itself, or a copy of it: a `RecordedList` for a list, a
        `RecordedDict` for a dict, a tuple of recorded items for a tuple.

    Example:
        >>> owner = mk.layers.Layer()
        >>> type(mk.layers.layer_containers.recorded(owner, [mk.layers.Dense(2)])).__name__
        'RecordedList'
    """
    kind = type(value)
    if kind in _PLAIN:
        if value._owner() is owner:
            return value
        value = _PLAIN[kind](value)
        kind = type(value)
    if kind is list:
        if value and not layer_record.layers_in(value):
            return value
        return RecordedList([recorded(owner, item) for item in value], owner)
    if kind is dict or kind is OrderedDict:
        if value and not layer_record.layers_in(value):
            return value
        items = {key: recorded(owner, item) for key, item in value.items()}
        return (RecordedDict if kind is dict else RecordedOrderedDict)(items, owner=owner)
    if isinstance(value, tuple) and layer_record.layers_in(value):
        items = [recorded(owner, item) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        return kind(*items) if hasattr(value, "_fields") else kind(items)
    return value


class _Recorded:
    """What `RecordedList` and `RecordedDict` share: the owner, and telling its record."""

    def _tell(self, change, value):
        owner = self._owner()
        if owner is not None:
            layers = layer_record.layers_in(value)
            if layers:
                change(owner, layers)
                TrackingGeneration.bump()  # (the cached weight lists are stale)

    def _untracked(self, value):
        self._tell(layer_record.leave_out, value)

    def __reduce_ex__(self, protocol):
        # A pickle of the owner gets a copy that records for the copy.
        return (_rebuilt, (type(self), self._owner(), _PLAIN[type(self)](self)))

    def __deepcopy__(self, memo):
        # A deep copy of the owner (which `memo` then holds) records for the copy; a deep
        # copy of the container alone is a plain one (it does not copy the whole owner).
        owner = self._owner()
        copied_owner = memo.get(id(owner)) if owner is not None else None
        items = copy.deepcopy(_PLAIN[type(self)](self), memo)
        return items if copied_owner is None else _rebuilt(type(self), copied_owner, items)

    def __copy__(self):
        return _PLAIN[type(self)](self)  # (a shallow copy owns nothing)


def _rebuilt(kind, owner, items):
    """A `kind` of `items` recording for `owner` (a plain list or dict without one)."""
    if owner is None:
        return items
    return kind(items, owner=owner)


def _no_owner():
    return None


class RecordedList(_Recorded, list):
    """A list at a layer's attribute that places the layers put into it (see the module).

    Args:
        items: its first items.
        owner: the Layer whose attribute holds it; None for a list that
            records nothing (one made from it by `type(x)(items)`).

    Example:
        >>> model = mk.Model()
        >>> model.blocks = [mk.layers.Dense(2, name="first")]
        >>> model.head = mk.layers.Dense(2, name="head")
        >>> model.blocks.append(mk.layers.Dense(2, name="appended"))
        >>> [layer.name for layer in model.layers]
        ['first', 'head', 'appended']
    """

    def __init__(self, items=(), owner=None):
        super().__init__(items)
        self._owner = _no_owner if owner is None else weakref.ref(owner)

    def append(self, value):
        super().append(value)
        self._tell(layer_record.place, value)

    def insert(self, index, value):
        super().insert(index, value)
        self._tell(layer_record.place, value)

    def extend(self, values):
        owner = self._owner()
        values = [value if owner is None else recorded(owner, value) for value in values]
        super().extend(values)
        self._tell(layer_record.place, values)

    def __iadd__(self, values):
        # Keras follows `self.blocks += [...]` only through the attribute set that
        # follows it (Layer.__setattr__ places them then), not through another name.
        values = list(values)
        super().__iadd__(values)
        self._untracked(values)
        return self

    def __setitem__(self, index, value):
        old = self[index]
        super().__setitem__(index, value)
        self._tell(layer_record.keep, old)
        self._untracked(value)

    def __delitem__(self, index):
        old = self[index]
        super().__delitem__(index)
        self._tell(layer_record.drop, old)

    def pop(self, index=-1):
        value = super().pop(index)
        self._tell(layer_record.drop, value)
        return value

    def remove(self, value):
        index = next((i for i, item in enumerate(self) if item is value), None)
        if index is None:
            index = self.index(value)
        self.pop(index)

    def clear(self):
        old = list(self)
        super().clear()
        self._tell(layer_record.drop, old)


class RecordedDict(_Recorded, dict):
    """A dict at a layer's attribute that places the layers put into it (see the module).

    Args:
        *args: its first items, as `dict` takes them.
        owner: the Layer whose attribute holds it; None for a dict that
            records nothing (one made from it by `type(x)(items)`).
        **kwargs: more first items, as `dict` takes them.

    Example:
        >>> model = mk.Model()
        >>> model.parts = {"a": mk.layers.Dense(2, name="a")}
        >>> model.head = mk.layers.Dense(2, name="head")
        >>> model.parts["b"] = mk.layers.Dense(2, name="b")
        >>> [layer.name for layer in model.layers]
        ['a', 'head', 'b']
    """

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._owner = _no_owner if owner is None else weakref.ref(owner)

    def __setitem__(self, key, value):
        old = self.get(key)
        super().__setitem__(key, value)
        self._tell(layer_record.place, value)
        self._tell(layer_record.keep, old)

    def update(self, *args, **kwargs):
        owner, items = self._owner(), dict(*args, **kwargs)
        if owner is not None:
            items = {key: recorded(owner, value) for key, value in items.items()}
        old = [self[key] for key in items if key in self]
        super().update(items)
        self._tell(layer_record.place, list(items.values()))
        self._tell(layer_record.keep, old)

    def __ior__(self, other):
        other = dict(other)
        old = [self[key] for key in other if key in self]
        super().update(other)
        self._untracked(list(other.values()))
        self._tell(layer_record.keep, old)
        return self

    def setdefault(self, key, default=None):
        if key not in self:
            self._untracked(default)
        return super().setdefault(key, default)

    def __delitem__(self, key):
        old = self[key]
        super().__delitem__(key)
        self._tell(layer_record.keep, old)

    def pop(self, key, *default):
        had = key in self
        value = super().pop(key, *default)
        if had:
            self._tell(layer_record.drop, value)
        return value

    def popitem(self):
        key, value = super().popitem()
        self._tell(layer_record.drop, value)
        return key, value

    def clear(self):
        old = list(self.values())
        super().clear()
        self._tell(layer_record.drop, old)


class RecordedOrderedDict(RecordedDict, OrderedDict):
    """An `OrderedDict` at a layer's attribute that places the layers put into it.

    As `RecordedDict`, keeping `OrderedDict`'s methods (Keras tracks an
    `OrderedDict` as it tracks a dict).

    Args:
        *args: its first items, as `OrderedDict` takes them.
        owner: the Layer whose attribute holds it, or None.
        **kwargs: more first items.

    Example:
        >>> from collections import OrderedDict
        >>> model = mk.Model()
        >>> model.parts = OrderedDict()
        >>> model.head = mk.layers.Dense(2, name="head")
        >>> model.parts["b"] = mk.layers.Dense(2, name="b")
        >>> [layer.name for layer in model.layers]
        ['head', 'b']
    """


# Each recording container's plain kind: what a copy of it alone is.
_PLAIN = {RecordedList: list, RecordedDict: dict, RecordedOrderedDict: OrderedDict}
