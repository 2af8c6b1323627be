"""`mk.wrappers` against Keras 3's `keras.wrappers`: arguments, tags, target encoding, errors.

Skipped without Keras (or scikit-learn). The two frameworks' models are
not the same objects, so what is compared is what the wrappers do around
them: the parameters and their defaults, scikit-learn's tags, how targets
are encoded for the model and decoded from its outputs, and which errors
bad targets and models raise.
"""

import inspect
import os

import numpy as np
import pytest

import minikeras as mk

pytest.importorskip("sklearn", minversion="1.6")
os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")
from sklearn.utils import get_tags  # noqa: E402

NAMES = ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"]
TARGETS = [
    np.array(["b", "a", "c", "a", "b"]),
    np.array([-1, 1, 1, -1]),
    np.array([3, 0, 7, 7, 0, 3]),
    np.array([0.0, 1.0, 1.0, 0.0]),
]


def both(name, **kwargs):
    return getattr(mk.wrappers, name)(**kwargs), getattr(keras.wrappers, name)(**kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_arguments_defaults_params_and_tags_match(name):
    ours, theirs = (getattr(module, name) for module in (mk.wrappers, keras.wrappers))
    assert inspect.signature(ours) == inspect.signature(theirs)
    arguments = {"model": None, "warm_start": True, "model_kwargs": {"a": 1}, "fit_kwargs": None}
    mine, keras_one = both(name, **arguments)
    assert mine.get_params() == keras_one.get_params() == arguments
    ours_tags, keras_tags = get_tags(mine), get_tags(keras_one)
    assert ours_tags.estimator_type == keras_tags.estimator_type
    assert ours_tags.non_deterministic is keras_tags.non_deterministic is True
    for kind in ("classifier_tags", "regressor_tags", "transformer_tags"):
        assert getattr(ours_tags, kind) == getattr(keras_tags, kind)


@pytest.mark.parametrize("y", TARGETS, ids=lambda y: str(y.dtype))
def test_classifier_encodes_and_decodes_labels_as_keras(y):
    mine, theirs = both("SKLearnClassifier", model=None)
    ours_encoded = mine._process_target(y, reset=True)
    np.testing.assert_array_equal(ours_encoded, theirs._process_target(y, reset=True))
    np.testing.assert_array_equal(mine.classes_, theirs.classes_)
    outputs = np.random.default_rng(0).random((7, len(mine.classes_))).astype("float32")
    np.testing.assert_array_equal(
        mine._reverse_process_target(outputs), theirs._reverse_process_target(outputs)
    )


def test_regressor_targets_are_a_column_and_predictions_flat_as_keras():
    mine, theirs = both("SKLearnRegressor", model=None)
    y = np.linspace(-1, 1, 5)
    np.testing.assert_array_equal(
        mine._process_target(y, reset=True), theirs._process_target(y, reset=True)
    )
    outputs = y.reshape(-1, 1)
    assert mine._reverse_process_target(outputs).shape == (5,)
    np.testing.assert_array_equal(
        mine._reverse_process_target(outputs), theirs._reverse_process_target(outputs)
    )


@pytest.mark.parametrize("y", [np.linspace(0, 1, 6), np.zeros(6)], ids=["continuous", "one"])
def test_bad_classifier_targets_raise_value_error_in_both(y):
    X = np.ones((6, 2))
    for estimator in both("SKLearnClassifier", model=lambda **data: None):  # never called
        with pytest.raises(ValueError, match="(?i)label type|target type|one class"):
            estimator.fit(X, y)


def test_an_uncompiled_model_raises_runtime_error_in_both():
    def build(framework):
        def model(X, y):
            return framework.Sequential([framework.Input((X.shape[1],)), framework.layers.Dense(1)])

        return model

    X, y = np.ones((4, 2)), np.arange(4.0)
    for framework, module in ((mk, mk.wrappers), (keras, keras.wrappers)):
        with pytest.raises(RuntimeError, match="compiled"):
            module.SKLearnRegressor(model=build(framework)).fit(X, y)


def test_a_model_template_is_cloned_compiled_in_both():
    X, y = np.ones((8, 3)), np.arange(8.0)
    for framework, module in ((mk, mk.wrappers), (keras, keras.wrappers)):
        template = framework.Sequential([framework.Input((3,)), framework.layers.Dense(1)])
        template.compile(optimizer="sgd", loss="mse")
        fitted = module.SKLearnRegressor(model=template).fit(X, y, epochs=1, verbose=0)
        assert fitted.model_ is not template and fitted.model_.compiled
        assert type(fitted.model_.optimizer).__name__ == "SGD"
