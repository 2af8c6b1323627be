"""Edge cases of element-wise and set ops: NaN in unique, activations' gradients at
+-inf. By hand, and the same as Keras (JAX backend) when it is installed."""

import numpy as np
import pytest

from minikeras import ops

WITH_NANS = np.array([np.nan, 1.0, np.nan, 1.0, 2.0], "float32")
ROWS_WITH_NANS = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0]], "float32")


def test_unique_keeps_each_nan_apart():
    values, index, inverse, counts = ops.unique(
        WITH_NANS, return_index=True, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, np.nan, np.nan])
    assert index.numpy().tolist() == [1, 4, 0, 2]
    assert inverse.numpy().tolist() == [2, 0, 3, 0, 1]
    assert counts.numpy().tolist() == [2, 1, 1, 1]
    values, counts = ops.unique(WITH_NANS, return_counts=True, size=6)
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, np.nan, np.nan, 1.0, 1.0])
    assert counts.numpy().tolist() == [2, 1, 1, 1, 0, 0]
    rows, inverse, counts = ops.unique(
        ROWS_WITH_NANS, axis=0, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(rows.numpy(), [[0.0, 2.0], [np.nan, 1.0], [np.nan, 1.0]])
    assert inverse.numpy().tolist() == [1, 2, 0] and counts.numpy().tolist() == [1, 1, 1]


@pytest.mark.parametrize("size", [None, 3, 6])
def test_unique_with_nans_as_keras(size):
    keras = pytest.importorskip("keras")
    for x, axis in [(WITH_NANS, None), (ROWS_WITH_NANS, 0)]:
        if axis is not None and size is not None:
            continue
        kwargs = dict(return_index=True, return_inverse=True, return_counts=True, size=size)
        if axis is not None:
            kwargs = dict(return_inverse=True, return_counts=True, axis=axis)
        for got, want in zip(ops.unique(x, **kwargs), keras.ops.unique(x, **kwargs)):
            want = np.asarray(want)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
