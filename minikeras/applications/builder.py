"""What every application does around its layers: check arguments, make the input, the top, load.

An application function (`VGG16`, `ResNet50`, ...) calls `check_arguments`
and `image_input` first, stacks its layers, then `classifier_or_pooling`, then
`finish`, which makes the `Model` and loads the weights (`weights_path`
finds them first, so a missing file fails before anything is built). Nothing here is
downloaded: `weights="imagenet"` uses the file Keras keeps in its cache if
there is one, and otherwise says where to put it.
"""

import os
import warnings

from minikeras import config, layers
from minikeras.applications.imagenet_utils import keras_models_cache
from minikeras.applications.legacy_weights import is_legacy_h5, load_legacy_h5
from minikeras.models import Model
from minikeras.utils import get_source_inputs, is_keras_tensor

__all__ = [
    "channel_axis",
    "check_arguments",
    "classifier_or_pooling",
    "correct_pad",
    "finish",
    "image_input",
    "obtain_input_shape",
    "weights_path",
]

WEIGHTS_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"


def channel_axis():
    """The channel axis of a batch of images under the global image data format.

    Returns:
        `-1` for `"channels_last"`, `1` for `"channels_first"`.
    """
    return -1 if config.image_data_format() == "channels_last" else 1


def check_arguments(model, weights, include_top, classes, pooling, classifier_activation):
    """Checks the arguments every application shares, before anything is built.

    Args:
        model: the application's name, for messages (`"VGG16"`).
        weights: None, `"imagenet"` or the path of a weights file.
        include_top: bool.
        classes: positive int.
        pooling: None, `"avg"` or `"max"`.
        classifier_activation: the top's activation.

    Returns:
        None.

    Raises:
        ValueError: on a value Keras refuses, and on an unknown `pooling`
            (which Keras ignores silently).
    """
    if not (weights in (None, "imagenet") or os.path.exists(weights)):
        raise ValueError(
            f"{model}: the `weights` argument should be None (random initialization), "
            "'imagenet' (pre-training on ImageNet) or the path of a weights file to load; "
            f"got weights={weights!r}, which is not an existing file"
        )
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(
            f"{model}: with weights='imagenet' and include_top=True, `classes` must be 1000; "
            f"got classes={classes}"
        )
    if include_top and (isinstance(classes, bool) or not isinstance(classes, int) or classes < 1):
        raise ValueError(f"{model}: `classes` must be a positive int, got classes={classes!r}")
    if pooling not in (None, "avg", "max"):
        raise ValueError(
            f"{model}: `pooling` must be None, 'avg' or 'max', got pooling={pooling!r}"
        )
    if (
        include_top
        and weights is not None
        and classifier_activation not in (None, "softmax", "linear")
    ):
        raise ValueError(
            f"{model}: with pretrained weights and include_top=True, classifier_activation "
            f"must be None or 'softmax', got classifier_activation={classifier_activation!r}"
        )


def obtain_input_shape(input_shape, default_size, min_size, require_flatten, weights):
    """The input shape an application builds for, checked as Keras checks it.

    Args:
        input_shape: None or a tuple of 3 ints (or None for a free size).
        default_size: the side of the images the weights were trained on.
        min_size: the smallest side the architecture accepts.
        require_flatten: True when the classifier top is included (the shape
            must then be static).
        weights: None, `"imagenet"` or a path (ImageNet weights need 3 channels).

    Returns:
        A tuple of 3 (channels placed by the image data format).

    Raises:
        ValueError: for a shape that is not 3 long, too small, not 3 channels
            with ImageNet weights, or not static with the top.
    """
    channels_last = config.image_data_format() == "channels_last"

    def image(side, channels=3):
        return (side, side, channels) if channels_last else (channels, side, side)

    if input_shape is not None and weights != "imagenet" and len(input_shape) == 3:
        channels = input_shape[-1] if channels_last else input_shape[0]
        if channels not in (1, 3):
            warnings.warn(
                f"This model usually expects 1 or 3 input channels, got input_shape={input_shape}",
                stacklevel=3,
            )
        default_shape = image(default_size, channels)
    else:
        default_shape = image(default_size)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError(
                "When setting include_top=True and loading 'imagenet' weights, input_shape "
                f"should be {default_shape}; got input_shape={input_shape}"
            )
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError(
                f"`input_shape` must be a tuple of three integers, got input_shape={input_shape}"
            )
        channels = input_shape[-1] if channels_last else input_shape[0]
        sides = input_shape[:2] if channels_last else input_shape[1:]
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; got input_shape={input_shape}")
        if any(side is not None and side < min_size for side in sides):
            raise ValueError(
                f"Input size must be at least {min_size}x{min_size}; got input_shape={input_shape}"
            )
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (None, None, 3) if channels_last else (3, None, None)
    if require_flatten and None in input_shape:
        raise ValueError(
            "If include_top is True, you should specify a static input_shape; "
            f"got input_shape={input_shape}"
        )
    return input_shape


