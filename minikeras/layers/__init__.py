"""Layers: the `Layer` base class and the built-in layers."""

from minikeras.layers.activation import Activation
from minikeras.layers.attention import MultiHeadAttention
from minikeras.layers.dense import Dense
from minikeras.layers.dropout import Dropout
from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.lambda_layer import Lambda
from minikeras.layers.layer import Layer
from minikeras.layers.merging import (
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
)
from minikeras.layers.normalization import BatchNormalization, LayerNormalization
from minikeras.layers.regularization import GaussianNoise, SpatialDropout2D
from minikeras.layers.report import TrackingReport
from minikeras.layers.reshaping import (
    Cropping2D,
    Flatten,
    Permute,
    RepeatVector,
    Reshape,
    UpSampling2D,
    ZeroPadding2D,
)
from minikeras.layers.tracking import TrackingWarning

__all__ = [
    "Activation",
    "Add",
    "Average",
    "BatchNormalization",
    "Concatenate",
    "Cropping2D",
    "Dense",
    "Dropout",
    "Flatten",
    "GaussianNoise",
    "Input",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "Maximum",
    "Minimum",
    "MultiHeadAttention",
    "Multiply",
    "Permute",
    "RepeatVector",
    "Reshape",
    "SpatialDropout2D",
    "Subtract",
    "SymbolicTensor",
    "TrackingReport",
    "TrackingWarning",
    "UpSampling2D",
    "ZeroPadding2D",
]
