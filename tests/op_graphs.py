"""Checks shared by the tests of Keras ops (not collected by pytest): the same values and
dtypes as `keras.ops`, and functional models of ops that save in both of our formats and
cross to Keras and back (`tests/test_ops_arrays*.py`)."""

import numpy as np
import pytest

import minikeras as mk

__all__ = ["assert_same_as_keras", "assert_saves_and_crosses_to_keras"]


def _parts(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def assert_same_as_keras(cases, rtol=2e-6, atol=1e-6):
    """Runs each `(op name, args, kwargs)` in Keras and minikeras: values, dtypes, shapes
    (and the number of results, for ops giving several) must agree. Skips without Keras."""
    keras = pytest.importorskip("keras")
    for name, args, kwargs in cases:
        theirs = _parts(getattr(keras.ops, name)(*args, **kwargs))
        mine = _parts(getattr(mk.ops, name)(*args, **kwargs))
        assert len(mine) == len(theirs), name
        for got, want in zip(mine, theirs):
            want = keras.ops.convert_to_numpy(want)
            assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype)
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol, err_msg=name)


def assert_saves_and_crosses_to_keras(build, data, directory, rtol=1e-5, atol=0.0):
    """`build(lib)` makes a functional model of ops with `lib` minikeras or Keras. Ours
    must reload from both of our formats unchanged; with Keras installed, Keras's must
    load into minikeras and ours into Keras, computing the same on `data` (to `rtol`
    and `atol`: Keras computes with its own backend)."""
    model = build(mk)
    for suffix in ("minikeras", "keras"):
        model.save(directory / f"m.{suffix}")
        loaded = mk.models.load_model(directory / f"m.{suffix}")
        for got, want in zip(_parts(loaded(data)), _parts(model(data))):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    theirs = build(keras)
    theirs.save(directory / "keras_made.keras")
    ours = mk.models.load_model(directory / "keras_made.keras")
    for got, want in zip(_parts(ours(data)), _parts(theirs(data))):
        np.testing.assert_allclose(
            got.numpy(), keras.ops.convert_to_numpy(want), rtol=rtol, atol=atol
        )
    again = keras.saving.load_model(directory / "m.keras")
    for got, want in zip(_parts(again(data)), _parts(model(data))):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(got), want.numpy(), rtol=rtol, atol=atol
        )
