"""What the scikit-learn wrappers need from scikit-learn, imported here and nowhere else.

scikit-learn is optional (the `sklearn` extra). Without it the wrappers'
classes still exist, on empty stand-ins for scikit-learn's base classes (as
in Keras), so that `minikeras.wrappers` can be read and documented; making
a wrapper raises an ImportError that names the extra. `import minikeras`
does not import this module: `minikeras.wrappers` loads it on first use.
"""

import numpy as np

from minikeras.models import Model, clone_model

try:
    import sklearn
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
except ImportError:
    sklearn = None

    class BaseEstimator:
        """Stands for `sklearn.base.BaseEstimator` when scikit-learn is not installed."""

    class ClassifierMixin:
        """Stands for `sklearn.base.ClassifierMixin` when scikit-learn is not installed."""

    class RegressorMixin:
        """Stands for `sklearn.base.RegressorMixin` when scikit-learn is not installed."""

    class TransformerMixin:
        """Stands for `sklearn.base.TransformerMixin` when scikit-learn is not installed."""


__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "RegressorMixin",
    "TransformerMixin",
    "check_compiled",
    "check_fitted",
    "fresh_model",
    "one_hot",
    "require_sklearn",
    "target_type",
    "validate_data",
]


def require_sklearn(owner):
    """Raises the ImportError that names the `sklearn` extra when scikit-learn is missing."""
    if sklearn is None:
        raise ImportError(
            f"{owner} needs scikit-learn, the 'sklearn' extra: "
            "pip install 'minikeras[sklearn]' (or pip install scikit-learn)"
        )


def validate_data(estimator, X, y=None, reset=True):
    """scikit-learn's input checks; they set `n_features_in_` when `reset`.

    `sklearn.utils.validation.validate_data` from scikit-learn 1.6, the
    estimator's own `_validate_data` before.
    """
    try:
        from sklearn.utils.validation import validate_data as sklearn_validate
    except ImportError:  # scikit-learn < 1.6
        sklearn_validate = type(estimator)._validate_data
    if y is None:
        return sklearn_validate(estimator, X, reset=reset)
    return sklearn_validate(estimator, X, y, reset=reset)


def check_fitted(estimator):
    """scikit-learn's NotFittedError unless `fit` has run."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "model_")


def target_type(y):
    """scikit-learn's name for the kind of target (`"binary"`, `"continuous"`...)."""
    from sklearn.utils.multiclass import type_of_target

    kind = type_of_target(y, input_name="y")
    if kind == "unknown":
        raise ValueError(f"Unknown label type for y: {y!r:.200}")
    return kind


def fresh_model(model):
    """A clone of a compiled model: new weights, compiled as `model` is (Keras's clone_model)."""
    clone = clone_model(model)
    if model.compiled and not clone.compiled:
        clone.compile_from_config(model.get_compile_config())
    return clone


def check_compiled(model, owner, where):
    """The model `where` gave, checked: a minikeras Model, compiled with a loss and an optimizer."""
    if not isinstance(model, Model):
        raise TypeError(f"{owner}: {where} must be a minikeras Model, got {type(model).__name__}")
    if not model.compiled or not model.loss or not model.optimizer:
        raise RuntimeError(
            f"{owner}: the model '{model.name}' needs to be compiled, with a loss and an "
            "optimizer, before it is fitted (the wrapper does not compile it)"
        )
    return model


def one_hot(y, classes):
    """`y`'s labels as float32 one-hot rows, a column per class of `classes` (sorted)."""
    return (np.asarray(y).reshape(-1, 1) == np.asarray(classes).reshape(1, -1)).astype("float32")
