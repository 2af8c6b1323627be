"""scikit-learn estimators around a minikeras model, as Keras 3's `keras.wrappers`.

`fit(X, y)` gets a compiled model (built by the `model` callable, or a
fresh clone of a given model), trains it with `model.fit`, and keeps it as
`model_`; `predict`, `predict_proba` and `transform` read its outputs. The
wrappers follow scikit-learn's conventions, so they go in pipelines,
`cross_val_score`, `GridSearchCV` and `clone`.
"""

import numpy as np

from minikeras.wrappers.sklearn_base import SKLBase
from minikeras.wrappers.sklearn_support import (
    ClassifierMixin,
    RegressorMixin,
    TransformerMixin,
    check_fitted,
    one_hot,
    target_type,
    validate_data,
)

__all__ = ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"]


class SKLearnClassifier(ClassifierMixin, SKLBase):
    """A scikit-learn classifier around a minikeras model, as `keras.wrappers.SKLearnClassifier`.

    `fit` one-hot encodes the labels (any labels `np.unique` sorts: ints,
    strings...) over `classes_`, so the model needs one output column per
    class, for instance a softmax `Dense(y.shape[1])` trained with
    `"categorical_crossentropy"`, binary problems included (two columns).
    `predict` returns the class of the largest output, `decision_function`
    the raw outputs, `predict_proba` the outputs checked to be
    probabilities, and `score` the accuracy. Only binary and multiclass
    targets are accepted.

    Args:
        model: a callable `model(X=X, y=y, **model_kwargs)` that returns a
            compiled `Model` (it sees the validated `X` and the encoded
            targets, so it can size the model's input and output), or a
            compiled `Model`, which is cloned (new weights, same compile
            settings) at each `fit` unless `warm_start` is True.
        warm_start: if True, each `fit` after the first goes on training the
            model it fitted before (a given `Model` is trained itself, not a
            clone). Defaults to False: each `fit` starts from a new model.
        model_kwargs: dict of keyword arguments for the `model` callable,
            or None.
        fit_kwargs: dict of keyword arguments for `model.fit` (`epochs`,
            `batch_size`, `verbose`, `callbacks`...), or None; keyword
            arguments given to the wrapper's `fit` override them.

    Raises:
        ImportError: if scikit-learn (the `sklearn` extra) is not installed.

    Example:
        >>> def build(X, y):
        ...     model = mk.Sequential(
        ...         [mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1], activation="softmax")]
        ...     )
        ...     model.compile(optimizer="adam", loss="categorical_crossentropy")
        ...     return model
        >>> X = np.array([[0.0], [0.1], [0.9], [1.0]])
        >>> clf = mk.wrappers.SKLearnClassifier(build, fit_kwargs={"epochs": 2, "verbose": 0})
        >>> clf.fit(X, np.array(["low", "low", "high", "high"])).classes_
        array(['high', 'low'], dtype='<U4')
        >>> clf.predict_proba(X).shape
        (4, 2)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags

    def _more_tags(self):  # the tags of scikit-learn < 1.6
        return {"non_deterministic": True, "poor_score": True}

    def _process_target(self, y, reset=False):
        """One-hot rows over `classes_` (found when `reset`)."""
        kind = target_type(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(
                f"Unknown label type: {kind}. SKLearnClassifier takes binary or multiclass "
                "targets (a 1-D array of labels)"
            )
        if reset:
            classes = np.unique(y)
            if len(classes) == 1:
                raise ValueError(
                    "SKLearnClassifier can't train when only one class is present "
                    f"(every label is {classes[0]!r})"
                )
            self.classes_ = classes
        return one_hot(y, self.classes_)

    def _reverse_process_target(self, outputs):
        return self.classes_[np.argmax(self._checked_outputs(outputs), axis=1)]

    def _checked_outputs(self, outputs):
        if outputs.ndim != 2 or outputs.shape[1] != len(self.classes_):
            raise ValueError(
                f"SKLearnClassifier: the model's outputs have shape {outputs.shape}; expected "
                f"(samples, {len(self.classes_)}), a column per class of classes_"
            )
        return outputs

    def decision_function(self, X):
        """The fitted model's raw outputs for `X`: a column per class of `classes_`.

        Args:
            X: array-like of shape `(samples, features)`.

        Returns:
            A numpy array of shape `(samples, classes)`.

        Raises:
            sklearn.exceptions.NotFittedError: before `fit`.
            ValueError: if `X` has another number of columns than in `fit`.

        Example:
            >>> def build(X, y):
            ...     head = mk.layers.Dense(y.shape[1], activation="softmax")
            ...     model = mk.Sequential([mk.Input((X.shape[1],)), head])
            ...     model.compile(optimizer="adam", loss="categorical_crossentropy")
            ...     return model
            >>> clf = mk.wrappers.SKLearnClassifier(build, fit_kwargs={"epochs": 1, "verbose": 0})
            >>> clf.fit(np.eye(3), [0, 1, 2]).decision_function(np.eye(3)).shape
            (3, 3)
        """
        check_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X)

    def predict_proba(self, X):
        """The probability of each class of `classes_` for `X`: the model's outputs, checked.

        Keras's wrapper has no `predict_proba` (it has `decision_function`);
        this one returns the same outputs after checking that each row is a
        probability distribution, as a softmax output is.

        Args:
            X: array-like of shape `(samples, features)`.

        Returns:
            A numpy array of shape `(samples, classes)`, rows summing to 1.

        Raises:
            sklearn.exceptions.NotFittedError: before `fit`.
            ValueError: if the outputs are not probabilities (a model without
                a softmax output: use `decision_function`).

        Example:
            >>> def build(X, y):
            ...     model = mk.Sequential(
            ...         [mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1], activation="softmax")]
            ...     )
            ...     model.compile(optimizer="adam", loss="categorical_crossentropy")
            ...     return model
            >>> clf = mk.wrappers.SKLearnClassifier(build, fit_kwargs={"epochs": 1, "verbose": 0})
            >>> proba = clf.fit(np.eye(3), [0, 1, 2]).predict_proba(np.eye(3))
            >>> np.allclose(proba.sum(axis=1), 1.0)
            True
        """
        outputs = self._checked_outputs(self.decision_function(X))
        sums = outputs.sum(axis=1)
        if np.any(outputs < 0) or np.any(outputs > 1) or not np.allclose(sums, 1.0, atol=1e-3):
            raise ValueError(
                "SKLearnClassifier.predict_proba: the model's outputs are not probabilities "
                f"(values in [{outputs.min():.3g}, {outputs.max():.3g}], row sums in "
                f"[{sums.min():.3g}, {sums.max():.3g}]); end the model with a softmax, or "
                "use decision_function for raw outputs"
            )
        return outputs


class SKLearnRegressor(RegressorMixin, SKLBase):
    """A scikit-learn regressor around a minikeras model, as `keras.wrappers.SKLearnRegressor`.

    `fit` trains the model on a 1-D target as a column `(samples, 1)`;
    `predict` returns `(samples,)` again, and `score` is the R² score.

    Args:
        model: a callable `model(X=X, y=y, **model_kwargs)` that returns a
            compiled `Model` (it sees the validated `X` and the encoded
            targets, so it can size the model's input and output), or a
            compiled `Model`, which is cloned (new weights, same compile
            settings) at each `fit` unless `warm_start` is True.
        warm_start: if True, each `fit` after the first goes on training the
            model it fitted before (a given `Model` is trained itself, not a
            clone). Defaults to False: each `fit` starts from a new model.
        model_kwargs: dict of keyword arguments for the `model` callable,
            or None.
        fit_kwargs: dict of keyword arguments for `model.fit` (`epochs`,
            `batch_size`, `verbose`, `callbacks`...), or None; keyword
            arguments given to the wrapper's `fit` override them.

    Raises:
        ImportError: if scikit-learn (the `sklearn` extra) is not installed.

    Example:
        >>> def build(X, y):
        ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1])])
        ...     model.compile(optimizer="sgd", loss="mse")
        ...     return model
        >>> X = np.linspace(-1, 1, 16).reshape(8, 2)
        >>> reg = mk.wrappers.SKLearnRegressor(build, fit_kwargs={"epochs": 2, "verbose": 0})
        >>> reg.fit(X, X.sum(axis=1)).predict(X).shape
        (8,)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def _more_tags(self):  # the tags of scikit-learn < 1.6
        return {"non_deterministic": True, "poor_score": True}


