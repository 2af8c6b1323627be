"""EfficientNetB0 to B7 (Tan and Le, 2019): MBConv blocks scaled in width, depth and resolution.

Each block expands its channels with a 1x1 convolution, filters them with a
depthwise convolution, reweighs the channels by squeeze-and-excitation, and
projects them back down; a block that keeps the shape adds its input, after
dropping the whole residual branch of a random sample ("drop connect", a
`Dropout` with `noise_shape=(None, 1, 1, 1)`) at a rate growing with depth.
B1..B7 scale B0's widths, repeats and image side by fixed coefficients.

The model preprocesses its inputs itself (a `Rescaling` by 1/255, then a
`Normalization` holding ImageNet's mean and variance with the weights, and
with `weights="imagenet"` a second `Rescaling` per channel, as in Keras), so
it takes pixels in 0..255 and `preprocess_input` returns its input as it is,
as Keras's does. Layer names, shapes and weights match Keras's
`keras.applications.EfficientNetB0` etc., so its weights files load.
"""

import math

from minikeras import initializers, layers
from minikeras.applications import builder, imagenet_utils

__all__ = [
    "EfficientNetB0",
    "EfficientNetB1",
    "EfficientNetB2",
    "EfficientNetB3",
    "EfficientNetB4",
    "EfficientNetB5",
    "EfficientNetB6",
    "EfficientNetB7",
    "decode_predictions",
    "preprocess_input",
]

# (kernel_size, repeats, filters_in, filters_out, expand_ratio, strides) of B0's seven stages;
# every block has squeeze-and-excitation at a quarter of its input filters.
STAGES = (
    (3, 1, 32, 16, 1, 1),
    (3, 2, 16, 24, 6, 2),
    (5, 2, 24, 40, 6, 2),
    (3, 3, 40, 80, 6, 2),
    (5, 3, 80, 112, 6, 1),
    (5, 4, 112, 192, 6, 2),
    (3, 1, 192, 320, 6, 1),
)
SE_RATIO = 0.25
# (width_coefficient, depth_coefficient, default_size, dropout_rate) of B0..B7.
VARIANTS = {
    "b0": (1.0, 1.0, 224, 0.2),
    "b1": (1.0, 1.1, 240, 0.2),
    "b2": (1.1, 1.2, 260, 0.3),
    "b3": (1.2, 1.4, 300, 0.3),
    "b4": (1.4, 1.8, 380, 0.4),
    "b5": (1.6, 2.2, 456, 0.4),
    "b6": (1.8, 2.6, 528, 0.5),
    "b7": (2.0, 3.1, 600, 0.5),
}
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def conv_initializer():
    """He-style initialization over the fan out, as Keras's EfficientNets use for convolutions."""
    return initializers.VarianceScaling(2.0, mode="fan_out", distribution="truncated_normal")


def dense_initializer():
    """The classifier's initialization in Keras's EfficientNets."""
    return initializers.VarianceScaling(1.0 / 3.0, mode="fan_out", distribution="uniform")


def round_filters(filters, width_coefficient, divisor=8):
    """`filters * width_coefficient` rounded to a multiple of `divisor`, never below 90% of it."""
    filters *= width_coefficient
    rounded = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    return int(rounded + divisor if rounded < 0.9 * filters else rounded)


def _normalize(x, name):
    return layers.BatchNormalization(axis=_bn_axis(), name=name)(x)


def _bn_axis():
    # Keras names the axis 3 or 1 (not -1), which shows in the layers' configs.
    return 3 if builder.channel_axis() == -1 else 1


