"""Checks a functional graph of ops both ways through files (not collected by pytest).

`check_saves_and_crosses_to_keras(graph, data, tmp_path)` builds `graph(mk)`,
saves it to `.minikeras` and `.keras` and loads it back (the same outputs),
then, where Keras is importable, loads the file Keras writes of `graph(keras)`
and has Keras load ours: the op nodes read and write Keras's node format.
"""

import numpy as np
import pytest

import minikeras as mk


def check_saves_and_crosses_to_keras(graph, data, tmp_path):
    """Asserts `graph`'s model (a function of the library) survives both formats and Keras."""
    model = graph(mk)
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"m.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"m.{suffix}")
        for got, want in zip(loaded(data), model(data)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    theirs = graph(keras)
    theirs.save(tmp_path / "keras_made.keras")
    ours = mk.models.load_model(tmp_path / "keras_made.keras")
    for got, want in zip(ours(data), theirs(data)):
        np.testing.assert_allclose(got.numpy(), keras.ops.convert_to_numpy(want), rtol=1e-5)
    again = keras.saving.load_model(tmp_path / "m.keras")
    for got, want in zip(again(data), model(data)):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(got), want.numpy(), rtol=1e-5)
