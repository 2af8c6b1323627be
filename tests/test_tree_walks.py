"""`keras.tree`'s walks and checks in `mk.tree`, by hand and against Keras 3 on the same inputs."""

import collections
import warnings

import numpy as np
import pytest

from minikeras import tree

Pair = collections.namedtuple("Pair", "first second")
NESTED = {"b": [1, (2, 3)], "a": Pair(4, [5]), "c": 6}


def test_flatten_with_path_gives_the_keys_to_each_leaf_in_flatten_order():
    paths = tree.flatten_with_path(NESTED)
    assert [leaf for _, leaf in paths] == tree.flatten(NESTED)
    assert [path for path, _ in paths] == [
        ("a", 0),
        ("a", 1, 0),
        ("b", 0),
        ("b", 1, 0),
        ("b", 1, 1),
        ("c",),
    ]
    for path, leaf in paths:  # each path leads to its leaf
        node = NESTED
        for key in path:
            node = node[key]
        assert node == leaf
    assert tree.flatten_with_path(7) == [((), 7)] and tree.flatten_with_path([]) == []


def test_assert_same_structure_checks_types_lengths_and_keys():
    tree.assert_same_structure(NESTED, {"a": Pair("x", ["y"]), "b": [0, (0, 0)], "c": None})
    tree.assert_same_structure({"a": 1}, collections.OrderedDict(a=2))
    cases = [
        ([1, 2], (1, 2), r"at path \(\), a list against a tuple"),
        ([1, (2, 3)], [1, (2,)], r"at path \(1,\), keys or indices \[0, 1\] against \[0\]"),
        ({"a": 1}, {"b": 1}, r"keys or indices \['a'\] against \['b'\]"),
        (1, [1], "a leaf against a list"),
        ([[1]], [1], r"at path \(0,\), a list against a int"),
    ]
    for a, b, message in cases:
        with pytest.raises(ValueError, match=message):
            tree.assert_same_structure(a, b)
    with pytest.warns(DeprecationWarning, match="check_types has no effect"):
        tree.assert_same_structure([1], [2], check_types=False)


def test_assert_same_paths_is_looser():
    tree.assert_same_paths([1, (2, 3)], (4, [5, 6]))  # paths (0,), (1, 0), (1, 1) either way
    with pytest.raises(ValueError, match=r"only in a: \[\('a',\)\]; paths only in b: \[\('b',\)\]"):
        tree.assert_same_paths({"a": 1}, {"b": 1})


def test_map_structure_up_to_hands_over_what_lies_below_the_shallow_leaves():
    result = tree.map_structure_up_to([0, (0, 0)], lambda a, b: (a, b), [1, ([2], 3)], [4, (5, 6)])
    assert result == [(1, 4), (([2], 5), (3, 6))]
    assert tree.map_structure_up_to({"a": None}, len, {"a": [1, 2, 3]}) == {"a": 3}
    with pytest.raises(ValueError, match="a list against a int"):
        tree.map_structure_up_to([0, [0, 0]], len, [1, 2])
    with pytest.raises(ValueError, match="against a tuple"):
        tree.map_structure_up_to([0, 0], len, (1, 2))
    with pytest.raises(TypeError, match="at least one structure"):
        tree.map_structure_up_to([0], len)


def test_lists_to_tuples_keeps_dicts_and_named_tuples():
    assert tree.lists_to_tuples(NESTED) == {"b": (1, (2, 3)), "a": Pair(4, (5,)), "c": 6}
    assert type(tree.lists_to_tuples(NESTED)["a"]) is Pair


def test_traverse_top_down_bottom_up_and_map_to_none():
    seen = []
    assert tree.traverse(lambda x: seen.append(x), [1, (2, 3)]) == [1, (2, 3)]
    assert seen == [[1, (2, 3)], 1, (2, 3), 2, 3]
    seen.clear()
    tree.traverse(lambda x: seen.append(x), [1, (2, 3)], top_down=False)
    assert seen == [1, 2, 3, (2, 3), [1, (2, 3)]]
    # A replaced container's items are not visited top down.
    assert tree.traverse(lambda x: "T" if isinstance(x, tuple) else None, [1, (2, 3)]) == [1, "T"]
    sizes = tree.traverse(
        lambda x: len(x) if isinstance(x, (list, tuple)) else x * 10, [1, (2, 3)], top_down=False
    )
    assert sizes == 2  # the leaves become 10, 20, 30; the tuple 2; the list [10, 2] 2
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if x == 2 else None, [1, (2, 3)]) == [
        1,
        (None, 3),
    ]


def test_map_shape_structure_passes_shapes_whole():
    shapes = {"a": (None, 3), "b": [(2,), (4, 5, 6)], "c": ()}
    assert tree.map_shape_structure(len, shapes) == {"a": 2, "b": [1, 3], "c": 0}
    assert tree.map_shape_structure(str, 5) == "5"


def test_the_same_answers_as_keras():
    keras = pytest.importorskip("keras")
    structure = {"b": [1, (2, 3)], "a": (4, [5]), "c": 6}
    assert tree.flatten_with_path(structure) == keras.tree.flatten_with_path(structure)
    assert tree.lists_to_tuples(structure) == keras.tree.lists_to_tuples(structure)
    shapes = [[3, 4], (), {"a": [None]}, (None, 2), [(1,), 5]]
    assert tree.map_shape_structure(str, shapes) == keras.tree.map_shape_structure(str, shapes)
    args = ([0, (0, 0)], lambda a, b: (a, b), [1, ([2], 3)], [4, ({"x": 5}, 6)])
    assert tree.map_structure_up_to(*args) == keras.tree.map_structure_up_to(*args)
    for fn in (
        lambda x: None,
        lambda x: "T" if isinstance(x, tuple) else None,
        lambda x: len(x) if isinstance(x, (list, tuple)) else x * 10,
    ):
        for top_down in (True, False):
            ours = tree.traverse(fn, [1, (2, [3])], top_down=top_down)
            assert ours == keras.tree.traverse(fn, [1, (2, [3])], top_down=top_down)
    for a, b in (([1, 2], (1, 2)), ({"a": 1}, {"b": 1}), ([1, (2,)], [1, (2, 3)]), (1, [1])):
        for check in ("assert_same_structure", "assert_same_paths"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                keras_raises = _raises(getattr(keras.tree, check), a, b)
            assert _raises(getattr(tree, check), a, b) == keras_raises, (check, a, b)


def _raises(check, a, b):
    try:
        check(a, b)
    except ValueError:
        return True
    return False


def test_named_tuples_are_rebuilt_by_the_walks():
    pair = Pair(np.ones(2), [1])
    assert type(tree.traverse(lambda x: None, pair)) is Pair
    assert type(tree.map_structure_up_to(Pair(0, 0), len, pair)) is Pair