def _block(inputs, drop_rate, name, filters_in, filters_out, kernel_size, strides, expand_ratio):
    """An MBConv block: expand, depthwise, squeeze-excite, project; residual when shapes keep."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(
            filters,
            1,
            padding="same",
            use_bias=False,
            kernel_initializer=conv_initializer(),
            name=f"{name}expand_conv",
        )(x)
        x = _normalize(x, f"{name}expand_bn")
        x = layers.Activation("swish", name=f"{name}expand_activation")(x)
    if strides == 2:
        padding = builder.correct_pad(x, kernel_size)
        x = layers.ZeroPadding2D(padding=padding, name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(
        kernel_size,
        strides=strides,
        padding="valid" if strides == 2 else "same",
        use_bias=False,
        depthwise_initializer=conv_initializer(),
        name=f"{name}dwconv",
    )(x)
    x = _normalize(x, f"{name}bn")
    x = layers.Activation("swish", name=f"{name}activation")(x)
    x = squeeze_excite(x, filters, max(1, int(filters_in * SE_RATIO)), "swish", name)
    x = layers.Conv2D(
        filters_out,
        1,
        padding="same",
        use_bias=False,
        kernel_initializer=conv_initializer(),
        name=f"{name}project_conv",
    )(x)
    x = _normalize(x, f"{name}project_bn")
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def squeeze_excite(x, filters, filters_se, activation, name):
    """Squeeze-and-excitation: each channel scaled by a gate computed from all channels' means.

    Shared with EfficientNetV2 (the layers `{name}se_squeeze`, `se_reshape`,
    `se_reduce`, `se_expand`, `se_excite`).

    Args:
        x: the feature map, `filters` channels.
        filters: its channels.
        filters_se: the channels of the bottleneck between the two 1x1 convolutions.
        activation: the bottleneck's activation.
        name: the block's prefix.

    Returns:
        The reweighed feature map.
    """
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    shape = (1, 1, filters) if builder.channel_axis() == -1 else (filters, 1, 1)
    se = layers.Reshape(shape, name=f"{name}se_reshape")(se)
    se = layers.Conv2D(
        filters_se,
        1,
        padding="same",
        activation=activation,
        kernel_initializer=conv_initializer(),
        name=f"{name}se_reduce",
    )(se)
    se = layers.Conv2D(
        filters,
        1,
        padding="same",
        activation="sigmoid",
        kernel_initializer=conv_initializer(),
        name=f"{name}se_expand",
    )(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _efficientnet(variant, arguments):
    """Builds EfficientNet `variant` (`"b0"`..`"b7"`) from its function's `arguments`."""
    model_name = f"EfficientNet{variant.upper()}"
    width, depth, default_size, dropout_rate = VARIANTS[variant]
    include_top, weights = arguments["include_top"], arguments["weights"]
    pooling, classes = arguments["pooling"], arguments["classes"]
    activation = arguments["classifier_activation"]
    builder.check_arguments(model_name, weights, include_top, classes, pooling, activation)
    input_shape = builder.obtain_input_shape(
        arguments["input_shape"], default_size, 32, include_top, weights
    )
    top = ".h5" if include_top else "_notop.h5"
    path = builder.weights_path(model_name, weights, f"efficientnet{variant}{top}")
    image = builder.image_input(arguments["input_tensor"], input_shape)
    x = layers.Rescaling(1.0 / 255.0)(image)
    x = layers.Normalization(axis=_bn_axis())(x)
    if weights == "imagenet":
        # The weights were converted from a model that scaled its inputs differently; Keras
        # divides once more by the square root of each channel's std to match it
        # (tensorflow/tensorflow#49930), and so do we, for the same weights.
        x = layers.Rescaling([1.0 / math.sqrt(std) for std in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=builder.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(
        round_filters(32, width),
        3,
        strides=2,
        padding="valid",
        use_bias=False,
        kernel_initializer=conv_initializer(),
        name="stem_conv",
    )(x)
    x = _normalize(x, "stem_bn")
    x = layers.Activation("swish", name="stem_activation")(x)
    blocks = float(sum(math.ceil(depth * stage[1]) for stage in STAGES))
    index = 0
    for stage, (kernel, repeats, filters_in, filters_out, expand, strides) in enumerate(STAGES):
        filters_in, filters_out = (
            round_filters(filters_in, width),
            round_filters(filters_out, width),
        )
        for repeat in range(math.ceil(depth * repeats)):
            x = _block(
                x,
                0.2 * index / blocks,  # the drop connect rate grows linearly to 0.2
                f"block{stage + 1}{chr(ord('a') + repeat)}_",
                filters_in if repeat == 0 else filters_out,
                filters_out,
                kernel,
                strides if repeat == 0 else 1,
                expand,
            )
            index += 1
    x = layers.Conv2D(
        round_filters(1280, width),
        1,
        padding="same",
        use_bias=False,
        kernel_initializer=conv_initializer(),
        name="top_conv",
    )(x)
    x = _normalize(x, "top_bn")
    x = layers.Activation("swish", name="top_activation")(x)
    x = classifier_or_pooling(x, arguments, dropout_rate)
    return builder.finish(arguments["input_tensor"], image, x, arguments["name"], path)


def classifier_or_pooling(x, arguments, dropout_rate, bias_initializer="zeros"):
    """The EfficientNets' top: `avg_pool`, `top_dropout` (when the rate is positive) and
    `predictions`; or, without it, the optional `avg_pool` or `max_pool`.

    Shared with EfficientNetV2.

    Args:
        x: the last feature map.
        arguments: the application's arguments.
        dropout_rate: the dropout before the classifier.
        bias_initializer: the classifier's (EfficientNetV2 names a `Constant(0)`).

    Returns:
        The output symbolic tensor.
    """
    if not arguments["include_top"]:
        names = {"avg": "avg_pool", "max": "max_pool"}
        return builder.classifier_or_pooling(x, False, arguments["pooling"], 0, None, names)
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    if dropout_rate > 0:
        x = layers.Dropout(dropout_rate, name="top_dropout")(x)
    return layers.Dense(
        arguments["classes"],
        activation=arguments["classifier_activation"],
        kernel_initializer=dense_initializer(),
        bias_initializer=bias_initializer,
        name="predictions",
    )(x)


def _application(variant):
    """The function `EfficientNet{variant}`, its docstring written once for all eight."""
    width, depth, size, dropout = VARIANTS[variant]
    model_name = f"EfficientNet{variant.upper()}"

    def application(
        include_top=True,
        weights="imagenet",
        input_tensor=None,
        input_shape=None,
        pooling=None,
        classes=1000,
        classifier_activation="softmax",
        name=f"efficientnet{variant}",
    ):
        arguments = {"include_top": include_top, "weights": weights, "pooling": pooling}
        arguments.update(input_tensor=input_tensor, input_shape=input_shape, classes=classes)
        arguments.update(classifier_activation=classifier_activation, name=name)
        return _efficientnet(variant, arguments)

    application.__name__ = application.__qualname__ = model_name
    # The larger variants take seconds to initialize: their examples are not run.
    skip = "" if variant in ("b0", "b1", "b2") else "  # doctest: +SKIP"
    application.__doc__ = f"""Instantiates {model_name} (Keras's `keras.applications.{model_name}`).

    B0's stages scaled by width {width} and depth {depth}, trained on {size}x{size}
    images, dropout {dropout} before the classifier. The model rescales and normalizes
    its inputs itself: give it pixels in 0..255.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `efficientnet{variant}[_notop].h5` from Keras's cache (`~/.keras/models`) if it
    is there, else raises (whatever `name` is; Keras names the file after `name`).
    An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 32; with the top and ImageNet weights
            it must be ({size}, {size}, 3).
        pooling: without the top: None (the 4D feature map), `"avg"` or
            `"max"` (global pooling to a 2D output).
        classes: number of classes of the top.
        classifier_activation: the top's activation (only None or
            `"softmax"` with pretrained weights).
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape` or
            `classifier_activation`.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.{model_name}({skip}
        ...     weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg"
        ... )
        >>> model.output_shape{skip}
        (None, {round_filters(1280, width)})
    """
    return application


EfficientNetB0 = _application("b0")
EfficientNetB1 = _application("b1")
EfficientNetB2 = _application("b2")
EfficientNetB3 = _application("b3")
EfficientNetB4 = _application("b4")
EfficientNetB5 = _application("b5")
EfficientNetB6 = _application("b6")
EfficientNetB7 = _application("b7")


def preprocess_input(x, data_format=None):
    """Returns `x` as it is: EfficientNets rescale and normalize their inputs themselves.

    Kept, as in Keras, so that every family has one.

    Args:
        x: a numpy array or tensor of images in 0..255.
        data_format: unused (`"channels_last"`, `"channels_first"` or None).

    Returns:
        `x`, unchanged.

    Example:
        >>> mk.applications.efficientnet.preprocess_input(np.array([0.0, 255.0]))
        array([  0., 255.])
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
        >>> mk.applications.efficientnet.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
