"""minikeras: a small, fast, honest deep-learning framework with the Keras API.

As in Keras, the base classes custom objects subclass are also here
(`mk.Loss`, `mk.Metric`, `mk.Optimizer`, `mk.Initializer`, `mk.Regularizer`,
`mk.InputSpec`), and `mk.KerasTensor` is the class of `mk.Input(...)`'s
symbolic tensors.
"""

import importlib as _importlib

from minikeras import (
    activations,
    backend,
    callbacks,
    config,
    constraints,
    datasets,
    dtype_policies,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    preprocessing,
    random,
    regularizers,
    saving,
    schedules,
    tree,
    utils,
    wrappers,
)
from minikeras.dtype_policies import DTypePolicy, FloatDTypePolicy
from minikeras.engine import GradientTape, Tensor, Variable
from minikeras.initializers import Initializer
from minikeras.layers import Input, InputSpec, Layer, TrackingWarning
from minikeras.layers.input_layer import SymbolicTensor as KerasTensor
from minikeras.layers.preprocessing.feature_space import FeatureSpace as _FeatureSpace
from minikeras.losses import Loss
from minikeras.metrics import Metric
from minikeras.models import Model, Sequential
from minikeras.models.visualization import model_to_dot as _model_to_dot
from minikeras.models.visualization import plot_model as _plot_model
from minikeras.optimizers import Optimizer
from minikeras.regularizers import Regularizer

__version__ = "0.2.0"

# Keras defines FeatureSpace among the preprocessing layers and exports it as
# keras.utils.FeatureSpace; `utils` imports no layers, so the name is bound here,
# once both are imported.
utils.FeatureSpace = _FeatureSpace
# The same for model_to_dot and plot_model (models.visualization: they read models).
utils.model_to_dot, utils.plot_model = _model_to_dot, _plot_model
utils.__all__ = sorted([*utils.__all__, "FeatureSpace", "model_to_dot", "plot_model"])


def __getattr__(name):
    # `mk.applications` (twenty modules of model builders, about 0.1 s to import) is
    # imported when first used: a script that builds its own model never pays for it.
    if name == "applications":
        return _importlib.import_module("minikeras.applications")
    raise AttributeError(f"module 'minikeras' has no attribute {name!r}")


def version():
    """Returns minikeras's version, as `keras.version()` returns Keras's.

    Returns:
        A string, `mk.__version__`.

    Example:
        >>> mk.version() == mk.__version__
        True
    """
    return __version__


__all__ = [
    "DTypePolicy",
    "FloatDTypePolicy",
    "GradientTape",
    "Initializer",
    "Input",
    "InputSpec",
    "KerasTensor",
    "Layer",
    "Loss",
    "Metric",
    "Model",
    "Optimizer",
    "Regularizer",
    "Sequential",
    "Tensor",
    "TrackingWarning",
    "Variable",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "config",
    "constraints",
    "datasets",
    "dtype_policies",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "ops",
    "optimizers",
    "preprocessing",
    "random",
    "regularizers",
    "saving",
    "schedules",
    "tree",
    "utils",
    "version",
    "wrappers",
]
