"""Layers: the `Layer` base class and the built-in layers."""

from minikeras.layers.activation import Activation
from minikeras.layers.attention import MultiHeadAttention
from minikeras.layers.bidirectional import Bidirectional
from minikeras.layers.conv_transpose import Conv1DTranspose, Conv2DTranspose
from minikeras.layers.convolutional import Conv1D, Conv2D
from minikeras.layers.dense import Dense
from minikeras.layers.depthwise import (
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
)
from minikeras.layers.dot import Dot
from minikeras.layers.dropout import Dropout
from minikeras.layers.embedding import Embedding
from minikeras.layers.gru import GRU
from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.lambda_layer import Lambda
from minikeras.layers.layer import Layer
from minikeras.layers.lstm import LSTM
from minikeras.layers.masking import Masking
from minikeras.layers.merging import (
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
)
from minikeras.layers.merging_functions import (
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from minikeras.layers.normalization import BatchNormalization, LayerNormalization
from minikeras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    MaxPooling1D,
    MaxPooling2D,
)
from minikeras.layers.recurrent import SimpleRNN
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
from minikeras.layers.serialization import deserialize, serialize
from minikeras.layers.tracking import TrackingWarning

__all__ = [
    "Activation",
    "Add",
    "Average",
    "AveragePooling1D",
    "AveragePooling2D",
    "BatchNormalization",
    "Bidirectional",
    "Concatenate",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Cropping2D",
    "Dense",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "Dot",
    "Dropout",
    "Embedding",
    "Flatten",
    "GaussianNoise",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GRU",
    "Input",
    "InputSpec",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "LSTM",
    "MaxPooling1D",
    "MaxPooling2D",
    "Masking",
    "Maximum",
    "Minimum",
    "MultiHeadAttention",
    "Multiply",
    "Permute",
    "RepeatVector",
    "Reshape",
    "SeparableConv1D",
    "SeparableConv2D",
    "SimpleRNN",
    "SpatialDropout2D",
    "Subtract",
    "SymbolicTensor",
    "TrackingReport",
    "TrackingWarning",
    "UpSampling2D",
    "ZeroPadding2D",
    "add",
    "average",
    "concatenate",
    "dot",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
    "deserialize",
    "serialize",
]
