"""The core of `minikeras.tree`: what is nested, and `flatten`, `pack_sequence_as`, `map_structure`.

A *structure* is a leaf, or a list, tuple or dict of structures. Anything else
(an array, a Tensor, None, a number) is a leaf. As in Keras, a dict's leaves
come in the order of its sorted keys (insertion order if the keys do not
sort), and a dict is rebuilt with its own key order.
"""

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
    try:
        return sorted(mapping)
    except TypeError:
        return list(mapping)


def flatten(structure):
    """The leaves of `structure`, in order (a dict's by sorted key).

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
            return {key: packed[key] for key in item}
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


def map_structure(fn, *structures):
    """Applies `fn` to the leaves of `structures`, position by position.

    Args:
        fn: a function of one leaf from each structure.
        *structures: structures of the same shape (at least one).

    Returns:
        A structure like the first, holding `fn`'s results.

    Raises:
        ValueError: if no structure is given or they are not nested the same
            way (`assert_same_structure`, as in Keras).

    Example:
        >>> mk.tree.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
        [11, (22, 33)]
    """
    if not structures:
        raise ValueError("map_structure: give at least one structure")
    if len(structures) == 1:  # the common case, walked once without flattening
        return _map_one(fn, structures[0])
    from minikeras.tree.walks import assert_same_structure  # (walks builds on this module)

    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(structure) for structure in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def _map_one(fn, structure):
    """`map_structure(fn, structure)` for one structure: `fn` sees leaves in `flatten` order."""
    if isinstance(structure, dict):
        mapped = {key: _map_one(fn, structure[key]) for key in _keys(structure)}
        return {key: mapped[key] for key in structure}
    if isinstance(structure, (list, tuple)):
        return _rebuild(structure, [_map_one(fn, item) for item in structure])
    return fn(structure)


def _children(structure):
    """(key, child) pairs of a list, tuple or dict (a dict's by sorted key)."""
    if isinstance(structure, dict):
        return [(key, structure[key]) for key in _keys(structure)]
    return list(enumerate(structure))


def _rebuilt_from(structure, mapped):
    """`structure`'s container holding `mapped` (a dict of key -> value, in `_children` order)."""
    if isinstance(structure, dict):
        return {key: mapped[key] for key in structure}
    return _rebuild(structure, list(mapped.values()))
