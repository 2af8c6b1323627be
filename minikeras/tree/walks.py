"""The walks and checks of `minikeras.tree` beyond its core, as `keras.tree` has them.

`flatten_with_path`, `map_structure_up_to`, `traverse`, `map_shape_structure`
and `lists_to_tuples` walk a structure as `tree.structure` does;
`assert_same_structure` and `assert_same_paths` compare two.
"""

import warnings

from minikeras.tree.structure import (
    _children,
    _like,
    _rebuild,
    _rebuilt_from,
    is_nested,
)

__all__ = [
    "MAP_TO_NONE",
    "assert_same_paths",
    "assert_same_structure",
    "flatten_with_path",
    "lists_to_tuples",
    "map_shape_structure",
    "map_structure_up_to",
    "traverse",
]


def flatten_with_path(structure):
    """The leaves of `structure` with their paths: the keys and indices that lead to each.

    Args:
        structure: a leaf, or a list, tuple or dict of structures.

    Returns:
        A list of `(path, leaf)` pairs in `flatten` order; a path is a tuple
        (`()` for a leaf given alone).

    Example:
        >>> mk.tree.flatten_with_path({"b": [2, (3,)], "a": 1})
        [(('a',), 1), (('b', 0), 2), (('b', 1, 0), 3)]
    """
    if not is_nested(structure):
        return [((), structure)]
    return [
        ((key, *path), leaf)
        for key, child in _children(structure)
        for path, leaf in flatten_with_path(child)
    ]


def assert_same_structure(a, b, check_types=None):
    """Raises a ValueError unless `a` and `b` are nested the same way.

    At each level the containers must be of one type (a list is not a tuple,
    and named tuples must be of one class; any two dicts match if their keys
    do, in any order: an `OrderedDict` matches a dict) with as many items.
    The leaves may differ.

    Args:
        a: a structure.
        b: a structure.
        check_types: deprecated in Keras and without effect; giving it warns.
            `assert_same_paths` is the looser check.

    Returns:
        None.

    Raises:
        ValueError: naming the path where the two differ.

    Example:
        >>> mk.tree.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
        >>> mk.tree.assert_same_structure([1, 2], (1, 2))
        Traceback (most recent call last):
        ...
        ValueError: assert_same_structure: at path (), a list against a tuple
    """
    if check_types is not None:
        warnings.warn(
            "assert_same_structure: check_types has no effect (as in Keras); "
            "assert_same_paths is the looser check",
            DeprecationWarning,
            stacklevel=2,
        )
    _check_same("assert_same_structure", a, b, (), deeper=False)


def _check_same(owner, a, b, path, deeper):
    """Raises unless `b` is nested as `a` (or, with `deeper`, has `a`'s layout above `b`'s)."""
    if not is_nested(a):
        if is_nested(b) and not deeper:
            raise ValueError(f"{owner}: at path {path}, a leaf against a {type(b).__name__}")
        return
    same_kind = isinstance(b, dict) if isinstance(a, dict) else type(b) is type(a)
    if not same_kind:
        raise ValueError(
            f"{owner}: at path {path}, a {type(a).__name__} against a {type(b).__name__}"
        )
    a_keys = [key for key, _ in _children(a)]
    b_keys = [key for key, _ in _children(b)]
    same_keys = set(a_keys) == set(b_keys) if isinstance(a, dict) else a_keys == b_keys
    if not same_keys:
        raise ValueError(f"{owner}: at path {path}, keys or indices {a_keys} against {b_keys}")
    for key, child in _children(a):
        _check_same(owner, child, b[key], (*path, key), deeper)


