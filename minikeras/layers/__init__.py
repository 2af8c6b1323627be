"""Layers: the `Layer` base class and the built-in layers."""

from minikeras.layers import operation_node  # noqa: F401 (binds what ops do on symbolic tensors)
from minikeras.layers.activation import Activation
from minikeras.layers.activation_layers import ELU, LeakyReLU, PReLU, ReLU, Softmax
from minikeras.layers.adaptive_pooling import (
    AdaptiveAveragePooling1D,
    AdaptiveAveragePooling2D,
    AdaptiveAveragePooling3D,
    AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D,
    AdaptiveMaxPooling3D,
)
from minikeras.layers.aliases import (  # Keras's second names: the same classes
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Convolution1D,
    Convolution1DTranspose,
    Convolution2D,
    Convolution2DTranspose,
    Convolution3D,
    Convolution3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    SeparableConvolution1D,
    SeparableConvolution2D,
)
from minikeras.layers.attention import MultiHeadAttention
from minikeras.layers.bidirectional import Bidirectional
from minikeras.layers.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from minikeras.layers.conv_transpose import Conv1DTranspose, Conv2DTranspose
from minikeras.layers.convolutional import Conv1D, Conv2D
from minikeras.layers.convolutional_3d import Conv3D, Conv3DTranspose
from minikeras.layers.dense import Dense
from minikeras.layers.depthwise import (
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
)
from minikeras.layers.dot import Dot
from minikeras.layers.dot_attention import AdditiveAttention, Attention
from minikeras.layers.dropout import Dropout
from minikeras.layers.einsum_dense import EinsumDense
from minikeras.layers.embedding import Embedding
from minikeras.layers.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
)
from minikeras.layers.group_normalization import GroupNormalization, UnitNormalization
from minikeras.layers.grouped_query_attention import GroupedQueryAttention, GroupQueryAttention
from minikeras.layers.gru import GRU, GRUCell
from minikeras.layers.identity import ActivityRegularization, Identity
from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.inputs import InputLayer
from minikeras.layers.lambda_layer import Lambda
from minikeras.layers.layer import Layer
from minikeras.layers.lstm import LSTM, LSTMCell
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
from minikeras.layers.noise import AlphaDropout, GaussianDropout, SpatialDropout1D, SpatialDropout3D
from minikeras.layers.normalization import BatchNormalization, LayerNormalization
from minikeras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    MaxPooling1D,
    MaxPooling2D,
)
from minikeras.layers.pooling_3d import (
    AveragePooling3D,
    GlobalAveragePooling3D,
    GlobalMaxPooling3D,
    MaxPooling3D,
)
from minikeras.layers.preprocessing import (
    AugMix,
    AutoContrast,
    CategoryEncoding,
    CenterCrop,
    ContrastLimitedAdaptiveHistogramEqualization,
    CutMix,
    Discretization,
    Equalization,
    HashedCrossing,
    Hashing,
    IntegerLookup,
    MixUp,
    Normalization,
    Pipeline,
    RandAugment,
    RandomBrightness,
    RandomColorDegeneration,
    RandomColorJitter,
    RandomContrast,
    RandomCrop,
    RandomElasticTransform,
    RandomErasing,
    RandomFlip,
    RandomGaussianBlur,
    RandomGrayscale,
    RandomHue,
    RandomInvert,
    RandomPerspective,
    RandomPosterization,
    RandomRotation,
    RandomSaturation,
    RandomSharpness,
    RandomShear,
    RandomTranslation,
    RandomZoom,
    Rescaling,
    Resizing,
    Solarization,
    StringLookup,
    TextVectorization,
)
from minikeras.layers.recurrent import SimpleRNN
from minikeras.layers.regularization import GaussianNoise, SpatialDropout2D
from minikeras.layers.report import TrackingReport
from minikeras.layers.reshaping import Flatten, Permute, RepeatVector, Reshape
from minikeras.layers.reshaping_2d import Cropping2D, UpSampling2D, ZeroPadding2D
from minikeras.layers.reshaping_nd import (
    Cropping1D,
    Cropping3D,
    UpSampling1D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding3D,
)
from minikeras.layers.reversible_embedding import ReversibleEmbedding
from minikeras.layers.rms_normalization import RMSNormalization
from minikeras.layers.rnn import RNN
from minikeras.layers.rnn_cells import SimpleRNNCell
from minikeras.layers.serialization import deserialize, serialize
from minikeras.layers.spectral_normalization import SpectralNormalization
from minikeras.layers.stacked_cells import StackedRNNCells
from minikeras.layers.time_distributed import TimeDistributed
from minikeras.layers.tracking import TrackingWarning
from minikeras.layers.wrapper import Wrapper

