"""Checks shared by the tests of Keras ops (not collected by pytest): the same values and
dtypes as `keras.ops`, and functional models of ops that save in both of our formats and
cross to Keras and back (`tests/test_ops_arrays*.py`)."""

import warnings

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


def assert_saves_and_crosses_to_keras(
    build,
    data,
    directory,
    rtol=1e-5,
    atol=0.0,
    *,
    keras_build=None,
    keras_wrong_outputs=(),
    keras_reload_bug=None,
):
    """`build(lib)` makes a functional model with `lib` minikeras or Keras. Ours must
    reload from both of our formats unchanged, without a warning; with Keras installed,
    Keras's must load into minikeras and ours into Keras, computing the same on `data`
    (to `rtol` and `atol`: Keras computes with its own backend).

    Known Keras limits, named by the caller: `keras_build` makes the graph that crosses
    (without the nodes Keras cannot take; `build` by default); `keras_wrong_outputs`
    are the indices of outputs Keras computes wrongly (not compared across);
    `keras_reload_bug` is `(exception type, message pattern)` of a Keras bug reloading
    these nodes: if Keras cannot load our file so, it must fail so on its own file too."""
    model = build(mk)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for suffix in ("minikeras", "keras"):
            model.save(directory / f"m.{suffix}")
            loaded = mk.models.load_model(directory / f"m.{suffix}")
            for got, want in zip(_parts(loaded(data)), _parts(model(data))):
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    if keras_build is not None:
        model = keras_build(mk)
        model.save(directory / "m.keras")
    theirs = (keras_build or build)(keras)
    theirs.save(directory / "keras_made.keras")
    ours = mk.models.load_model(directory / "keras_made.keras")
    _assert_close_but(keras_wrong_outputs, ours(data), theirs(data), keras, rtol, atol)
    try:
        again = keras.saving.load_model(directory / "m.keras")
    except Exception as error:
        if keras_reload_bug is None or not isinstance(error, keras_reload_bug[0]):
            raise
        with pytest.raises(keras_reload_bug[0], match=keras_reload_bug[1]):
            keras.saving.load_model(directory / "keras_made.keras")
        return
    _assert_close_but(keras_wrong_outputs, again(data), model(data), keras, rtol, atol)


def _assert_close_but(skipped, got_outputs, want_outputs, keras, rtol, atol):
    got_outputs, want_outputs = _parts(got_outputs), _parts(want_outputs)
    assert len(got_outputs) == len(want_outputs)
    for index, (got, want) in enumerate(zip(got_outputs, want_outputs)):
        if index not in skipped:
            got, want = _numpy(got, keras), _numpy(want, keras)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {index}")


def _numpy(value, keras):
    return value.numpy() if isinstance(value, mk.Tensor) else keras.ops.convert_to_numpy(value)
