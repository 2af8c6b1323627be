"""The core of `minikeras.tree`: what is nested, and `flatten`, `pack_sequence_as`, `map_structure`.

A *structure* is a leaf, or a list, tuple or dict of structures. Anything else
(an array, a Tensor, None, a number) is a leaf. Dict keys come in Keras's
(optree's) order: an `OrderedDict`'s as inserted; any other dict's sorted,
keys of different types by type name first (`0, 1, 'a'`), and as inserted if
they still do not sort. A dict is rebuilt with its own key order and kind: an
`OrderedDict` stays one, a `defaultdict` keeps its `default_factory`.
"""

from collections import OrderedDict, defaultdict

__all__ = ["flatten", "is_nested", "map_structure", "pack_sequence_as"]


def is_nested(structure):
    """Whether `structure` is a list, tuple or dict (not a leaf).

    Args:
        structure: anything.

    Returns:
        A bool.

    Example:
        >>> mk.tree.is_nested([1, 2]), mk.tree.is_nested(np.ones(2))
        (True, False)
    """
    return isinstance(structure, (list, tuple, dict))


def _keys(mapping):
    """A dict's keys in the order its leaves come (see the module)."""
    keys = list(mapping)
    if isinstance(mapping, OrderedDict):
        return keys
    try:
        return sorted(keys)
    except TypeError:
        pass
    try:
        return sorted(keys, key=_type_then_key)
    except TypeError:
        return keys


def _type_then_key(key):
    kind = type(key)
    return (f"{kind.__module__}.{kind.__qualname__}", key)


def _like(mapping, pairs):
    """A dict of `mapping`'s kind holding `pairs` (a defaultdict keeps its factory)."""
    if isinstance(mapping, defaultdict):
        return defaultdict(mapping.default_factory, pairs)
    if isinstance(mapping, OrderedDict):
        return OrderedDict(pairs)
    return dict(pairs)


def flatten(structure):
    """The leaves of `structure`, in order (a dict's by sorted key, an OrderedDict's as inserted).

    Args:
        structure: a leaf, or a list, tuple or dict of structures.

    Returns:
        A list of the leaves; `[structure]` for a leaf.

    Example:
        >>> mk.tree.flatten({"b": [2, 3], "a": 1})
        [1, 2, 3]
    """
    if isinstance(structure, dict):
        return [leaf for key in _keys(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def _rebuild(structure, items):
    """A list, tuple or named tuple of `structure`'s type holding `items`."""
    if hasattr(structure, "_fields"):
        return type(structure)(*items)
    return type(structure)(items)


def pack_sequence_as(structure, flat_sequence):
    """Rebuilds `structure` with its leaves taken in order from `flat_sequence`.

    The inverse of `flatten`: `pack_sequence_as(s, flatten(s))` equals `s`.

    Args:
        structure: the structure to follow.
        flat_sequence: its new leaves, as many as `flatten(structure)` has.

    Returns:
        A structure like `structure` holding the new leaves.

    Raises:
        ValueError: if `flat_sequence` has too few or too many leaves.

    Example:
        >>> mk.tree.pack_sequence_as({"b": [0, 0], "a": 0}, [1, 2, 3])
        {'b': [2, 3], 'a': 1}
    """
    flat_sequence = list(flat_sequence)
    leaves = iter(flat_sequence)

    def pack(item):
        if isinstance(item, dict):
            packed = {key: pack(item[key]) for key in _keys(item)}
            return _like(item, ((key, packed[key]) for key in item))
        if isinstance(item, (list, tuple)):
            return _rebuild(item, [pack(value) for value in item])
        try:
            return next(leaves)
        except StopIteration:
            count = len(flatten(structure))
            raise ValueError(
                f"pack_sequence_as: the structure has {count} leaves, "
                f"but flat_sequence has {len(flat_sequence)}"
            ) from None

    packed = pack(structure)
    if next(leaves, _END) is not _END:
        raise ValueError(
            f"pack_sequence_as: the structure has {len(flatten(structure))} leaves, "
            f"but flat_sequence has {len(flat_sequence)}"
        )
    return packed


_END = object()


def map_structure(func, *structures, none_is_leaf=True):
    """Applies `func` to the leaves of `structures`, position by position.

    Leaves are paired by position in lists and tuples and by key in dicts
    (an `OrderedDict` meets a dict with the same keys in another order).

    Args:
        func: a function of one leaf from each structure.
        *structures: structures of the same shape (at least one).
        none_is_leaf: if True, `func` is called on None leaves too; if False,
            a None stays None without a call, and the other structures must
            hold None at its place (as Keras 3's optree rule).

    Returns:
        A structure like the first, holding `fn`'s results.

    Raises:
        ValueError: if no structure is given or they are not nested the same
            way (`assert_same_structure`, as in Keras).

    Example:
        >>> mk.tree.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
        [11, (22, 33)]
        >>> mk.tree.map_structure(lambda x: x * 2, [1, None], none_is_leaf=False)
        [2, None]
    """
    if not structures:
        raise ValueError("map_structure: give at least one structure")
    fn = func if none_is_leaf else _skipping_none(func)
    if len(structures) == 1:  # the common case, walked once without flattening
        return _map_one(fn, structures[0])
    from minikeras.tree.walks import assert_same_structure  # (walks builds on this module)

    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    return _map_many(fn, structures)


def _skipping_none(func):
    """`func` for `none_is_leaf=False`: a None (in every structure at once) maps to None."""

    def call(*leaves):
        nones = [leaf is None for leaf in leaves]
        if any(nones) and not all(nones):
            found = next(leaf for leaf in leaves if leaf is not None)
            raise ValueError(
                f"map_structure: with none_is_leaf=False the structures must hold None at "
                f"the same places; expected None, got {found!r}"
            )
        return None if nones[0] else func(*leaves)

    return call


def _map_one(fn, structure):
    """`map_structure(fn, structure)` for one structure: `fn` sees leaves in `flatten` order."""
    if isinstance(structure, dict):
        mapped = {key: _map_one(fn, structure[key]) for key in _keys(structure)}
        return _like(structure, ((key, mapped[key]) for key in structure))
    if isinstance(structure, (list, tuple)):
        return _rebuild(structure, [_map_one(fn, item) for item in structure])
    return fn(structure)


def _map_many(fn, structures):
    """`map_structure` of structures known to match: dict items are paired by key."""
    first = structures[0]
    if isinstance(first, dict):
        mapped = {key: _map_many(fn, [s[key] for s in structures]) for key in _keys(first)}
        return _like(first, ((key, mapped[key]) for key in first))
    if isinstance(first, (list, tuple)):
        return _rebuild(first, [_map_many(fn, items) for items in zip(*structures)])
    return fn(*structures)


def _children(structure):
    """(key, child) pairs of a list, tuple or dict (a dict's in `_keys` order)."""
    if isinstance(structure, dict):
        return [(key, structure[key]) for key in _keys(structure)]
    return list(enumerate(structure))


def _rebuilt_from(structure, mapped):
    """`structure`'s container holding `mapped` (a dict of key -> value, in `_children` order)."""
    if isinstance(structure, dict):
        return _like(structure, ((key, mapped[key]) for key in structure))
    return _rebuild(structure, list(mapped.values()))
