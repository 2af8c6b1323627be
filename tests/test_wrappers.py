"""`mk.wrappers`: minikeras models as scikit-learn estimators (Keras 3's `keras.wrappers`).

Each wrapper learns a problem whose answer is known (separable classes, a
linear map), inside scikit-learn's pipelines, cross-validation, grid search
and `clone`; `warm_start`, `fit_kwargs` and the errors are checked directly.
scikit-learn is optional: these tests skip without it, except the two that
check minikeras imports and fails cleanly without it.
"""

import pickle
import subprocess
import sys

import numpy as np
import pytest

import minikeras as mk

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from minikeras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer  # noqa: E402

QUIET = {"verbose": 0}


def classifier_model(X, y, hidden=16, learning_rate=0.05):
    """A softmax MLP sized from the data, as the wrappers' `model` callables are."""
    model = mk.Sequential([
        mk.Input((X.shape[1],)),
        mk.layers.Dense(hidden, activation="relu"),
        mk.layers.Dense(y.shape[1], activation="softmax"),
    ])  # fmt: skip
    model.compile(mk.optimizers.Adam(learning_rate), "categorical_crossentropy")
    return model


def linear_model(X, y, learning_rate=0.05):
    model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1])])
    model.compile(mk.optimizers.Adam(learning_rate), "mse")
    return model


def blobs(classes, per_class=20, seed=0, scale=1.0):
    """Well separated Gaussian blobs, one per label of `classes`, in 2-D."""
    rng = np.random.default_rng(seed)
    centres = 6.0 * np.stack([np.cos(np.arange(len(classes))), np.sin(np.arange(len(classes)))], 1)
    X = np.concatenate([c + 0.3 * rng.normal(size=(per_class, 2)) for c in centres]) * scale
    y = np.repeat(np.asarray(classes), per_class)
    order = rng.permutation(len(y))
    return X[order], y[order]


def linear_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(64, 3))
    return X, X @ np.array([2.0, -1.0, 0.5]) + 0.25


@pytest.fixture(autouse=True)
def _seeded():
    mk.utils.set_random_seed(3)


# ------------------------------------------------------------------ learning


def test_multiclass_classifier_learns_separable_blobs_with_string_labels():
    X, y = blobs(["cat", "dog", "eel"])
    clf = SKLearnClassifier(classifier_model, fit_kwargs={"epochs": 60, **QUIET}).fit(X, y)
    assert list(clf.classes_) == ["cat", "dog", "eel"] and clf.n_features_in_ == 2
    assert clf.model_.output_shape == (None, 3)  # the callable saw the one-hot targets
    assert clf.score(X, y) == 1.0
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    np.testing.assert_array_equal(clf.decision_function(X), clf.model_.predict(X))


def test_binary_classifier_has_two_columns_and_learns():
    X, y = blobs([-1, 1])
    clf = SKLearnClassifier(classifier_model, fit_kwargs={"epochs": 60, **QUIET}).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [-1, 1])
    assert clf.predict_proba(X).shape == (len(y), 2)
    assert clf.predict(X).dtype == y.dtype and clf.score(X, y) == 1.0


def test_regressor_learns_a_linear_map():
    X, y = linear_data()
    reg = SKLearnRegressor(linear_model, fit_kwargs={"epochs": 300, "batch_size": 16, **QUIET})
    prediction = reg.fit(X, y).predict(X)
    assert prediction.shape == (64,)
    kernel, bias = (w.numpy() for w in reg.model_.get_layer(index=0).weights)
    np.testing.assert_allclose(kernel[:, 0], [2.0, -1.0, 0.5], atol=0.02)
    np.testing.assert_allclose(bias, [0.25], atol=0.02)
    assert reg.score(X, y) > 0.999


