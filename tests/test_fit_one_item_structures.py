"""A model with one output takes its targets and sample weights in a one-item structure.

Keras 3 reads `fit(x, [y])`, `sample_weight=[w]` (and one-item tuples) as
`y` and `w`, in `fit`, `validation_data`, `evaluate`, `train_on_batch` and
`test_on_batch`. A one-item dict keyed by the output's name means its value
too (Keras 3.15 fails there, packing the dict's key). `class_weight` with a
nested `y` is refused, as Keras refuses it. The Keras comparisons skip when
Keras is not importable; the hand-computed ones always run.
"""

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(7)
X = RNG.random((8, 3)).astype("float32")
Y = RNG.random((8, 1)).astype("float32")
W = RNG.random(8).astype("float32")
KERNEL = RNG.normal(size=(3, 1)).astype("float32")
BIAS = np.array([0.25], "float32")

# (y, sample_weight) as given, each meaning (Y, W) or (Y, None)
STRUCTURES = {
    "list": ([Y], [W]),
    "tuple": ((Y,), (W,)),
    "list_y_plain_weight": ([Y], W),
    "plain_y_list_weight": (Y, [W]),
    "dict": ({"out": Y}, {"out": W}),
}
KERAS_STRUCTURES = ["list", "tuple", "list_y_plain_weight", "plain_y_list_weight"]


def _model(library=mk):
    inputs = library.Input((3,))
    outputs = library.layers.Dense(1, name="out")(inputs)
    model = library.Model(inputs, outputs)
    model.layers[-1].set_weights([KERNEL, BIAS])
    model.compile(
        optimizer=library.optimizers.SGD(0.1), loss="mse", metrics=["mae"], weighted_metrics=["mae"]
    )
    return model


def _by_hand(y, weight):
    error = X @ KERNEL + BIAS - y
    return {
        "loss": float(np.sum(W * error[:, 0] ** 2) / 8),  # (a Loss divides by the batch size)
        "mae": float(np.mean(np.abs(error))),
        "weighted_mae": float(np.sum(W * np.abs(error[:, 0])) / np.sum(W)),
    }


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_evaluate_reads_a_one_item_structure_as_its_item(name):
    y, weight = STRUCTURES[name]
    logs = _model().evaluate(X, y, sample_weight=weight, return_dict=True, verbose=0)
    expected = _by_hand(Y, W)
    assert sorted(logs) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(logs[key], value, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_fit_validation_and_batch_methods_read_a_one_item_structure(name):
    y, weight = STRUCTURES[name]
    plain, nested = _model(), _model()
    history = plain.fit(X, Y, sample_weight=W, batch_size=3, epochs=2, shuffle=False, verbose=0)
    nested_history = nested.fit(
        X,
        y,
        sample_weight=weight,
        batch_size=3,
        epochs=2,
        shuffle=False,
        validation_data=(X, y, weight),
        verbose=0,
    )
    for key, values in history.history.items():
        np.testing.assert_allclose(nested_history.history[key], values, rtol=1e-5)
    assert "val_loss" in nested_history.history
    for a, b in zip(plain.get_weights(), nested.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for method in ("train_on_batch", "test_on_batch"):
        one = getattr(plain, method)(X, Y, sample_weight=W, return_dict=True)
        other = getattr(nested, method)(X, y, sample_weight=weight, return_dict=True)
        for key, value in one.items():
            np.testing.assert_allclose(other[key], value, rtol=1e-5)


def test_sequential_reads_a_one_item_list_of_targets():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1, name="out")])
    model.layers[-1].set_weights([KERNEL, BIAS])
    model.compile("sgd", "mse")
    expected = float(np.mean((X @ KERNEL + BIAS - Y) ** 2))
    np.testing.assert_allclose(model.evaluate(X, [Y], verbose=0), expected, rtol=1e-5)


def test_a_dict_keyed_by_another_name_is_refused_naming_the_output():
    with pytest.raises(ValueError, match=r"\['other'\].*named 'out'"):
        _model().evaluate(X, {"other": Y}, verbose=0)


@pytest.mark.parametrize("y", [[Y.astype("int64")], (Y.astype("int64"),), {"out": Y}])
def test_class_weight_with_a_nested_y_is_refused_as_in_keras(y):
    with pytest.raises(ValueError, match="class_weight needs y as one array"):
        _model().fit(X, y, class_weight={0: 1.0, 1: 2.0}, verbose=0)
    with pytest.raises(ValueError, match="class_weight needs y as one array"):
        _model().train_on_batch(X, y, class_weight={0: 1.0, 1: 2.0})


@pytest.mark.parametrize("name", KERAS_STRUCTURES)
def test_one_item_structures_match_keras(name):
    keras = pytest.importorskip("keras")
    y, weight = STRUCTURES[name]
    ours = _model().evaluate(X, y, sample_weight=weight, return_dict=True, verbose=0)
    theirs = _model(keras).evaluate(X, y, sample_weight=weight, return_dict=True, verbose=0)
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-5)
    ours = _model().fit(X, y, sample_weight=weight, batch_size=3, shuffle=False, verbose=0)
    theirs = _model(keras).fit(X, y, sample_weight=weight, batch_size=3, shuffle=False, verbose=0)
    for key, values in theirs.history.items():
        np.testing.assert_allclose(ours.history[key], values, rtol=1e-5)


def test_class_weight_with_a_one_item_list_is_refused_by_keras_too():
    keras = pytest.importorskip("keras")
    with pytest.raises(ValueError, match="single output"):
        _model(keras).fit(X, [Y.astype("int64")], class_weight={0: 1.0, 1: 2.0}, verbose=0)


def _two_outputs(library=mk):
    inputs = library.Input((3,))
    first, second = library.layers.Dense(1, name="a"), library.layers.Dense(1, name="b")
    model = library.Model(inputs, [first(inputs), second(inputs)])
    first.set_weights([KERNEL, BIAS])
    second.set_weights([-KERNEL, BIAS])
    model.compile("sgd", ["mse", "mae"], weighted_metrics=[["mae"], ["mse"]])
    return model


def test_two_outputs_take_one_sample_weight_array_each():
    other = RNG.random(8).astype("float32")
    logs = _two_outputs().evaluate(X, [Y, Y], sample_weight=[W, other], return_dict=True, verbose=0)
    error_a, error_b = (X @ KERNEL + BIAS - Y)[:, 0], (-X @ KERNEL + BIAS - Y)[:, 0]
    np.testing.assert_allclose(logs["a_loss"], np.sum(W * error_a**2) / 8, rtol=1e-5)
    np.testing.assert_allclose(logs["b_loss"], np.sum(other * np.abs(error_b)) / 8, rtol=1e-5)
    np.testing.assert_allclose(logs["b_mse"], np.sum(other * error_b**2) / np.sum(other), rtol=1e-5)
    keras = pytest.importorskip("keras")
    theirs = _two_outputs(keras).evaluate(
        X, [Y, Y], sample_weight=[W, other], return_dict=True, verbose=0
    )
    assert sorted(logs) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(logs[key], value, rtol=1e-5)