def assert_same_paths(a, b):
    """Raises a ValueError unless `a` and `b` have leaves at the same paths.

    Looser than `assert_same_structure`: a list and a tuple of one length
    match, since only the keys and indices leading to the leaves count.

    Args:
        a: a structure.
        b: a structure.

    Returns:
        None.

    Raises:
        ValueError: listing the paths found in only one of them.

    Example:
        >>> mk.tree.assert_same_paths([1, 2], (3, 4))
        >>> mk.tree.assert_same_paths({"a": 1}, {"b": 1})
        Traceback (most recent call last):
        ...
        ValueError: assert_same_paths: paths only in a: [('a',)]; paths only in b: [('b',)]
    """
    a_paths = {path for path, _ in flatten_with_path(a)}
    b_paths = {path for path, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        raise ValueError(
            f"assert_same_paths: paths only in a: {sorted(a_paths - b_paths, key=repr)}; "
            f"paths only in b: {sorted(b_paths - a_paths, key=repr)}"
        )


def map_structure_up_to(shallow_structure, func, *structures):
    """Applies `func` to the parts of `structures` found where `shallow_structure` has leaves.

    Each structure must have `shallow_structure`'s layout, and may go deeper
    below its leaves: what is there is handed to `func` whole.

    Args:
        shallow_structure: the layout to follow.
        func: a function of one part from each structure.
        *structures: structures with that layout (at least one).

    Returns:
        A structure of `shallow_structure`'s layout holding `func`'s results.

    Raises:
        TypeError: if no structure is given.
        ValueError: if a structure does not have `shallow_structure`'s layout.

    Example:
        >>> mk.tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2, 2]])
        [2, 3]
        >>> mk.tree.map_structure_up_to([None, [None, None]], str, [[1, 1], [2, 2]])
        ['[1, 1]', ['2', '2']]
    """
    if not structures:
        raise TypeError("map_structure_up_to: give at least one structure")
    for structure in structures:
        _check_same("map_structure_up_to", shallow_structure, structure, (), deeper=True)

    def walk(shallow, parts):
        if not is_nested(shallow):
            return func(*parts)
        mapped = {
            key: walk(child, [part[key] for part in parts]) for key, child in _children(shallow)
        }
        return _rebuilt_from(shallow, mapped)

    return walk(shallow_structure, list(structures))


def lists_to_tuples(structure):
    """`structure` with every list, at any depth, made a tuple.

    Args:
        structure: a structure.

    Returns:
        The same structure with tuples for lists (dicts stay dicts).

    Example:
        >>> mk.tree.lists_to_tuples({"a": [1, [2]], "b": (3, [4])})
        {'a': (1, (2,)), 'b': (3, (4,))}
    """
    if isinstance(structure, dict):
        return _like(structure, ((key, lists_to_tuples(v)) for key, v in structure.items()))
    if isinstance(structure, (list, tuple)):
        items = [lists_to_tuples(item) for item in structure]
        return tuple(items) if isinstance(structure, list) else _rebuild(structure, items)
    return structure


class MAP_TO_NONE:  # noqa: N801 (Keras's name)
    """What a `traverse` function returns to put None in the place of what it was given.

    (Returning None itself means "leave this as it is".)

    Example:
        >>> mk.tree.traverse(lambda x: mk.tree.MAP_TO_NONE if x == 2 else None, [1, (2, 3)])
        [1, (None, 3)]
    """


def traverse(func, structure, top_down=True):
    """Applies `func` to every node of `structure`, containers too, from the top or the bottom.

    Top down, `func` sees a container before its items: a result other than
    None replaces the container, whose items are then not visited; None
    visits its items. Bottom up, `func` sees the items first, then their
    container rebuilt from their results. Either way, None leaves the node
    as it is, and `MAP_TO_NONE` puts None in its place.

    Args:
        func: a function of one node.
        structure: a structure.
        top_down: whether containers come before their items.

    Returns:
        The structure with `func`'s replacements.

    Example:
        >>> mk.tree.traverse(lambda x: "pair" if isinstance(x, tuple) else None, [1, (2, 3)])
        [1, 'pair']
        >>> mk.tree.traverse(
        ...     lambda x: len(x) if isinstance(x, list) else None, [[1], [2, 3]], top_down=False
        ... )
        2
    """

    def visit_children(node):
        if not is_nested(node):
            return node
        mapped = {key: traverse(func, child, top_down) for key, child in _children(node)}
        return _rebuilt_from(node, mapped)

    if top_down:
        result = func(structure)
        if result is None:
            return visit_children(structure)
    else:
        structure = visit_children(structure)
        result = func(structure)
        if result is None:
            return structure
    return None if result is MAP_TO_NONE else result


def map_shape_structure(func, structure):
    """Applies `func` to the shapes in `structure`: lists or tuples of ints and Nones.

    Like `map_structure`, except that a shape such as `(None, 3)` is passed
    to `func` whole rather than walked into.

    Args:
        func: a function of one shape (or other leaf).
        structure: a structure of shapes.

    Returns:
        The structure holding `func`'s results.

    Example:
        >>> mk.tree.map_shape_structure(len, {"a": (None, 3), "b": [(2,), (4, 5, 6)]})
        {'a': 2, 'b': [1, 3]}
    """
    if isinstance(structure, (list, tuple)) and all(
        isinstance(size, int) or size is None for size in structure
    ):
        return func(structure)
    if not is_nested(structure):
        return func(structure)
    mapped = {key: map_shape_structure(func, child) for key, child in _children(structure)}
    return _rebuilt_from(structure, mapped)
