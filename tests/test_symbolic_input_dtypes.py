"""Shape-only layers keep an integer input's dtype symbolically, as Keras's do.

Keras's `Flatten`, `Reshape`, `Permute` and `Identity` give their symbolic
outputs the input's dtype (floats autocast to the compute dtype); other
layers give the compute dtype. An int index flattened in a functional graph
must stay int for `take` and the bitwise ops.
"""

import numpy as np
import pytest

import minikeras as mk

L = mk.layers
SHAPE_ONLY = {
    "Flatten": lambda: L.Flatten(),
    "Reshape": lambda: L.Reshape((4,)),
    "Permute": lambda: L.Permute((2, 1)),
    "Identity": lambda: L.Identity(),
}


@pytest.mark.parametrize("name", SHAPE_ONLY)
def test_an_int_input_stays_int_symbolically_as_eagerly(name):
    layer = SHAPE_ONLY[name]()
    symbolic = layer(mk.Input((2, 2), dtype="int32"))
    eager = SHAPE_ONLY[name]()(np.ones((1, 2, 2), "int32"))
    assert symbolic.dtype == eager.dtype == "int32"


@pytest.mark.parametrize("name", SHAPE_ONLY)
def test_a_float_input_takes_the_compute_dtype(name):
    symbolic = SHAPE_ONLY[name]()(mk.Input((2, 2)))
    assert symbolic.dtype == "float32"
    layer = SHAPE_ONLY[name]()
    layer.dtype_policy = "mixed_float16"
    assert layer(mk.Input((2, 2))).dtype == layer(np.ones((1, 2, 2), "float32")).dtype == "float16"


def test_other_layers_give_the_compute_dtype_as_keras():
    # (Keras's ZeroPadding2D says float32 for an int input too)
    assert L.ZeroPadding2D()(mk.Input((2, 2, 1), dtype="int32")).dtype == "float32"


def test_a_flattened_index_feeds_take_and_bitwise_ops():
    tokens = mk.Input((3, 1), dtype="int32")
    flat = L.Flatten()(tokens)
    table = mk.ops.arange(10) * 2
    model = mk.Model(tokens, [mk.ops.take(table, flat), mk.ops.bitwise_and(flat, 1)])
    data = np.array([[[1], [4], [7]], [[0], [9], [3]]], "int32")
    taken, odd = model.predict(data, verbose=0)
    np.testing.assert_array_equal(taken, [[2, 8, 14], [0, 18, 6]])
    np.testing.assert_array_equal(odd, [[1, 0, 1], [0, 1, 1]])


def test_identity_keeps_each_inputs_dtype():
    outputs = L.Identity()([mk.Input((2,), dtype="int32"), mk.Input((3,))])
    assert [t.dtype for t in outputs] == ["int32", "float32"]


def test_matches_keras():
    keras = pytest.importorskip("keras")
    for name, make in SHAPE_ONLY.items():
        theirs = getattr(keras.layers, name)
        args = {"Reshape": ((4,),), "Permute": ((2, 1),)}.get(name, ())
        expected = theirs(*args)(keras.Input((2, 2), dtype="int32")).dtype
        assert make()(mk.Input((2, 2), dtype="int32")).dtype == expected, name
