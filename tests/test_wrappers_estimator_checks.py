"""scikit-learn's own estimator checks on the three wrappers, as Keras runs them.

The estimators and the expected failures follow Keras's
`keras/src/wrappers/sklearn_test.py`: checks that assume training is
reproducible across fits, or that a few epochs reach a good score, are
expected to fail (they may pass: the marks are not strict). Keras's
regressor and transformer are tested with a softmax over one output column,
a constant model that passes the checks comparing two fits; here they are
linear, so they learn, and those checks are expected to fail for them too.
minikeras adds one more: `predict_proba`, which Keras's classifier lacks,
brings scikit-learn's check that its ranks match `decision_function`'s,
which gives a column per class for binary problems too, as Keras's does.
"""

import pytest

import minikeras as mk

sklearn = pytest.importorskip("sklearn", minversion="1.6")  # expected_failed_checks
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from minikeras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer  # noqa: E402


def dynamic_model(X, y, loss, out_activation_function="softmax", layers=(10,)):
    """Keras's test model: an MLP sized from the data."""
    inputs = mk.Input(shape=(X.shape[1],))
    hidden = inputs
    for size in layers:
        hidden = mk.layers.Dense(size, activation="relu")(hidden)
    outputs = mk.layers.Dense(y.shape[1], activation=out_activation_function)(hidden)
    model = mk.Model(inputs, outputs)
    model.compile(loss=loss, optimizer="rmsprop")
    return model


NOT_REPRODUCIBLE = "This test assumes reproducibility in fit."
EXPECTED_FAILED_CHECKS = {
    "SKLearnClassifier": {
        # Keras's list.
        "check_classifiers_one_label_sample_weights": "0 sample weight is not ignored",
        "check_classifiers_classes": "with small test cases not all classes are predicted",
        "check_classifier_data_not_an_array": NOT_REPRODUCIBLE,
        "check_supervised_y_2d": NOT_REPRODUCIBLE,
        "check_fit_idempotent": NOT_REPRODUCIBLE,
        "check_classifiers_train": "decision_function can return probabilities or logits",
        # minikeras's.
        "check_decision_proba_consistency": (
            "decision_function has a column per class for binary problems, as Keras's"
        ),
    },
    # Checks that fit twice and compare: each fit draws new initial weights. (Keras's
    # constant models pass them; see the estimators below.)
    "SKLearnRegressor": {
        "check_regressor_data_not_an_array": NOT_REPRODUCIBLE,
        "check_supervised_y_2d": NOT_REPRODUCIBLE,
        "check_regressors_int": NOT_REPRODUCIBLE,
        "check_fit_idempotent": NOT_REPRODUCIBLE,
    },
    "SKLearnTransformer": {"check_fit_idempotent": NOT_REPRODUCIBLE},
}
QUIET = {"verbose": 0}
LINEAR = {"loss": "mse", "out_activation_function": "linear"}


@parametrize_with_checks(
    [
        SKLearnClassifier(
            model=dynamic_model,
            model_kwargs={"loss": "categorical_crossentropy", "layers": [20, 20, 20]},
            fit_kwargs={"epochs": 5, **QUIET},
        ),
        # Keras's regressor and transformer keep the softmax default: over one output
        # column it is constantly 1, and nothing trains (minikeras's fit warns so).
        SKLearnRegressor(model=dynamic_model, model_kwargs=LINEAR, fit_kwargs=QUIET),
        SKLearnTransformer(model=dynamic_model, model_kwargs=LINEAR, fit_kwargs=QUIET),
    ],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS[type(estimator).__name__],
)
def test_sklearn_estimator_checks(estimator, check):
    mk.utils.set_random_seed(0)
    check(estimator)


@pytest.mark.parametrize("activation", ["softmax", "linear"])
def test_decision_function_argmax_is_predict(activation):
    # Keras's test: the largest raw output is the predicted class.
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=10, n_features=10, n_informative=4, n_classes=2, random_state=42
    )
    estimator = SKLearnClassifier(
        model=dynamic_model,
        model_kwargs={"out_activation_function": activation, "loss": "binary_crossentropy"},
        fit_kwargs={"epochs": 1, **QUIET},
    ).fit(X, y)
    decision = estimator.decision_function(X)
    assert decision.shape == (10, 2)
    assert (estimator.classes_[decision.argmax(axis=1)] == estimator.predict(X)).all()
