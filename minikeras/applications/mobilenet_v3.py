"""MobileNetV3Small and MobileNetV3Large (Howard et al., 2019): MobileNetV2's blocks, searched.

Inverted residual blocks as in MobileNetV2 (expand, depthwise, project), with
3x3 or 5x5 depthwise kernels, squeeze-and-excite in some blocks (global
pooling, two 1x1 convolutions, a hard sigmoid that scales the channels), and
the hard swish `x * relu6(x + 3) / 6` instead of ReLU in the later blocks.
`minimalistic=True` drops the 5x5 kernels, squeeze-and-excite and hard swish.
The model rescales its inputs itself (`include_preprocessing`), so
`preprocess_input` returns its input unchanged. Layer names, shapes and
weights match Keras's `keras.applications.MobileNetV3Small` and `...Large`.
"""

import warnings

from minikeras import layers
from minikeras.applications import builder, imagenet_utils
from minikeras.applications.mobilenet_v2 import _make_divisible

__all__ = ["MobileNetV3Large", "MobileNetV3Small", "decode_predictions", "preprocess_input"]

# (expansion, filters, kernel, stride, squeeze-excite, hard swish) of each block; a kernel of
# None is 5 (3 when minimalistic); squeeze-excite and hard swish are off when minimalistic.
SMALL_BLOCKS = (
    (1, 16, 3, 2, True, False),
    (72 / 16, 24, 3, 2, False, False),
    (88 / 24, 24, 3, 1, False, False),
    (4, 40, None, 2, True, True),
    (6, 40, None, 1, True, True),
    (6, 40, None, 1, True, True),
    (3, 48, None, 1, True, True),
    (3, 48, None, 1, True, True),
    (6, 96, None, 2, True, True),
    (6, 96, None, 1, True, True),
    (6, 96, None, 1, True, True),
)
LARGE_BLOCKS = (
    (1, 16, 3, 1, False, False),
    (4, 24, 3, 2, False, False),
    (3, 24, 3, 1, False, False),
    (3, 40, None, 2, True, False),
    (3, 40, None, 1, True, False),
    (3, 40, None, 1, True, False),
    (6, 80, 3, 2, False, True),
    (2.5, 80, 3, 1, False, True),
    (2.3, 80, 3, 1, False, True),
    (2.3, 80, 3, 1, False, True),
    (6, 112, 3, 1, True, True),
    (6, 112, 3, 1, True, True),
    (6, 160, None, 2, True, True),
    (6, 160, None, 1, True, True),
    (6, 160, None, 1, True, True),
)


def _normalize(x, name):
    return layers.BatchNormalization(
        axis=builder.channel_axis(), epsilon=1e-3, momentum=0.999, name=name
    )(x)


def _activate(x, hard_swish):
    # Unnamed in Keras: automatically named layers.
    return layers.Activation("hard_swish")(x) if hard_swish else layers.ReLU()(x)


