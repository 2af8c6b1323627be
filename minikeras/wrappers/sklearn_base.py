"""`SKLBase`: what the scikit-learn wrappers share (parameters, `fit`, `predict`, cloning).

Not exported, as in Keras: `minikeras.wrappers` exports the three classes
built on it (`sklearn_wrapper`).
"""

import numpy as np

from minikeras.models import Model
from minikeras.wrappers.sklearn_support import (
    BaseEstimator,
    check_compiled,
    check_fitted,
    fresh_model,
    require_sklearn,
    target_type,
    validate_data,
)

__all__ = ["SKLBase"]


class SKLBase(BaseEstimator):
    """What the three scikit-learn wrappers share: parameters, `fit`, `predict`, cloning.

    The base of `SKLearnClassifier`, `SKLearnRegressor` and
    `SKLearnTransformer`; not exported, as in Keras. After `fit`, `model_`
    is the fitted model, `history_` what its `fit` returned and
    `n_features_in_` the number of input columns. Training draws random
    numbers (initial weights, shuffling): seed with
    `mk.utils.set_random_seed` for repeatable results.

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
        >>> reg = mk.wrappers.SKLearnRegressor(model=None, fit_kwargs={"epochs": 3})
        >>> reg.get_params()
        {'fit_kwargs': {'epochs': 3}, 'model': None, 'model_kwargs': None, 'warm_start': False}
    """

    def __init__(self, model, warm_start=False, model_kwargs=None, fit_kwargs=None):
        # scikit-learn's convention: keep the parameters as given, check them in fit.
        require_sklearn(type(self).__name__)
        self.model = model
        self.warm_start = warm_start
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags

    def _more_tags(self):  # the tags of scikit-learn < 1.6
        return {"non_deterministic": True}

    def __sklearn_clone__(self):
        # The same parameters, without scikit-learn's deep copy of a Model (fit clones
        # it anyway). Keras's clone leaves fit_kwargs out; minikeras keeps them.
        return type(self)(
            model=self.model,
            warm_start=self.warm_start,
            model_kwargs=None if self.model_kwargs is None else dict(self.model_kwargs),
            fit_kwargs=None if self.fit_kwargs is None else dict(self.fit_kwargs),
        )

    def fit(self, X, y, **kwargs):
        """Trains a model on `(X, y)` and keeps it as `model_`.

        Args:
            X: array-like of shape `(samples, features)`.
            y: array-like of shape `(samples,)`: the targets.
            **kwargs: keyword arguments for `model.fit`, over `fit_kwargs`.

        Returns:
            The wrapper itself.

        Raises:
            TypeError: if `model` is neither a Model nor a callable, or what
                it returns is not a Model, or `model_kwargs` or `fit_kwargs`
                is not a dict.
            RuntimeError: if the model is not compiled with a loss and an optimizer.
            ValueError: if `y` is None, or for inputs or targets
                scikit-learn's checks refuse.

        Example:
            >>> def build(X, y):
            ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(1)])
            ...     model.compile(optimizer="sgd", loss="mse")
            ...     return model
            >>> reg = mk.wrappers.SKLearnRegressor(build)
            >>> reg = reg.fit(np.ones((4, 3)), np.ones(4), epochs=2, verbose=0)
            >>> reg.n_features_in_, reg.history_.epoch
            (3, [0, 1])
        """
        name = type(self).__name__
        for argument in ("model_kwargs", "fit_kwargs"):
            value = getattr(self, argument)
            if value is not None and not isinstance(value, dict):
                raise TypeError(f"{name}: {argument} must be a dict or None, got {value!r:.80}")
        if not isinstance(self.model, Model) and not callable(self.model):
            raise TypeError(
                f"{name}: model must be a compiled Model or a callable that returns one, "
                f"got {type(self.model).__name__}"
            )
        if y is None:  # scikit-learn's words, which its checks look for
            raise ValueError(
                f"This {name} estimator requires y to be passed, but the target y is None: "
                "the model is trained on (X, y)"
            )
        X, y = validate_data(self, X, y, reset=True)
        targets = self._process_target(y, reset=True)
        model = check_compiled(self._get_model(X, targets), name, self._model_source())
        # A copy: the call's keyword arguments must not stay in `fit_kwargs` (Keras's do).
        fit_kwargs = {**(self.fit_kwargs or {}), **kwargs}
        self.history_ = model.fit(X, targets, **fit_kwargs)
        self.model_ = model
        return self

    def _model_source(self):
        if self.warm_start and hasattr(self, "model_"):
            return "the model of the previous fit"
        return "model" if isinstance(self.model, Model) else "what the model callable returned"

    def _get_model(self, X, y):
        if self.warm_start and hasattr(self, "model_"):
            return self.model_
        if isinstance(self.model, Model):
            return self.model if self.warm_start else fresh_model(self.model)
        return self.model(X=X, y=y, **(self.model_kwargs or {}))

    def predict(self, X):
        """The fitted model's predictions for `X`, in the targets' shape.

        Args:
            X: array-like of shape `(samples, features)`, with the columns `fit` saw.

        Returns:
            A numpy array: `(samples,)` for one output column (a regressor
            fitted on a 1-D target), else the model's outputs.

        Raises:
            sklearn.exceptions.NotFittedError: before `fit`.
            ValueError: if `X` has another number of columns than in `fit`.

        Example:
            >>> def build(X, y):
            ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(1)])
            ...     model.compile(optimizer="sgd", loss="mse")
            ...     return model
            >>> reg = mk.wrappers.SKLearnRegressor(build, fit_kwargs={"epochs": 1, "verbose": 0})
            >>> reg.fit(np.ones((4, 3)), np.ones(4)).predict(np.ones((2, 3))).shape
            (2,)
        """
        check_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._reverse_process_target(self.model_.predict(X))

    def _process_target(self, y, reset=False):
        """Regressors and transformers train on a column: `(samples,)` becomes `(samples, 1)`."""
        target_type(y)  # scikit-learn's error for a target of unknown kind
        return np.reshape(y, (-1, 1)) if np.ndim(y) == 1 else y

    def _reverse_process_target(self, outputs):
        return outputs[:, 0] if outputs.ndim == 2 and outputs.shape[1] == 1 else outputs
