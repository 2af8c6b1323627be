"""Keras's second names for some layers: the very same classes under a shorter or older name.

In Keras 3, `keras.layers.MaxPool2D is keras.layers.MaxPooling2D`, and so on
for every name here; a file written by either framework names the class by
its own `__name__` (`MaxPooling2D`), and a config that uses the second name
loads too (`minikeras.serialization_lib` finds any name `minikeras.layers`
exports).
"""

from minikeras.layers.conv_transpose import Conv1DTranspose, Conv2DTranspose
from minikeras.layers.convolutional import Conv1D, Conv2D
from minikeras.layers.convolutional_3d import Conv3D, Conv3DTranspose
from minikeras.layers.depthwise import SeparableConv1D, SeparableConv2D
from minikeras.layers.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
)
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

__all__ = [
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "Convolution1D",
    "Convolution1DTranspose",
    "Convolution2D",
    "Convolution2DTranspose",
    "Convolution3D",
    "Convolution3DTranspose",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "SeparableConvolution1D",
    "SeparableConvolution2D",
]

AvgPool1D = AveragePooling1D
AvgPool2D = AveragePooling2D
AvgPool3D = AveragePooling3D
MaxPool1D = MaxPooling1D
MaxPool2D = MaxPooling2D
MaxPool3D = MaxPooling3D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalMaxPool3D = GlobalMaxPooling3D
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution3D = Conv3D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
