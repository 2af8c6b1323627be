"""Ready-made image classification architectures, Keras's `keras.applications`.

`VGG16`, `VGG19`, `ResNet50`, `ResNet101`, `ResNet152`, `ResNet50V2`,
`ResNet101V2`, `ResNet152V2` and `MobileNetV2` build the same layers, with the
same names and weights, as Keras's functions of those names, so a Keras
weights file (`.weights.h5`, `.keras`) loads into them. Each family's module
(`vgg16`, `resnet`, `resnet_v2`, `mobilenet_v2`, ...) also gives the
`preprocess_input` its weights expect and `decode_predictions`.

`DenseNet121`, `DenseNet169`, `DenseNet201` (module `densenet`), `MobileNet`
(`mobilenet`), `MobileNetV3Small`, `MobileNetV3Large` (`mobilenet_v3`, which
rescale their inputs themselves), `InceptionV3` (`inception_v3`) and
`Xception` (`xception`) likewise, and `InceptionResNetV2`
(`inception_resnet_v2`, with its `CustomScaleLayer`), `NASNetMobile` and
`NASNetLarge` (`nasnet`).

`EfficientNetB0`..`B7` (`efficientnet`) and `EfficientNetV2B0`..`B3`, `S`, `M`,
`L` (`efficientnet_v2`) likewise; they scale their inputs in their first layers,
so their `preprocess_input` returns its input unchanged, as Keras's does.
`ConvNeXtTiny`, `ConvNeXtSmall`, `ConvNeXtBase`, `ConvNeXtLarge` and
`ConvNeXtXLarge` (`convnext`) too, with their `LayerScale` and `StochasticDepth`
layers.

minikeras never downloads: `weights="imagenet"` reads Keras's cache
(`~/.keras/models`) and otherwise raises, asking for a local file.
"""

from minikeras.applications import (
    convnext,
    densenet,
    efficientnet,
    efficientnet_v2,
    imagenet_utils,
    inception_resnet_v2,
    inception_v3,
    mobilenet,
    mobilenet_v2,
    mobilenet_v3,
    nasnet,
    resnet,
    resnet50,
    resnet_v2,
    vgg16,
    vgg19,
    xception,
)
from minikeras.applications.convnext import (
    ConvNeXtBase,
    ConvNeXtLarge,
    ConvNeXtSmall,
    ConvNeXtTiny,
    ConvNeXtXLarge,
)
from minikeras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from minikeras.applications.efficientnet import (
    EfficientNetB0,
    EfficientNetB1,
    EfficientNetB2,
    EfficientNetB3,
    EfficientNetB4,
    EfficientNetB5,
    EfficientNetB6,
    EfficientNetB7,
)
from minikeras.applications.efficientnet_v2 import (
    EfficientNetV2B0,
    EfficientNetV2B1,
    EfficientNetV2B2,
    EfficientNetV2B3,
    EfficientNetV2L,
    EfficientNetV2M,
    EfficientNetV2S,
)
from minikeras.applications.inception_resnet_v2 import InceptionResNetV2
from minikeras.applications.inception_v3 import InceptionV3
from minikeras.applications.mobilenet import MobileNet
from minikeras.applications.mobilenet_v2 import MobileNetV2
from minikeras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from minikeras.applications.nasnet import NASNetLarge, NASNetMobile
from minikeras.applications.resnet import ResNet50, ResNet101, ResNet152
from minikeras.applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2
from minikeras.applications.vgg16 import VGG16
from minikeras.applications.vgg19 import VGG19
from minikeras.applications.xception import Xception

__all__ = [
    "ConvNeXtBase",
    "ConvNeXtLarge",
    "ConvNeXtSmall",
    "ConvNeXtTiny",
    "ConvNeXtXLarge",
    "DenseNet121",
    "DenseNet169",
    "DenseNet201",
    "EfficientNetB0",
    "EfficientNetB1",
    "EfficientNetB2",
    "EfficientNetB3",
    "EfficientNetB4",
    "EfficientNetB5",
    "EfficientNetB6",
    "EfficientNetB7",
    "EfficientNetV2B0",
    "EfficientNetV2B1",
    "EfficientNetV2B2",
    "EfficientNetV2B3",
    "EfficientNetV2L",
    "EfficientNetV2M",
    "EfficientNetV2S",
    "InceptionResNetV2",
    "InceptionV3",
    "MobileNet",
    "MobileNetV2",
    "MobileNetV3Large",
    "MobileNetV3Small",
    "NASNetLarge",
    "NASNetMobile",
    "ResNet50",
    "ResNet50V2",
    "ResNet101",
    "ResNet101V2",
    "ResNet152",
    "ResNet152V2",
    "VGG16",
    "VGG19",
    "Xception",
    "convnext",
    "densenet",
    "efficientnet",
    "efficientnet_v2",
    "imagenet_utils",
    "inception_resnet_v2",
    "inception_v3",
    "mobilenet",
    "mobilenet_v2",
    "mobilenet_v3",
    "nasnet",
    "resnet",
    "resnet50",
    "resnet_v2",
    "vgg16",
    "vgg19",
    "xception",
]