def test_transformer_returns_the_models_outputs_and_feeds_a_pipeline():
    X, y = blobs([0, 1])
    trs = SKLearnTransformer(linear_model, fit_kwargs={"epochs": 20, **QUIET})
    out = trs.fit_transform(X, y)
    kernel, bias = (w.numpy() for w in trs.model_.get_layer(index=0).weights)
    np.testing.assert_allclose(out, X @ kernel + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(trs.transform(X[:5]), out[:5])
    pipe = make_pipeline(SKLearnTransformer(linear_model, fit_kwargs=QUIET), LogisticRegression())
    assert pipe.fit(X, y).score(X, y) == 1.0  # one trained projection separates the blobs


# ------------------------------------------------------- scikit-learn's tools


def test_in_a_pipeline_after_a_scaler():
    X, y = blobs(["a", "b", "c"], scale=1000.0)  # unscaled, a small MLP learns slowly
    pipe = make_pipeline(
        StandardScaler(), SKLearnClassifier(classifier_model, fit_kwargs={"epochs": 60, **QUIET})
    )
    assert pipe.fit(X, y).score(X, y) == 1.0
    assert pipe[-1].n_features_in_ == 2
    np.testing.assert_allclose(StandardScaler().fit_transform(X).std(axis=0), 1.0)


def test_cross_val_score_fits_a_fresh_clone_per_fold():
    X, y = blobs([0, 1, 2])
    clf = SKLearnClassifier(classifier_model, fit_kwargs={"epochs": 60, **QUIET})
    scores = cross_val_score(clf, X, y, cv=KFold(3, shuffle=True, random_state=0))
    np.testing.assert_array_equal(scores, [1.0, 1.0, 1.0])
    assert not hasattr(clf, "model_")  # the folds fit clones


def test_grid_search_over_a_wrapper_parameter():
    X, y = linear_data()
    reg = SKLearnRegressor(linear_model, fit_kwargs={"epochs": 100, "batch_size": 16, **QUIET})
    grid = {"model_kwargs": [{"learning_rate": 1e-5}, {"learning_rate": 0.05}]}
    search = GridSearchCV(reg, grid, cv=2).fit(X, y)
    assert search.best_params_ == {"model_kwargs": {"learning_rate": 0.05}}
    assert search.best_estimator_.score(X, y) > 0.99
    assert search.best_estimator_.model_.optimizer.learning_rate.numpy() == pytest.approx(0.05)


def test_grid_search_over_the_pipeline_step_parameters():
    X, y = linear_data()
    pipe = make_pipeline(StandardScaler(), SKLearnRegressor(linear_model, fit_kwargs=QUIET))
    grid = {"sklearnregressor__fit_kwargs": [{"epochs": 1, **QUIET}, {"epochs": 150, **QUIET}]}
    search = GridSearchCV(pipe, grid, cv=2).fit(X, y)
    assert search.best_params_["sklearnregressor__fit_kwargs"]["epochs"] == 150


def test_get_params_set_params_and_clone():
    est = SKLearnClassifier(classifier_model, model_kwargs={"hidden": 4}, fit_kwargs={"epochs": 2})
    assert est.get_params() == {
        "model": classifier_model,
        "warm_start": False,
        "model_kwargs": {"hidden": 4},
        "fit_kwargs": {"epochs": 2},
    }
    assert est.set_params(warm_start=True) is est and est.warm_start
    est.fit(*blobs([0, 1]), verbose=0)
    copy = clone(est)
    assert not hasattr(copy, "model_") and not hasattr(copy, "classes_")
    assert copy.get_params() == est.get_params()  # fit_kwargs too (Keras's clone drops them)
    assert copy.model_kwargs is not est.model_kwargs and copy.fit_kwargs is not est.fit_kwargs


def test_a_model_template_is_cloned_with_its_compile_settings_and_left_untouched():
    template = linear_model(np.ones((1, 3)), np.ones((1, 1)), learning_rate=0.01)
    before = [w.numpy().copy() for w in template.weights]
    reg = SKLearnRegressor(template, fit_kwargs={"epochs": 5, **QUIET}).fit(*linear_data())
    assert reg.model_ is not template
    assert type(reg.model_.optimizer) is mk.optimizers.Adam
    assert reg.model_.optimizer.learning_rate.numpy() == pytest.approx(0.01)
    for old, new in zip(before, template.weights):
        np.testing.assert_array_equal(old, new.numpy())
    assert clone(reg).model is template


# ------------------------------------------------------------------ warm start


def test_without_warm_start_each_fit_starts_from_a_new_model():
    X, y = linear_data()
    reg = SKLearnRegressor(linear_model, fit_kwargs={"epochs": 3, **QUIET}).fit(X, y)
    first = reg.model_
    reg.fit(X, y)
    assert reg.model_ is not first


def test_warm_start_goes_on_training_the_same_model():
    X, y = linear_data()
    reg = SKLearnRegressor(linear_model, warm_start=True, fit_kwargs={"epochs": 30, **QUIET})
    first = reg.fit(X, y).model_
    end_of_first = reg.history_.history["loss"][-1]
    reg.fit(X, y)
    assert reg.model_ is first
    # The second fit starts where the first ended, not from new weights.
    assert reg.history_.history["loss"][0] < end_of_first * 1.05


def test_warm_start_with_a_model_trains_that_model():
    # As in Keras's test: the given model itself, then the fitted one again.
    inputs = mk.Input((4,))
    model = mk.Model(inputs, mk.layers.Dense(2, activation="softmax")(inputs))
    model.compile(loss="categorical_crossentropy", optimizer="sgd")
    est = SKLearnClassifier(model=model, warm_start=True)
    est.fit(np.ones((4, 4)), np.array([1, 2, 1, 2]), epochs=0, verbose=0)
    assert est.model_ is model
    est.fit(np.ones((4, 4)), np.array([1, 2, 1, 2]), epochs=0, verbose=0)
    assert est.model_ is model


def test_fit_keyword_arguments_override_fit_kwargs_for_that_call_only():
    X, y = linear_data()
    fit_kwargs = {"epochs": 2, **QUIET}
    reg = SKLearnRegressor(linear_model, fit_kwargs=fit_kwargs)
    assert reg.fit(X, y, epochs=4).history_.epoch == [0, 1, 2, 3]
    assert fit_kwargs == {"epochs": 2, **QUIET}  # Keras's fit writes the call's into it
    assert reg.fit(X, y).history_.epoch == [0, 1]


def compiled_linear_model(X, y, jit_compile="auto"):
    model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1])])
    model.compile("sgd", "mse", jit_compile=jit_compile)
    return model