def _squeeze_excite(inputs, filters, prefix):
    """Scales each channel of `inputs` by a hard sigmoid of its pooled, squeezed value."""
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(
        inputs
    )
    x = layers.Conv2D(
        _make_divisible(filters * 0.25), 1, padding="same", name=f"{prefix}squeeze_excite_conv"
    )(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, 1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    x = layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)  # Keras's hard sigmoid, with the same layers
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_residual_block(x, block, filters, minimalistic, block_id):
    """Expand (not in block 0), depthwise, squeeze-excite, project; add the input if it fits."""
    expansion, _, kernel, stride, squeeze_excite, hard_swish = block
    kernel = kernel or (3 if minimalistic else 5)
    squeeze_excite = squeeze_excite and not minimalistic
    hard_swish = hard_swish and not minimalistic
    shortcut = x
    in_channels = x.shape[builder.channel_axis()]
    expanded = _make_divisible(in_channels * expansion)
    prefix = f"expanded_conv_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = layers.Conv2D(expanded, 1, padding="same", use_bias=False, name=f"{prefix}expand")(x)
        x = _activate(_normalize(x, f"{prefix}expand_bn"), hard_swish)
    if stride == 2:
        padding = builder.correct_pad(x, kernel)
        x = layers.ZeroPadding2D(padding=padding, name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(
        kernel,
        strides=stride,
        padding="same" if stride == 1 else "valid",
        use_bias=False,
        name=f"{prefix}depthwise",
    )(x)
    x = _activate(_normalize(x, f"{prefix}depthwise_bn"), hard_swish)
    if squeeze_excite:
        x = _squeeze_excite(x, expanded, prefix)
    x = layers.Conv2D(filters, 1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _normalize(x, f"{prefix}project_bn")
    if stride == 1 and in_channels == filters:
        return layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def _input_shape(model_name, input_shape, input_tensor):
    """Keras's MobileNetV3 input shape: free sides by default, each side at least 32."""
    channels_last = builder.channel_axis() == -1
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    if input_shape is None:
        return (None, None, 3) if channels_last else (3, None, None)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(
            f"{model_name}: `input_shape` must be a tuple of three integers, "
            f"got input_shape={input_shape}"
        )
    if input_tensor is not None:
        side = input_tensor.shape[2] if channels_last else input_tensor.shape[1]
        if side != input_shape[1]:
            raise ValueError(
                f"{model_name}: input_shape does not match the shape of input_tensor; got "
                f"input_shape={input_shape}, input_tensor.shape={input_tensor.shape}"
            )
    rows, cols = input_shape[:2] if channels_last else input_shape[1:]
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(
            f"{model_name}: input size must be at least 32x32; got input_shape={input_shape}"
        )
    return input_shape


def build_mobilenet_v3(model_name, blocks, last_point_channels, arguments):
    """Builds MobileNetV3Small or MobileNetV3Large from its table of blocks.

    Args:
        model_name: `"MobileNetV3Small"` or `"MobileNetV3Large"`.
        blocks: `SMALL_BLOCKS` or `LARGE_BLOCKS`.
        last_point_channels: the top's 1x1 convolution width (1024 or 1280).
        arguments: a dict of the application's arguments.

    Returns:
        A `Model`.
    """
    alpha, minimalistic = arguments["alpha"], arguments["minimalistic"]
    include_top, weights = arguments["include_top"], arguments["weights"]
    pooling, classes = arguments["pooling"], arguments["classes"]
    activation = arguments["classifier_activation"]
    input_tensor = arguments["input_tensor"]
    builder.check_arguments(model_name, weights, include_top, classes, pooling, activation)
    input_shape = _input_shape(model_name, arguments["input_shape"], input_tensor)
    path = None
    if weights == "imagenet":
        if alpha not in ((1.0,) if minimalistic else (0.75, 1.0)):
            raise ValueError(
                f"{model_name}: with weights='imagenet', alpha must be 0.75 or 1.0 "
                f"(1.0 when minimalistic); got alpha={alpha}, minimalistic={minimalistic}"
            )
        rows, cols = input_shape[:2] if builder.channel_axis() == -1 else input_shape[1:]
        if rows != cols or rows != 224:
            warnings.warn(
                f"{model_name}: input_shape is undefined or non-square, or its side is not "
                "224; the weights for (224, 224) are loaded",
                stacklevel=3,
            )
        kind = model_name[len("MobileNetV3") :].lower() + ("_minimalistic" if minimalistic else "")
        top = "" if include_top else "_no_top_v2"
        file = f"weights_mobilenet_v3_{kind}_224_{float(alpha)}_float{top}.h5"
        path = builder.weights_path(model_name, weights, file)
    elif weights is not None:
        path = weights
    image = builder.image_input(input_tensor, input_shape)
    hard_swish = not minimalistic
    x = image
    if arguments["include_preprocessing"]:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False, name="conv")(x)
    x = _activate(_normalize(x, "conv_bn"), hard_swish)
    for block_id, block in enumerate(blocks):
        filters = _make_divisible(block[1] * alpha)
        x = _inverted_residual_block(x, block, filters, minimalistic, block_id)
    last_conv_channels = _make_divisible(x.shape[builder.channel_axis()] * 6)
    if alpha > 1.0:
        last_point_channels = _make_divisible(last_point_channels * alpha)
    x = layers.Conv2D(last_conv_channels, 1, padding="same", use_bias=False, name="conv_1")(x)
    x = _activate(_normalize(x, "conv_1_bn"), hard_swish)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_channels, 1, padding="same", name="conv_2")(x)
        x = _activate(x, hard_swish)
        if arguments["dropout_rate"] > 0:
            x = layers.Dropout(arguments["dropout_rate"])(x)
        x = layers.Conv2D(classes, 1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        x = layers.Activation(activation, name="predictions")(x)
    else:
        names = {"avg": "avg_pool", "max": "max_pool"}
        x = builder.classifier_or_pooling(x, False, pooling, classes, activation, names)
    return builder.finish(input_tensor, image, x, arguments["name"], path)


def MobileNetV3Small(  # noqa: N802 (Keras's name)
    input_shape=None,
    alpha=1.0,
    minimalistic=False,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    classes=1000,
    pooling=None,
    dropout_rate=0.2,
    classifier_activation="softmax",
    include_preprocessing=True,
    name="MobileNetV3Small",
):
    """Instantiates MobileNetV3Small (Keras's `keras.applications.MobileNetV3Small`).

    Optionally `Rescaling(1 / 127.5, offset=-1)`, a stride-2 3x3 convolution
    (`conv`) to 16 channels, 11 inverted residual blocks, a 1x1 convolution
    (`conv_1`) to 6 times the last block's channels; with the top, global
    average pooling, a 1x1 convolution to 1024 channels (`conv_2`), dropout,
    a 1x1 convolution to `classes` (`logits`), flattened, and the activation
    (`predictions`). Takes images in 0..255 as they are.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `weights_mobilenet_v3_small[_minimalistic]_224_{alpha}_float[_no_top_v2].h5`
    from Keras's cache (`~/.keras/models`) if it is there, else raises; pass
    a local weights file instead. An unknown `pooling` is an error (Keras
    ignores it).

    Args:
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format); None means free sides, `(None, None, 3)`. Sides at
            least 32.
        alpha: the width multiplier of the blocks' filters (and of the top's
            1x1 convolution when above 1).
        minimalistic: True for 3x3 kernels, ReLU and no squeeze-and-excite.
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        classes: number of classes of the top.
        pooling: without the top: None (the 4D feature map), `"avg"` or
            `"max"` (global pooling to a 2D output).
        dropout_rate: the top's dropout rate (no `Dropout` layer when 0).
        classifier_activation: the top's activation (only None or
            `"softmax"` with pretrained weights).
        include_preprocessing: whether the model starts by rescaling 0..255
            to [-1, 1].
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`,
            `classifier_activation`, or (with ImageNet weights) `alpha`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.MobileNetV3Small((32, 32, 3), weights=None, classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 1540218)
    """
    return build_mobilenet_v3("MobileNetV3Small", SMALL_BLOCKS, 1024, locals())


def MobileNetV3Large(  # noqa: N802 (Keras's name)
    input_shape=None,
    alpha=1.0,
    minimalistic=False,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    classes=1000,
    pooling=None,
    dropout_rate=0.2,
    classifier_activation="softmax",
    include_preprocessing=True,
    name="MobileNetV3Large",
):
    """Instantiates MobileNetV3Large (Keras's `keras.applications.MobileNetV3Large`).

    `MobileNetV3Small`'s shape with 15 wider blocks and a 1280-channel top
    convolution. Same arguments, same differences from Keras (nothing is
    downloaded; the ImageNet file is
    `weights_mobilenet_v3_large[_minimalistic]_224_{alpha}_float[_no_top_v2].h5`).

    Args:
        input_shape: optional shape tuple of 3, sides at least 32.
        alpha: the width multiplier.
        minimalistic: True for 3x3 kernels, ReLU and no squeeze-and-excite.
        include_top: whether to include the classifier at the top.
        weights: None, `"imagenet"` (from Keras's cache only) or a weights file path.
        input_tensor: optional symbolic tensor to build on.
        classes: number of classes of the top.
        pooling: without the top: None, `"avg"` or `"max"`.
        dropout_rate: the top's dropout rate.
        classifier_activation: the top's activation.
        include_preprocessing: whether the model rescales 0..255 to [-1, 1].
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad argument (see `MobileNetV3Small`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.MobileNetV3Large(
        ...     (32, 32, 3), weights=None, include_top=False, pooling="avg"
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 960), 2996352)
    """
    return build_mobilenet_v3("MobileNetV3Large", LARGE_BLOCKS, 1280, locals())


def preprocess_input(x, data_format=None):
    """Returns `x` unchanged: MobileNetV3 rescales its inputs itself (as in Keras).

    Kept so that every family's module has one.

    Args:
        x: a numpy array or tensor.
        data_format: ignored.

    Returns:
        `x`, the same object.

    Example:
        >>> image = np.full((1, 1, 3), 255.0)
        >>> mk.applications.mobilenet_v3.preprocess_input(image) is image
        True
    """
    return x


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
        >>> mk.applications.mobilenet_v3.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
