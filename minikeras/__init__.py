"""minikeras: a small, fast, honest deep-learning framework with the Keras API."""

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
)
from minikeras.dtype_policies import DTypePolicy, FloatDTypePolicy
from minikeras.engine import GradientTape, Tensor, Variable
from minikeras.layers import Input, Layer, TrackingWarning
from minikeras.layers.preprocessing.feature_space import FeatureSpace as _FeatureSpace
from minikeras.models import Model, Sequential

__version__ = "0.2.0"

# Keras defines FeatureSpace among the preprocessing layers and exports it as
# keras.utils.FeatureSpace; `utils` imports no layers, so the name is bound here,
# once both are imported.
utils.FeatureSpace = _FeatureSpace
utils.__all__ = sorted([*utils.__all__, "FeatureSpace"])

__all__ = [
    "DTypePolicy",
    "FloatDTypePolicy",
    "GradientTape",
    "Input",
    "Layer",
    "Model",
    "Sequential",
    "Tensor",
    "TrackingWarning",
    "Variable",
    "activations",
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
]
