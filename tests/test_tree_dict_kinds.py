"""minikeras.tree on OrderedDict, defaultdict and dicts with keys of mixed types, by hand
(optree's rules, which `keras.tree` follows) and against `keras.tree` when installed."""

import collections
import os

import pytest

from minikeras import tree


def _keras_tree():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras").tree


def _ordered():
    return collections.OrderedDict([("b", 1), ("a", [2, 3]), ("c", 4)])


def _default():
    return collections.defaultdict(list, {"b": 1, "a": (2, 3)})


# Keys that do not sort together: sorted by type name ("builtins.float" < "builtins.int"
# < "builtins.str"), then by key.
_MIXED = {"b": "B", 2: "two", "a": "A", 1: "one", 1.5: "one and a half"}


def _same(got, want):
    """Equal, with the same kind and key order at every level."""
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        assert getattr(got, "default_factory", None) is getattr(want, "default_factory", None)
        for key in want:
            _same(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    else:
        assert got == want


def test_an_ordered_dict_keeps_its_insertion_order():
    structure = _ordered()
    assert tree.flatten(structure) == [1, 2, 3, 4]
    assert [path for path, _ in tree.flatten_with_path(structure)] == [
        ("b",),
        ("a", 0),
        ("a", 1),
        ("c",),
    ]
    want = collections.OrderedDict([("b", 10), ("a", [20, 30]), ("c", 40)])
    _same(tree.pack_sequence_as(structure, [10, 20, 30, 40]), want)
    _same(tree.map_structure(lambda x: 10 * x, structure), want)
    _same(tree.traverse(lambda x: None, structure, top_down=False), structure)
    _same(
        tree.lists_to_tuples(structure),
        collections.OrderedDict([("b", 1), ("a", (2, 3)), ("c", 4)]),
    )


def test_a_defaultdict_is_sorted_and_keeps_its_default_factory():
    structure = _default()
    assert tree.flatten(structure) == [2, 3, 1]
    packed = tree.pack_sequence_as(structure, [20, 30, 10])
    _same(packed, collections.defaultdict(list, {"b": 10, "a": (20, 30)}))
    assert packed["missing"] == []
    _same(tree.map_structure(lambda x: x, structure), structure)
    shallow = collections.defaultdict(int, {"b": 0, "a": 0})
    _same(
        tree.map_structure_up_to(shallow, len, {"a": [1, 2], "b": [1]}),
        collections.defaultdict(int, {"b": 1, "a": 2}),
    )


def test_mixed_keys_sort_by_type_name_then_key():
    assert tree.flatten(_MIXED) == ["one and a half", "one", "two", "A", "B"]
    assert [path for path, _ in tree.flatten_with_path(_MIXED)] == [
        (1.5,),
        (1,),
        (2,),
        ("a",),
        ("b",),
    ]
    packed = tree.pack_sequence_as(_MIXED, [1, 2, 3, 4, 5])
    _same(packed, {"b": 5, 2: 3, "a": 4, 1: 2, 1.5: 1})
    # Keys of one type that still do not sort keep their insertion order.
    unsortable = {(1, "a"): 1, ("b", 2): 2, (0, "z"): 3}
    assert tree.flatten(unsortable) == [1, 2, 3]


def test_dicts_of_other_kinds_or_key_orders_pair_up_by_key():
    ordered = _ordered()
    plain = {"a": [20, 30], "c": 40, "b": 10}
    _same(
        tree.map_structure(lambda x, y: x + y, ordered, plain),
        collections.OrderedDict([("b", 11), ("a", [22, 33]), ("c", 44)]),
    )
    _same(tree.map_structure(lambda x, y: x + y, plain, ordered), {"a": [22, 33], "c": 44, "b": 11})
    tree.assert_same_structure(ordered, collections.OrderedDict(sorted(ordered.items())))
    tree.assert_same_structure(ordered, collections.defaultdict(int, plain))
    with pytest.raises(ValueError, match="assert_same_structure"):
        tree.map_structure(lambda x, y: x, ordered, {"a": [1, 2], "b": 1, "d": 4})


def test_the_same_answers_as_keras_tree():
    keras_tree = _keras_tree()
    nested = {
        "x": _ordered(),
        2: _default(),
        "m": dict(_MIXED),
        1: [collections.OrderedDict([(3, "p"), ("q", 0)])],
    }
    for structure in (_ordered(), _default(), dict(_MIXED), nested):
        leaves = tree.flatten(structure)
        assert leaves == keras_tree.flatten(structure)
        assert tree.flatten_with_path(structure) == keras_tree.flatten_with_path(structure)
        fresh = list(range(len(leaves)))
        _same(
            tree.pack_sequence_as(structure, fresh),
            keras_tree.pack_sequence_as(structure, fresh),
        )
        _same(tree.map_structure(str, structure), keras_tree.map_structure(str, structure))
        _same(tree.lists_to_tuples(structure), keras_tree.lists_to_tuples(structure))
        _same(
            tree.traverse(lambda x: None, structure, top_down=False),
            keras_tree.traverse(lambda x: None, structure, top_down=False),
        )
    shallow = collections.defaultdict(int, {"b": 0, "a": 0})
    _same(
        tree.map_structure_up_to(shallow, len, {"a": [1, 2], "b": [1]}),
        keras_tree.map_structure_up_to(shallow, len, {"a": [1, 2], "b": [1]}),
    )
    plain = {"a": [20, 30], "c": 40, "b": 10}
    for a, b in ((_ordered(), plain), (plain, _ordered())):
        _same(
            tree.map_structure(lambda x, y: x + y, a, b),
            keras_tree.map_structure(lambda x, y: x + y, a, b),
        )
