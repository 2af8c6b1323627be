"""Keras 3's static shapes for `diagonal`, `diag` and `split` on symbolic tensors.

A diagonal over an axis of unknown size has unknown length (whatever the
offset); `split` at indices of an axis of unknown size knows every piece but
the last. The expected shapes are Keras 3.15's, written out; each case is also
run in Keras when it is importable. Where Keras fails (indices out of order
or past a known size: a negative size), minikeras gives the sizes the data
will have.
"""

import numpy as np
import pytest

import minikeras as mk

# (input shape without the batch, op name, arguments, Keras's output shape(s))
CASES = [
    ((4,), "diagonal", {"offset": 100}, (None,)),
    ((4,), "diagonal", {"offset": 3}, (None,)),
    ((4,), "diagonal", {"offset": -100}, (None,)),
    ((4, 4), "diagonal", {"offset": 100}, (4, None)),
    ((4, 4), "diagonal", {"offset": 3}, (4, None)),
    ((4, 4, 2), "diagonal", {"offset": 4}, (4, 2, None)),
    ((4, 5), "diagonal", {"offset": 1, "axis1": 1, "axis2": 2}, (None, 4)),
    ((4, 5), "diagonal", {"offset": 7, "axis1": 1, "axis2": 2}, (None, 0)),
    ((4,), "diag", {"k": 5}, (None,)),
    ((4,), "diag", {"k": 3}, (None,)),
    ((100,), "split", {"indices_or_sections": [90], "axis": -1}, [(None, 90), (None, 10)]),
    ((None,), "split", {"indices_or_sections": [90], "axis": -1}, [(None, 90), (None, None)]),
    (
        (None,),
        "split",
        {"indices_or_sections": [10, 90], "axis": 1},
        [(None, 10), (None, 80), (None, None)],
    ),
    ((None,), "split", {"indices_or_sections": [150], "axis": 1}, [(None, 150), (None, None)]),
    ((100,), "split", {"indices_or_sections": [5], "axis": 0}, [(5, 100), (None, 100)]),
    ((None,), "split", {"indices_or_sections": 4, "axis": 1}, [(None, None)] * 4),
]


def _shapes(library, case):
    shape, name, arguments, _ = case
    outputs = getattr(library.ops, name)(library.Input(shape), **arguments)
    if isinstance(outputs, (list, tuple)):
        return [tuple(output.shape) for output in outputs]
    return tuple(outputs.shape)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[1]}{case[0]}{case[2]}")
def test_static_shapes_are_keras_s(case):
    assert _shapes(mk, case) == case[3]


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[1]}{case[0]}{case[2]}")
def test_static_shapes_match_keras(case):
    keras = pytest.importorskip("keras")
    assert _shapes(mk, case) == _shapes(keras, case)


def test_out_of_order_or_past_the_end_indices_give_the_data_s_sizes():
    # (Keras fails here on a negative size; numpy's split gives these)
    known = mk.ops.split(mk.Input((100,)), [10, 5], axis=-1)
    assert [p.shape for p in known] == [(None, 10), (None, 0), (None, 95)]
    unknown = mk.ops.split(mk.Input((None,)), [10, 5], axis=-1)
    assert [p.shape for p in unknown] == [(None, 10), (None, 0), (None, None)]
    past = mk.ops.split(mk.Input((100,)), [150], axis=-1)
    assert [p.shape for p in past] == [(None, 100), (None, 0)]


def test_a_model_with_these_ops_runs_to_the_data_s_shapes():
    inputs = mk.Input((None,))
    head, tail = mk.ops.split(inputs, [90], axis=-1)
    square = mk.ops.reshape(inputs[:, :16], (-1, 4, 4))
    diagonal = mk.ops.diagonal(square, offset=100, axis1=1, axis2=2)
    model = mk.Model(inputs, [head, tail, diagonal])
    data = np.arange(200, dtype="float32").reshape(2, 100)
    head_value, tail_value, diagonal_value = model(data)
    np.testing.assert_array_equal(head_value.numpy(), data[:, :90])
    np.testing.assert_array_equal(tail_value.numpy(), data[:, 90:])
    assert diagonal_value.shape == (2, 0)