def image_input(input_tensor, input_shape):
    """The symbolic image the application's layers start from.

    Args:
        input_tensor: None or a symbolic tensor (from `mk.Input`, or layers
            called on one) to build on.
        input_shape: the shape from `obtain_input_shape`, used when
            `input_tensor` is None.

    Returns:
        A symbolic tensor.

    Raises:
        TypeError: if `input_tensor` is not a symbolic tensor (Keras also
            wraps a backend tensor; minikeras does not).
    """
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not is_keras_tensor(input_tensor):
        raise TypeError(
            "input_tensor must be a symbolic tensor (from mk.Input or a layer called on one), "
            f"got {type(input_tensor).__name__}"
        )
    return input_tensor


def classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, names):
    """Ends the features `x` with the classifier top, or with the optional pooling.

    Args:
        x: the last feature map.
        include_top: whether to add the classifier (global average pooling,
            then `Dense(classes)` named `"predictions"`).
        pooling: None, `"avg"` or `"max"`, without the top.
        classes: the classifier's units.
        classifier_activation: the classifier's activation.
        names: a dict giving the pooling layers' names (`"avg"`, `"max"`)
            where the architecture names them (Keras names them for ResNets
            only; elsewhere they are named automatically).

    Returns:
        The output symbolic tensor.
    """
    if include_top:
        x = layers.GlobalAveragePooling2D(name=names.get("avg"))(x)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names.get("avg"))(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names.get("max"))(x)
    return x


def correct_pad(x, kernel_size):
    """The zero padding that lines a strided "valid" convolution up as in Keras's pretrained models.

    Args:
        x: the symbolic tensor about to be convolved.
        kernel_size: int, the convolution's kernel side.

    Returns:
        `((top, bottom), (left, right))` for `ZeroPadding2D`.
    """
    sides = x.shape[1:3] if config.image_data_format() == "channels_last" else x.shape[2:4]
    adjust = (1, 1) if sides[0] is None else (1 - sides[0] % 2, 1 - sides[1] % 2)
    half = kernel_size // 2
    return ((half - adjust[0], half), (half - adjust[1], half))


def finish(input_tensor, image, outputs, name, weights_path):
    """Makes the `Model` and loads its weights.

    Args:
        input_tensor: the caller's input tensor, or None.
        image: the symbolic image the layers started from.
        outputs: the output symbolic tensor.
        name: the model's name.
        weights_path: None, or the file to load (from `weights_path`): Keras's
            older order-matched `.h5` layout (`legacy_weights`), or anything
            `Model.load_weights` reads.

    Returns:
        The `Model`.
    """
    inputs = get_source_inputs(input_tensor) if input_tensor is not None else image
    model = Model(inputs, outputs, name=name)
    if weights_path is not None and is_legacy_h5(weights_path):
        load_legacy_h5(model, weights_path)  # Keras's older layout: its ImageNet files
    elif weights_path is not None:
        model.load_weights(weights_path)
    return model


def weights_path(model_name, weights, weights_file):
    """The file `weights` names: None, the caller's path, or Keras's cached ImageNet file.

    Args:
        model_name: the application's name, for the message.
        weights: None, `"imagenet"` or a path.
        weights_file: the file name of the ImageNet weights, as Keras names
            it in its cache (`"vgg16_weights_tf_dim_ordering_tf_kernels.h5"`).

    Returns:
        None or a path.

    Raises:
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache (minikeras never downloads).
    """
    if weights != "imagenet":
        return weights
    path = keras_models_cache() / weights_file
    if not path.is_file():
        raise FileNotFoundError(
            f"{model_name}: weights='imagenet' needs {weights_file}, which minikeras cannot "
            f"download (no network access; it never downloads). Put it at {path} (Keras's "
            "cache), or pass the path of a local weights file as `weights=` (a Keras "
            ".weights.h5 or .keras file, or a minikeras weights file), or use weights=None "
            "for random initialization"
        )
    return path
