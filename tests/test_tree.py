"""minikeras.tree: flatten, pack_sequence_as and map_structure, with Keras's dict order."""

import collections

import numpy as np
import pytest

from minikeras import tree

Pair = collections.namedtuple("Pair", ["first", "second"])


def test_flatten_goes_depth_first_with_dicts_by_sorted_key():
    structure = {"b": [1, (2, 3)], "a": Pair(np.zeros(1), None), "c": 4}
    leaves = tree.flatten(structure)
    assert len(leaves) == 6 and leaves[1:] == [None, 1, 2, 3, 4]
    assert isinstance(leaves[0], np.ndarray)


def test_a_leaf_flattens_to_itself():
    array = np.ones((2, 2))
    assert tree.flatten(array)[0] is array and tree.flatten(None) == [None]


def test_pack_sequence_as_inverts_flatten_and_keeps_types_and_key_order():
    structure = {"b": [1, (2, 3)], "a": Pair(5, 6)}
    packed = tree.pack_sequence_as(structure, [10, 20, 30, 40, 50])
    assert packed == {"b": [30, (40, 50)], "a": Pair(10, 20)}
    assert list(packed) == ["b", "a"] and type(packed["a"]) is Pair
    assert tree.pack_sequence_as(structure, tree.flatten(structure)) == structure


@pytest.mark.parametrize("leaves", [[1, 2], [1, 2, 3, 4]])
def test_pack_sequence_as_rejects_the_wrong_number_of_leaves(leaves):
    with pytest.raises(ValueError, match="3 leaves, but flat_sequence has"):
        tree.pack_sequence_as([0, (0, 0)], leaves)


def test_map_structure_over_several_structures():
    assert tree.map_structure(lambda x, y: x * y, {"a": 2, "b": [3]}, {"a": 5, "b": [7]}) == {
        "a": 10,
        "b": [21],
    }
    with pytest.raises(ValueError, match="assert_same_structure"):
        tree.map_structure(lambda x, y: x, [1, 2], [1])
    # As in Keras: the same leaf count nested otherwise is refused too.
    for a, b in [
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
        ([1, [2, 3]], [[1, 2], 3]),
        ([1, 2], (1, 2)),
    ]:
        with pytest.raises(ValueError, match="assert_same_structure"):
            tree.map_structure(lambda x, y: x, a, b)
    with pytest.raises(ValueError, match="at least one"):
        tree.map_structure(abs)


def test_is_nested():
    assert tree.is_nested(()) and tree.is_nested({}) and not tree.is_nested("ab")