__all__ = [
    "Activation",
    "ActivityRegularization",
    "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D",
    "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D",
    "AdaptiveMaxPooling3D",
    "Add",
    "AdditiveAttention",
    "AlphaDropout",
    "Attention",
    "AugMix",
    "AutoContrast",
    "Average",
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "BatchNormalization",
    "Bidirectional",
    "CategoryEncoding",
    "CenterCrop",
    "Concatenate",
    "ContrastLimitedAdaptiveHistogramEqualization",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "ConvLSTM1D",
    "ConvLSTM2D",
    "ConvLSTM3D",
    "Convolution1D",
    "Convolution1DTranspose",
    "Convolution2D",
    "Convolution2DTranspose",
    "Convolution3D",
    "Convolution3DTranspose",
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "CutMix",
    "Dense",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "Discretization",
    "Dot",
    "Dropout",
    "ELU",
    "EinsumDense",
    "Embedding",
    "Equalization",
    "Flatten",
    "GRU",
    "GRUCell",
    "GaussianDropout",
    "GaussianNoise",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAveragePooling3D",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalMaxPooling3D",
    "GroupNormalization",
    "GroupQueryAttention",
    "GroupedQueryAttention",
    "HashedCrossing",
    "Hashing",
    "Identity",
    "Input",
    "InputLayer",
    "InputSpec",
    "IntegerLookup",
    "LSTM",
    "LSTMCell",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "LeakyReLU",
    "Masking",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "Maximum",
    "Minimum",
    "MixUp",
    "MultiHeadAttention",
    "Multiply",
    "Normalization",
    "PReLU",
    "Permute",
    "Pipeline",
    "RMSNormalization",
    "RNN",
    "RandAugment",
    "RandomBrightness",
    "RandomColorDegeneration",
    "RandomColorJitter",
    "RandomContrast",
    "RandomCrop",
    "RandomElasticTransform",
    "RandomErasing",
    "RandomFlip",
    "RandomGaussianBlur",
    "RandomGrayscale",
    "RandomHue",
    "RandomInvert",
    "RandomPerspective",
    "RandomPosterization",
    "RandomRotation",
    "RandomSaturation",
    "RandomSharpness",
    "RandomShear",
    "RandomTranslation",
    "RandomZoom",
    "ReLU",
    "RepeatVector",
    "Rescaling",
    "Reshape",
    "Resizing",
    "ReversibleEmbedding",
    "SeparableConv1D",
    "SeparableConv2D",
    "SeparableConvolution1D",
    "SeparableConvolution2D",
    "SimpleRNN",
    "SimpleRNNCell",
    "Softmax",
    "Solarization",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "SpectralNormalization",
    "StackedRNNCells",
    "StringLookup",
    "Subtract",
    "SymbolicTensor",
    "TextVectorization",
    "TimeDistributed",
    "TrackingReport",
    "TrackingWarning",
    "UnitNormalization",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "Wrapper",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
    "add",
    "average",
    "concatenate",
    "deserialize",
    "dot",
    "maximum",
    "minimum",
    "multiply",
    "serialize",
    "subtract",
]
