"""scikit-learn wrappers for minikeras models, as Keras 3's `keras.wrappers`.

`SKLearnClassifier`, `SKLearnRegressor` and `SKLearnTransformer` make a
compiled model (or a function that builds one) a scikit-learn estimator:
it fits in pipelines, `cross_val_score`, `GridSearchCV` and `clone`.

scikit-learn is an optional dependency, the `sklearn` extra
(`pip install "minikeras[sklearn]"`). `import minikeras` does not import it:
the wrappers (and scikit-learn, when installed) are loaded the first time
one of these names is read, and making a wrapper without scikit-learn
raises an ImportError that says what to install.

Example:
    >>> from sklearn.base import clone
    >>> est = mk.wrappers.SKLearnRegressor(model=None, warm_start=True)
    >>> clone(est).get_params()["warm_start"]
    True
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for readers and the documentation; loaded lazily below
    from minikeras.wrappers.sklearn_wrapper import (
        SKLearnClassifier,
        SKLearnRegressor,
        SKLearnTransformer,
    )

__all__ = ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"]


def __getattr__(name):
    # Module-level __getattr__ (PEP 562): importing sklearn takes seconds (it loads
    # scipy), paid on first use, not by `import minikeras`.
    if name in __all__:
        from minikeras.wrappers import sklearn_wrapper

        return getattr(sklearn_wrapper, name)
    raise AttributeError(f"module 'minikeras.wrappers' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *__all__])