class SKLearnTransformer(TransformerMixin, SKLBase):
    """A scikit-learn transformer around a minikeras model, as `keras.wrappers.SKLearnTransformer`.

    A transformer in scikit-learn's sense: `fit(X, y)` trains the model on
    `(X, y)` as the regressor does (`y` as a column), and `transform(X)`
    returns the model's outputs, `(samples, outputs)`, to feed the next
    step of a pipeline (an embedding, when the model's loss reads only
    part of its outputs). To use an already trained model without training it again,
    wrap the transformer in scikit-learn's `FrozenEstimator`.

    Args:
        model: a callable `model(X=X, y=y, **model_kwargs)` that returns a
            compiled `Model` (it sees the validated `X` and the encoded
            targets, so it can size the model's input and output), or a
            compiled `Model`, which is cloned (new weights, same compile
            settings) at each `fit` unless `warm_start` is True.
        warm_start: if True, each `fit` after the first goes on training the
            model it fitted before (a given `Model` is trained itself, not a
            clone). Defaults to False: each `fit` starts from a new model.
        model_kwargs: dict of keyword arguments for the `model` callable,
            or None.
        fit_kwargs: dict of keyword arguments for `model.fit` (`epochs`,
            `batch_size`, `verbose`, `callbacks`...), or None; keyword
            arguments given to the wrapper's `fit` override them.

    Raises:
        ImportError: if scikit-learn (the `sklearn` extra) is not installed.

    Example:
        >>> def build(X, y):
        ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(1)])
        ...     model.compile(optimizer="sgd", loss="mse")
        ...     return model
        >>> X = np.ones((6, 4))
        >>> trs = mk.wrappers.SKLearnTransformer(build, fit_kwargs={"epochs": 1, "verbose": 0})
        >>> trs.fit_transform(X, np.ones(6)).shape
        (6, 1)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _more_tags(self):  # the tags of scikit-learn < 1.6
        return {"non_deterministic": True, "preserves_dtype": []}

    def fit(self, X, y=None, **kwargs):
        """Trains the model on `(X, y)`, as `SKLBase.fit`; `y` is needed.

        Args:
            X: array-like of shape `(samples, features)`.
            y: array-like of shape `(samples,)`: the targets the model learns.
            **kwargs: keyword arguments for `model.fit`, over `fit_kwargs`.

        Returns:
            The transformer itself.

        Raises:
            ValueError: if `y` is None, or for what scikit-learn's checks refuse.
            TypeError: as `SKLBase.fit`.
            RuntimeError: if the model is not compiled with a loss and an optimizer.

        Example:
            >>> def build(X, y):
            ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(1)])
            ...     model.compile(optimizer="sgd", loss="mse")
            ...     return model
            >>> trs = mk.wrappers.SKLearnTransformer(build, fit_kwargs={"verbose": 0})
            >>> trs = trs.fit(np.ones((4, 2)), np.ones(4))
            >>> trs.model_.output_shape
            (None, 1)
        """
        return super().fit(X, y, **kwargs)

    def transform(self, X):
        """The fitted model's outputs for `X`.

        Args:
            X: array-like of shape `(samples, features)`, with the columns `fit` saw.

        Returns:
            A numpy array: the model's outputs, `(samples, ...)`.

        Raises:
            sklearn.exceptions.NotFittedError: before `fit`.
            ValueError: if `X` has another number of columns than in `fit`.

        Example:
            >>> def build(X, y):
            ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(1)])
            ...     model.compile(optimizer="sgd", loss="mse")
            ...     return model
            >>> trs = mk.wrappers.SKLearnTransformer(build, fit_kwargs={"verbose": 0})
            >>> trs = trs.fit(np.ones((4, 2)), np.ones(4))
            >>> trs.transform(np.ones((5, 2))).shape
            (5, 1)
        """
        check_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X)
