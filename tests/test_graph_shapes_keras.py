"""A functional graph's shapes and tensors, as Keras 3 gives them.

`Model.input_shape` / `output_shape`: one input or output gives its shape,
also in a one-item tuple or dict (not only a list); several give a flat list
(a tuple or dict too). `compute_output_shape` keeps the structure.
`layer.input` / `layer.output` of a layer called several times are the first
call's; `input` flattens the call's tensors. A layer has no `input_shape` or
`output_shape`. Expected values are written by hand; each case is also run in
Keras when it is importable.
"""

import numpy as np
import pytest

import minikeras as mk

STRUCTURES = {
    "tensor": (lambda a, b: a, (None, 2)),
    "list1": (lambda a, b: [a], (None, 2)),
    "tuple1": (lambda a, b: (a,), (None, 2)),
    "dict1": (lambda a, b: {"o": a}, (None, 2)),
    "tuple2": (lambda a, b: (a, b), [(None, 2), (None, 4)]),
    "dict2": (lambda a, b: {"p": b, "o": a}, [(None, 2), (None, 4)]),
}


def _keras():
    return pytest.importorskip("keras")


def _output_shapes(library, name):
    inputs = library.Input((3,))
    first = library.layers.Dense(2)(inputs)
    second = library.layers.Dense(4)(inputs)
    model = library.Model(inputs, STRUCTURES[name][0](first, second))
    return model.output_shape, model.compute_output_shape((None, 3))


def _input_shapes(library, name):
    a, b = library.Input((2,), name="o"), library.Input((4,), name="p")
    if name.endswith("2"):
        output = library.layers.Concatenate()([a, b])
    else:
        output = library.layers.Dense(1)(a)
    return library.Model(STRUCTURES[name][0](a, b), output).input_shape


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_model_output_shape_unpacks_one_output_and_lists_several(name):
    output_shape, computed = _output_shapes(mk, name)
    assert output_shape == STRUCTURES[name][1]
    # compute_output_shape keeps the outputs' structure
    structure = STRUCTURES[name][0]((None, 2), (None, 4))
    assert computed == structure


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_model_input_shape_unpacks_one_input_and_lists_several(name):
    assert _input_shapes(mk, name) == STRUCTURES[name][1]


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_model_shapes_match_keras(name):
    keras = _keras()
    assert _output_shapes(mk, name) == _output_shapes(keras, name)
    assert _input_shapes(mk, name) == _input_shapes(keras, name)


def _shared_layer(library):
    """(input, output and 'missing attributes' of a Dense called twice, then a Concatenate)."""
    first, second = library.Input((3,), name="first"), library.Input((5, 3), name="second")
    dense = library.layers.Dense(2)
    dense(first)
    dense(second)
    concatenate = library.layers.Concatenate()
    concatenate([first, first])
    concatenate([first, first, first])
    missing = [
        attribute for attribute in ("input_shape", "output_shape") if not hasattr(dense, attribute)
    ]
    return (
        dense.input.name,
        dense.output.shape,
        [tensor.name for tensor in concatenate.input],
        concatenate.output.shape,
        missing,
    )


def test_a_shared_layer_gives_its_first_calls_input_and_output():
    assert _shared_layer(mk) == (
        "first",
        (None, 2),
        ["first", "first"],
        (None, 6),
        [
            "input_shape",
            "output_shape",
        ],
    )


def test_layer_input_flattens_every_argument_as_keras_does():
    a, b = mk.Input((3,), name="a"), mk.Input((3,), name="b")

    class Picks(mk.layers.Layer):
        def call(self, inputs, other=None):
            return inputs["p"] + inputs["q"] + other

    picks = Picks()
    picks({"q": b, "p": a}, other=b)
    assert [tensor.name for tensor in picks.input] == ["a", "b", "b"]  # (dict by sorted key)


def test_a_shared_layer_matches_keras():
    assert _shared_layer(mk) == _shared_layer(_keras())


def test_a_layer_called_only_on_arrays_has_no_output_as_in_keras():
    dense = mk.layers.Dense(2)
    dense(np.ones((1, 3), "float32"))
    with pytest.raises(AttributeError):
        _ = dense.output
    keras = _keras()
    dense = keras.layers.Dense(2)
    dense(np.ones((1, 3), "float32"))
    with pytest.raises(AttributeError):
        _ = dense.output
