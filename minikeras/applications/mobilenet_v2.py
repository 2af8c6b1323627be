"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks with linear bottlenecks.

Each block expands its channels with a 1x1 convolution, filters them with a
3x3 depthwise convolution, and projects them back down with a 1x1
convolution and no activation; blocks that keep the shape add their input.
`alpha` scales every width. Layer names, shapes and weights match Keras's
`keras.applications.MobileNetV2`. Inputs are preprocessed in `"tf"` mode.
"""

import warnings

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["MobileNetV2", "decode_predictions", "preprocess_input"]

SIZES = (96, 128, 160, 192, 224)
ALPHAS = (0.35, 0.5, 0.75, 1.0, 1.3, 1.4)
# (filters, stride, expansion, repeats) of each group of blocks, as in the paper's table 2.
GROUPS = ((16, 1, 1, 1), (24, 2, 6, 2), (32, 2, 6, 3), (64, 2, 6, 4), (96, 1, 6, 3))
GROUPS += ((160, 2, 6, 3), (320, 1, 6, 1))


def _make_divisible(value, divisor=8):
    """`value` rounded to the nearest multiple of `divisor`, never below 90% of it."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _normalize(x, name):
    return layers.BatchNormalization(
        axis=builder.channel_axis(), epsilon=1e-3, momentum=0.999, name=name
    )(x)


def _inverted_residual_block(inputs, expansion, stride, alpha, filters, block_id):
    """Expand (not in block 0), depthwise 3x3, project; add the input when shapes match."""
    in_channels = inputs.shape[builder.channel_axis()]
    out_channels = _make_divisible(int(filters * alpha))
    prefix = f"block_{block_id}_" if block_id else "expanded_conv_"
    x = inputs
    if block_id:
        x = layers.Conv2D(
            expansion * in_channels, 1, padding="same", use_bias=False, name=f"{prefix}expand"
        )(x)
        x = _normalize(x, f"{prefix}expand_BN")
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=builder.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(
        3,
        strides=stride,
        use_bias=False,
        padding="same" if stride == 1 else "valid",
        name=f"{prefix}depthwise",
    )(x)
    x = _normalize(x, f"{prefix}depthwise_BN")
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(out_channels, 1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _normalize(x, f"{prefix}project_BN")
    if in_channels == out_channels and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _default_size(input_shape, input_tensor):
    """The weights' image side, Keras's way: the input's side if square and known, else 224."""
    shape = input_shape
    if shape is None and input_tensor is not None:
        shape = input_tensor.shape[1:]
    if shape is None or len(shape) != 3:
        return 224
    rows, cols = (shape[0], shape[1]) if builder.channel_axis() == -1 else (shape[1], shape[2])
    return rows if rows == cols and rows in SIZES else 224


def MobileNetV2(  # noqa: N802 (Keras's name)
    input_shape=None,
    alpha=1.0,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name=None,
):
    """Instantiates the MobileNetV2 architecture (Keras's `keras.applications.MobileNetV2`).

    A stride-2 3x3 convolution (`Conv1`), 17 inverted residual blocks, a 1x1
    convolution to 1280 channels (`Conv_1`), ReLU6; with the top, global
    average pooling and the classifier. Call
    `mk.applications.mobilenet_v2.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    Keras's `mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{alpha}_{rows}[_no_top].h5`
    from its cache (`~/.keras/models`) if it is there, else raises; pass a
    local weights file instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 32; with the top and ImageNet
            weights it must be square with a side in 96, 128, 160, 192, 224.
        alpha: the width multiplier: every layer's filters are scaled by it
            (the last convolution's only when above 1).
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
        name: the model's name; None means `"mobilenetv2_{alpha:0.2f}_{rows}"`.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`,
            `classifier_activation`, or (with ImageNet weights) `alpha`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.MobileNetV2((32, 32, 3), alpha=0.35, weights=None, classes=10)
        >>> model.name, model.output_shape, model.count_params()
        ('mobilenetv2_0.35_32', (None, 10), 423018)
    """
    builder.check_arguments(
        "MobileNetV2", weights, include_top, classes, pooling, classifier_activation
    )
    if input_shape is not None and input_tensor is not None:
        side = input_tensor.shape[2] if builder.channel_axis() == -1 else input_tensor.shape[1]
        if side != input_shape[1]:
            raise ValueError(
                "MobileNetV2: input_shape does not match the shape of input_tensor; got "
                f"input_shape={input_shape}, input_tensor.shape={input_tensor.shape}"
            )
    default_size = _default_size(input_shape, input_tensor)
    input_shape = builder.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows, cols = input_shape[:2] if builder.channel_axis() == -1 else input_shape[1:]
    path = None
    if weights == "imagenet":
        if alpha not in ALPHAS:
            raise ValueError(
                "MobileNetV2: with weights='imagenet', alpha must be one of 0.35, 0.50, 0.75, "
                f"1.0, 1.3 or 1.4; got alpha={alpha}"
            )
        if rows != cols or rows not in SIZES:
            rows = 224
            warnings.warn(
                "MobileNetV2: input_shape is undefined or non-square, or its side is not in "
                "[96, 128, 160, 192, 224]; the weights for (224, 224) are loaded",
                stacklevel=2,
            )
        top = "" if include_top else "_no_top"
        file = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{top}.h5"
        path = builder.weights_path("MobileNetV2", weights, file)
    elif weights is not None:
        path = weights
    image = builder.image_input(input_tensor, input_shape)
    x = layers.Conv2D(
        _make_divisible(32 * alpha), 3, strides=2, padding="same", use_bias=False, name="Conv1"
    )(image)
    x = _normalize(x, "bn_Conv1")
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    block_id = 0
    for filters, stride, expansion, repeats in GROUPS:
        for repeat in range(repeats):
            x = _inverted_residual_block(
                x, expansion, stride if repeat == 0 else 1, alpha, filters, block_id
            )
            block_id += 1
    last_filters = _make_divisible(1280 * alpha) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_filters, 1, use_bias=False, name="Conv_1")(x)
    x = _normalize(x, "Conv_1_bn")
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = builder.classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, {})
    if name is None:
        name = f"mobilenetv2_{alpha:0.2f}_{rows}"
    return builder.finish(input_tensor, image, x, name, path)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for MobileNetV2: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.mobilenet_v2.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
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
        >>> mk.applications.mobilenet_v2.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