@pytest.mark.parametrize("jit_compile", ["auto", False])
def test_a_fitted_wrapper_pickles(jit_compile):
    # (its model's recorded compiled step stays behind: the copy records its own)
    X, y = linear_data()
    reg = SKLearnRegressor(
        compiled_linear_model,
        model_kwargs={"jit_compile": jit_compile},
        fit_kwargs={"epochs": 3, **QUIET},
    ).fit(X, y)
    back = pickle.loads(pickle.dumps(reg))
    assert back.n_features_in_ == 3 and back.get_params() == reg.get_params()
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))


# ---------------------------------------------------------------------- errors


def uncompiled(X, y):
    return mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1])])


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"model": uncompiled}, RuntimeError, "needs to be compiled"),
        ({"model": lambda X, y: "a model"}, TypeError, "must be a minikeras Model, got str"),
        ({"model": 3}, TypeError, "a callable that returns one, got int"),
        ({"model": linear_model, "model_kwargs": [1]}, TypeError, "model_kwargs must be a dict"),
        ({"model": linear_model, "fit_kwargs": "epochs"}, TypeError, "fit_kwargs must be a dict"),
    ],
)
def test_bad_models_and_arguments_fail_at_fit(kwargs, error, words):
    reg = SKLearnRegressor(**kwargs)
    with pytest.raises(error, match=words):
        reg.fit(*linear_data())
    assert not hasattr(reg, "model_") and not hasattr(reg, "history_")


def test_classifier_target_errors():
    X, _ = blobs([0, 1])
    clf = SKLearnClassifier(classifier_model, fit_kwargs=QUIET)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        clf.fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="only one class is present"):
        clf.fit(X, np.zeros(len(X)))
    assert not hasattr(clf, "classes_")
    with pytest.raises(ValueError, match="requires y to be passed"):
        clf.fit(X, None)


def test_using_an_unfitted_wrapper_or_other_columns_fails():
    X, y = linear_data()
    reg = SKLearnRegressor(linear_model, fit_kwargs=QUIET)
    with pytest.raises(NotFittedError):
        reg.predict(X)
    with pytest.raises(NotFittedError):
        SKLearnTransformer(linear_model).transform(X)
    with pytest.raises(ValueError, match="3 features"):
        reg.fit(X, y).predict(X[:, :2])


def test_predict_proba_refuses_outputs_that_are_not_probabilities():
    def logits_model(X, y):
        model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1])])
        model.compile(mk.optimizers.Adam(0.05), mk.losses.CategoricalCrossentropy(from_logits=True))
        return model

    X, y = blobs([0, 1, 2])
    clf = SKLearnClassifier(logits_model, fit_kwargs={"epochs": 60, **QUIET}).fit(X, y)
    with pytest.raises(ValueError, match="not probabilities.*decision_function"):
        clf.predict_proba(X)
    assert clf.score(X, y) == 1.0  # predict takes the largest logit


# ------------------------------------------------------- optional dependency


def test_minikeras_imports_without_sklearn_and_a_wrapper_then_names_the_extra():
    # One fresh Python: `import minikeras` leaves sklearn unimported; then, with
    # sklearn made unimportable, the wrappers load and making one raises.
    code = (
        "import sys\n"
        "import minikeras as mk\n"
        "print('sklearn' in sys.modules)\n"
        "sys.modules['sklearn'] = None\n"
        "try:\n"
        "    mk.wrappers.SKLearnClassifier(model=None)\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    imported, message = run.stdout.splitlines()
    assert imported == "False"
    assert "SKLearnClassifier needs scikit-learn" in message and "minikeras[sklearn]" in message
