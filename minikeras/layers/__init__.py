"""Layers: the `Layer` base class and the built-in layers."""

from minikeras.layers.activation import Activation
from minikeras.layers.dense import Dense
from minikeras.layers.dropout import Dropout
from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.report import TrackingReport
from minikeras.layers.reshaping import Flatten, Reshape
from minikeras.layers.tracking import TrackingWarning

__all__ = [
    "Activation",
    "Dense",
    "Dropout",
    "Flatten",
    "Input",
    "Layer",
    "Reshape",
    "SymbolicTensor",
    "TrackingReport",
    "TrackingWarning",
]
