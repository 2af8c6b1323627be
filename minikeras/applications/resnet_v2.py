"""ResNet50V2, ResNet101V2 and ResNet152V2 (He et al., 2016): ResNet with pre-activation blocks.

Each block normalizes and activates its input first, then 1x1, 3x3 and 1x1
convolutions; a stage downsamples in its last block. Layer names, shapes and
weights match Keras's `keras.applications.ResNet50V2` etc. Inputs are
preprocessed in `"tf"` mode (into [-1, 1]).
"""

from minikeras import layers
from minikeras.applications import builder, imagenet_utils
from minikeras.applications.resnet import EPSILON, build_resnet
from minikeras.applications.resnet import decode_predictions as _decode

__all__ = [
    "ResNet50V2",
    "ResNet101V2",
    "ResNet152V2",
    "decode_predictions",
    "preprocess_input",
]


def _block(x, filters, stride, conv_shortcut, name):
    """A pre-activation bottleneck block; its stride is on the 3x3 convolution."""
    axis = builder.channel_axis()
    preact = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    elif stride > 1:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x)  # unnamed in Keras too
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, 3, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def _stages(blocks_per_stage):
    """The stages `conv2`..`conv5`; each but the last halves the size in its last block."""

    def stack(x):
        for stage, (filters, blocks) in enumerate(zip((64, 128, 256, 512), blocks_per_stage), 2):
            x = _block(x, filters, 1, True, f"conv{stage}_block1")
            for block in range(2, blocks):
                x = _block(x, filters, 1, False, f"conv{stage}_block{block}")
            x = _block(x, filters, 1 if stage == 5 else 2, False, f"conv{stage}_block{blocks}")
        return x

    return stack


def ResNet50V2(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet50v2",
):
    """Instantiates the ResNet50V2 architecture (Keras's `keras.applications.ResNet50V2`).

    The `ResNet50` stem without its normalization, stages of 3, 4, 6 and 3
    pre-activation blocks, then `post_bn` and `post_relu`. Call
    `mk.applications.resnet_v2.preprocess_input` on images in 0..255 first.

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"` (Keras's cached
            file only; nothing is downloaded), or the path of a weights file
            to load (a Keras `.weights.h5` or `.keras` file, or a minikeras
            weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 32; with the top and ImageNet
            weights it must be `(224, 224, 3)`.
        pooling: without the top: None (the 4D feature map), `"avg"` or
            `"max"` (global pooling to a 2D output).
        classes: number of classes of the top.
        classifier_activation: the top's activation (only None or
            `"softmax"` with pretrained weights).
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`
            or `classifier_activation`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.ResNet50V2(weights=None, input_shape=(32, 32, 3), classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 23585290)
    """
    return build_resnet("ResNet50V2", _stages((3, 4, 6, 3)), True, locals())


def ResNet101V2(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet101v2",
):
    """Instantiates the ResNet101V2 architecture (Keras's `keras.applications.ResNet101V2`).

    `ResNet50V2` with 23 blocks in the third stage. Same arguments, same
    differences from Keras (nothing is downloaded).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None, `"imagenet"` (from Keras's cache only) or a weights file path.
        input_tensor: optional symbolic tensor to build on.
        input_shape: optional shape tuple of 3, sides at least 32.
        pooling: without the top: None, `"avg"` or `"max"`.
        classes: number of classes of the top.
        classifier_activation: the top's activation.
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad argument (see `ResNet50V2`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.ResNet101V2(weights=None, input_shape=(64, 64, 3), classes=2)
        >>> model.output_shape
        (None, 2)
    """
    return build_resnet("ResNet101V2", _stages((3, 4, 23, 3)), True, locals())


def ResNet152V2(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet152v2",
):
    """Instantiates the ResNet152V2 architecture (Keras's `keras.applications.ResNet152V2`).

    `ResNet50V2` with 8 blocks in the second stage and 36 in the third. Same
    arguments, same differences from Keras (nothing is downloaded).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None, `"imagenet"` (from Keras's cache only) or a weights file path.
        input_tensor: optional symbolic tensor to build on.
        input_shape: optional shape tuple of 3, sides at least 32.
        pooling: without the top: None, `"avg"` or `"max"`.
        classes: number of classes of the top.
        classifier_activation: the top's activation.
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad argument (see `ResNet50V2`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.ResNet152V2(
        ...     weights=None, include_top=False, input_shape=(32, 32, 3), pooling="max"
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 2048), 58331648)
    """
    return build_resnet("ResNet152V2", _stages((3, 8, 36, 3)), True, locals())


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for ResNetV2: `x / 127.5 - 1`, into [-1, 1].

    The `"tf"` mode of `mk.applications.imagenet_utils.preprocess_input`.

    Args:
        x: a numpy array or tensor of rank 3 or 4, 3 channels.
        data_format: `"channels_last"`, `"channels_first"`, or None for the
            global image data format.

    Returns:
        The preprocessed images (a numpy array for a numpy array).

    Raises:
        ValueError: for an unknown `data_format`.

    Example:
        >>> mk.applications.resnet_v2.preprocess_input(np.array([[[0, 255, 51]]], "uint8"))
        array([[[-1. ,  1. , -0.6]]], dtype=float32)
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    """Names the top ImageNet classes of each prediction (see `mk.applications.imagenet_utils`).

    Args:
        preds: an array of shape `(samples, 1000)`.
        top: int, how many classes per sample.

    Returns:
        A list of lists of `(class_name, class_description, score)`.

    Raises:
        ValueError: if `preds` is not of shape `(samples, 1000)`.
        FileNotFoundError: if ImageNet's class index is not in Keras's cache.

    Example:
        >>> mk.applications.resnet_v2.decode_predictions(np.zeros((1, 2)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return _decode(preds, top=top)
