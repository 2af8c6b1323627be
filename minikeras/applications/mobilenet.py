"""MobileNet (Howard et al., 2017): depthwise separable convolutions.

After a strided 3x3 convolution, 13 blocks each filter every channel on its
own (a 3x3 depthwise convolution) and then mix the channels (a 1x1
convolution), both followed by batch normalization and ReLU6. `alpha` scales
every width, `depth_multiplier` the depthwise filters per channel. Layer
names, shapes and weights match Keras's `keras.applications.MobileNet`.
Inputs are preprocessed in `"tf"` mode (into [-1, 1]).
"""

import warnings

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["MobileNet", "decode_predictions", "preprocess_input"]

SIZES = (128, 160, 192, 224)
ALPHAS = {0.25: "2_5", 0.5: "5_0", 0.75: "7_5", 1.0: "1_0"}  # as Keras's file names spell them
# (pointwise filters, stride) of blocks 1..13.
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)) + ((512, 1),) * 5
BLOCKS += ((1024, 2), (1024, 1))


def _normalize_relu6(x, name):
    x = layers.BatchNormalization(axis=builder.channel_axis(), name=f"{name}_bn")(x)
    return layers.ReLU(6.0, name=f"{name}_relu")(x)


def _depthwise_separable_block(x, filters, stride, depth_multiplier, block_id):
    """A 3x3 depthwise convolution (strided ones pad bottom and right), then a 1x1."""
    if stride == 2:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D(
        3,
        padding="same" if stride == 1 else "valid",
        depth_multiplier=depth_multiplier,
        strides=stride,
        use_bias=False,
        name=f"conv_dw_{block_id}",
    )(x)
    x = _normalize_relu6(x, f"conv_dw_{block_id}")
    x = layers.Conv2D(filters, 1, padding="same", use_bias=False, name=f"conv_pw_{block_id}")(x)
    return _normalize_relu6(x, f"conv_pw_{block_id}")


def MobileNet(  # noqa: N802 (Keras's name)
    input_shape=None,
    alpha=1.0,
    depth_multiplier=1,
    dropout=1e-3,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name=None,
):
    """Instantiates the MobileNet architecture (Keras's `keras.applications.MobileNet`).

    A stride-2 3x3 convolution (`conv1`), 13 depthwise separable blocks
    (`conv_dw_{i}`, `conv_pw_{i}`); with the top, global average pooling,
    dropout (`dropout`), a 1x1 convolution to `classes` (`conv_preds`),
    flattened (`reshape_2`), and the activation (`predictions`). Call
    `mk.applications.mobilenet.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    Keras's `mobilenet_{alpha}_{rows}_tf[_no_top].h5` (alpha spelt `1_0`,
    `7_5`, `5_0`, `2_5`) from its cache (`~/.keras/models`) if it is there,
    else raises; pass a local weights file instead. An unknown `pooling` is
    an error (Keras ignores it).

    Args:
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 32; with the top and ImageNet
            weights it must be square with a side in 128, 160, 192, 224.
        alpha: the width multiplier of every layer's filters.
        depth_multiplier: depthwise filters per input channel.
        dropout: the top's dropout rate.
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        pooling: without the top: None (the 4D feature map), `"avg"` or
            `"max"` (global pooling to a 2D output).
        classes: number of classes of the top.
        classifier_activation: the top's activation (only None or
            `"softmax"` with pretrained weights).
        name: the model's name; None means `"mobilenet_{alpha:0.2f}_{rows}"`.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`,
            `classifier_activation`, or (with ImageNet weights) `alpha` or
            `depth_multiplier`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.MobileNet((32, 32, 3), alpha=0.25, weights=None, classes=10)
        >>> model.name, model.output_shape, model.count_params()
        ('mobilenet_0.25_32', (None, 10), 221114)
    """
    builder.check_arguments(
        "MobileNet", weights, include_top, classes, pooling, classifier_activation
    )
    default_size = 224
    if input_shape is not None and len(input_shape) == 3:
        rows, cols = input_shape[:2] if builder.channel_axis() == -1 else input_shape[1:]
        if rows == cols and rows in SIZES:
            default_size = rows
    input_shape = builder.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows, cols = input_shape[:2] if builder.channel_axis() == -1 else input_shape[1:]
    path = None
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(
                "MobileNet: with weights='imagenet', depth_multiplier must be 1; "
                f"got depth_multiplier={depth_multiplier}"
            )
        if alpha not in ALPHAS:
            raise ValueError(
                "MobileNet: with weights='imagenet', alpha must be one of 0.25, 0.50, 0.75 or "
                f"1.0; got alpha={alpha}"
            )
        if rows != cols or rows not in SIZES:
            rows = 224
            warnings.warn(
                "MobileNet: input_shape is undefined or non-square, or its side is not in "
                "[128, 160, 192, 224]; the weights for (224, 224) are loaded",
                stacklevel=2,
            )
        top = "" if include_top else "_no_top"
        file = f"mobilenet_{ALPHAS[alpha]}_{rows}_tf{top}.h5"
        path = builder.weights_path("MobileNet", weights, file)
    elif weights is not None:
        path = weights
    image = builder.image_input(input_tensor, input_shape)
    x = layers.Conv2D(int(32 * alpha), 3, padding="same", use_bias=False, strides=2, name="conv1")(
        image
    )
    x = _normalize_relu6(x, "conv1")
    for block_id, (filters, stride) in enumerate(BLOCKS, 1):
        x = _depthwise_separable_block(x, int(filters * alpha), stride, depth_multiplier, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, 1, padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = builder.classifier_or_pooling(x, False, pooling, classes, classifier_activation, {})
    if name is None:
        name = f"mobilenet_{alpha:0.2f}_{rows}"
    return builder.finish(input_tensor, image, x, name, path)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for MobileNet: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.mobilenet.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
        array([[[-1.,  0.,  1.]]])
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
        >>> mk.applications.mobilenet.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
