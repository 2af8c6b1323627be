"""Nested structures of lists, tuples (named ones too) and dicts, as `keras.tree` has them.

`flatten`, `pack_sequence_as` and `map_structure` are the core; the walks
Keras also has (`flatten_with_path`, `map_structure_up_to`, `traverse`,
`map_shape_structure`, `lists_to_tuples`) and the checks
(`assert_same_structure`, `assert_same_paths`) follow them.

A *structure* is a leaf, or a list, tuple or dict of structures. Anything else
(an array, a Tensor, None, a number) is a leaf. As in Keras, a dict's leaves
come in the order of its sorted keys (keys of different types sorted by type
name first, as inserted if they still do not sort), an `OrderedDict`'s as
inserted; a dict is rebuilt with its own key order and kind (a `defaultdict`
keeps its `default_factory`).

The one copy of these helpers in the package: the tape flattens its sources
with them. Imports nothing else from minikeras, so that any module can use it.
"""

from minikeras.tree.structure import flatten, is_nested, map_structure, pack_sequence_as
from minikeras.tree.walks import (
    MAP_TO_NONE,
    assert_same_paths,
    assert_same_structure,
    flatten_with_path,
    lists_to_tuples,
    map_shape_structure,
    map_structure_up_to,
    traverse,
)

__all__ = [
    "MAP_TO_NONE",
    "assert_same_paths",
    "assert_same_structure",
    "flatten",
    "flatten_with_path",
    "is_nested",
    "lists_to_tuples",
    "map_shape_structure",
    "map_structure",
    "map_structure_up_to",
    "pack_sequence_as",
    "traverse",
]
