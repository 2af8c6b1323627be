"""EfficientNetV2 (Tan and Le, 2021): EfficientNet with fused MBConv blocks in its early stages.

A fused block replaces the expanding 1x1 and the depthwise convolutions of an
MBConv block by one full 3x3 convolution, faster on small feature maps; later
stages keep MBConv blocks with squeeze-and-excitation. Blocks that keep the
shape add their input after drop connect (a `Dropout` with
`noise_shape=(None, 1, 1, 1)`), as in EfficientNet.

With `include_preprocessing=True` (the default) the model takes pixels in
0..255: the B variants rescale them by 1/255 and normalize them with
ImageNet's mean and variance (given to `Normalization`, not weights), the S, M
and L variants map them to [-1, 1] (`x / 128 - 1`); `preprocess_input`
returns its input as it is, as Keras's does. Layer names, shapes and weights
match Keras's `keras.applications.EfficientNetV2B0` etc.
"""

import math

from minikeras import initializers, layers
from minikeras.applications import builder, imagenet_utils
from minikeras.applications.efficientnet import (
    classifier_or_pooling,
    conv_initializer,
    squeeze_excite,
)

__all__ = [
    "EfficientNetV2B0",
    "EfficientNetV2B1",
    "EfficientNetV2B2",
    "EfficientNetV2B3",
    "EfficientNetV2L",
    "EfficientNetV2M",
    "EfficientNetV2S",
    "decode_predictions",
    "preprocess_input",
]

# (fused, kernel_size, repeats, filters_in, filters_out, expand_ratio, se_ratio, strides)
_B = (
    (True, 3, 1, 32, 16, 1, 0, 1),
    (True, 3, 2, 16, 32, 4, 0, 2),
    (True, 3, 2, 32, 48, 4, 0, 2),
    (False, 3, 3, 48, 96, 4, 0.25, 2),
    (False, 3, 5, 96, 112, 6, 0.25, 1),
    (False, 3, 8, 112, 192, 6, 0.25, 2),
)
_S = (
    (True, 3, 2, 24, 24, 1, 0, 1),
    (True, 3, 4, 24, 48, 4, 0, 2),
    (True, 3, 4, 48, 64, 4, 0, 2),
    (False, 3, 6, 64, 128, 4, 0.25, 2),
    (False, 3, 9, 128, 160, 6, 0.25, 1),
    (False, 3, 15, 160, 256, 6, 0.25, 2),
)
_M = (
    (True, 3, 3, 24, 24, 1, 0, 1),
    (True, 3, 5, 24, 48, 4, 0, 2),
    (True, 3, 5, 48, 80, 4, 0, 2),
    (False, 3, 7, 80, 160, 4, 0.25, 2),
    (False, 3, 14, 160, 176, 6, 0.25, 1),
    (False, 3, 18, 176, 304, 6, 0.25, 2),
    (False, 3, 5, 304, 512, 6, 0.25, 1),
)
_L = (
    (True, 3, 4, 32, 32, 1, 0, 1),
    (True, 3, 7, 32, 64, 4, 0, 2),
    (True, 3, 7, 64, 96, 4, 0, 2),
    (False, 3, 10, 96, 192, 4, 0.25, 2),
    (False, 3, 19, 192, 224, 6, 0.25, 1),
    (False, 3, 25, 224, 384, 6, 0.25, 2),
    (False, 3, 7, 384, 640, 6, 0.25, 1),
)
# variant: (stages, width_coefficient, depth_coefficient, default_size)
VARIANTS = {
    "b0": (_B, 1.0, 1.0, 224),
    "b1": (_B, 1.0, 1.1, 240),
    "b2": (_B, 1.1, 1.2, 260),
    "b3": (_B, 1.2, 1.4, 300),
    "s": (_S, 1.0, 1.0, 384),
    "m": (_M, 1.0, 1.0, 480),
    "l": (_L, 1.0, 1.0, 480),
}
BN_MOMENTUM = 0.9
DROPOUT_RATE = 0.2
IMAGENET_MEAN_RGB = (0.485, 0.456, 0.406)
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def round_filters(filters, width_coefficient, divisor=8):
    """`filters * width_coefficient` rounded to the nearest multiple of `divisor` (at least it).

    Unlike EfficientNet's, the rounding may lose more than a tenth.
    """
    return int(max(divisor, int(filters * width_coefficient + divisor / 2) // divisor * divisor))


def _bn_axis():
    return 3 if builder.channel_axis() == -1 else 1


def _conv_bn(x, filters, kernel_size, strides, name, activation=True):
    """A "same" convolution without bias, batch normalization, and swish unless told not to."""
    x = layers.Conv2D(
        filters,
        kernel_size,
        strides=strides,
        padding="same",
        use_bias=False,
        kernel_initializer=conv_initializer(),
        name=f"{name}_conv",
    )(x)
    x = layers.BatchNormalization(axis=_bn_axis(), momentum=BN_MOMENTUM, name=f"{name}_bn")(x)
    if activation:
        x = layers.Activation("swish", name=f"{name}_activation")(x)
    return x


def _block(inputs, fused, kernel_size, filters_in, filters_out, expand, se_ratio, strides, **kw):
    """A (fused) MBConv block; `kw` holds `drop_rate` and `name`."""
    name = kw["name"]
    filters = filters_in * expand
    x = inputs
    if expand != 1:
        # Fused: the expansion is the block's full (strided) convolution; else a 1x1.
        size, step = (kernel_size, strides) if fused else (1, 1)
        x = _conv_bn(x, filters, size, step, f"{name}expand")
    if not fused:
        x = layers.DepthwiseConv2D(
            kernel_size,
            strides=strides,
            padding="same",
            use_bias=False,
            depthwise_initializer=conv_initializer(),
            name=f"{name}dwconv2",
        )(x)
        x = layers.BatchNormalization(axis=_bn_axis(), momentum=BN_MOMENTUM, name=f"{name}bn")(x)
        x = layers.Activation("swish", name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        x = squeeze_excite(x, filters, max(1, int(filters_in * se_ratio)), "swish", name)
    if fused and expand == 1:  # the projection is the block's only convolution
        x = _conv_bn(x, filters_out, kernel_size, strides, f"{name}project")
    else:
        x = _conv_bn(x, filters_out, 1, 1, f"{name}project", activation=False)
    if strides == 1 and filters_in == filters_out:
        if kw["drop_rate"]:
            x = layers.Dropout(kw["drop_rate"], noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _preprocessing(x, variant, input_shape):
    """The B variants' ImageNet normalization of 3-channel pixels, else a map to [-1, 1]."""
    channels = input_shape[-1] if builder.channel_axis() == -1 else input_shape[0]
    if variant.startswith("b") and channels == 3:
        x = layers.Rescaling(scale=1.0 / 255)(x)
        variance = [std**2 for std in IMAGENET_STDDEV_RGB]
        return layers.Normalization(
            mean=list(IMAGENET_MEAN_RGB), variance=variance, axis=_bn_axis()
        )(x)
    return layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)


def _efficientnet_v2(variant, arguments):
    """Builds EfficientNetV2 `variant` (`"b0"`..`"b3"`, `"s"`, `"m"`, `"l"`)."""
    model_name = f"EfficientNetV2{variant.upper()}"
    stages, width, depth, default_size = VARIANTS[variant]
    include_top, weights = arguments["include_top"], arguments["weights"]
    activation = arguments["classifier_activation"]
    builder.check_arguments(
        model_name, weights, include_top, arguments["classes"], arguments["pooling"], activation
    )
    input_shape = builder.obtain_input_shape(
        arguments["input_shape"], default_size, 32, include_top, weights
    )
    top = ".h5" if include_top else "_notop.h5"
    path = builder.weights_path(model_name, weights, f"efficientnetv2-{variant}{top}")
    image = builder.image_input(arguments["input_tensor"], input_shape)
    x = image
    if arguments["include_preprocessing"]:
        x = _preprocessing(x, variant, input_shape)
    x = _conv_bn(x, round_filters(stages[0][3], width), 3, 2, "stem")
    blocks = float(sum(stage[2] for stage in stages))  # the unscaled repeats, as Keras counts
    index = 0
    for number, stage in enumerate(stages, 1):
        fused, kernel, repeats, filters_in, filters_out, expand, se_ratio, strides = stage
        filters_in, filters_out = (
            round_filters(filters_in, width),
            round_filters(filters_out, width),
        )
        for repeat in range(math.ceil(depth * repeats)):
            x = _block(
                x,
                fused,
                kernel,
                filters_in if repeat == 0 else filters_out,
                filters_out,
                expand,
                se_ratio,
                strides if repeat == 0 else 1,
                drop_rate=0.2 * index / blocks,
                name=f"block{number}{chr(ord('a') + repeat)}_",
            )
            index += 1
    x = _conv_bn(x, round_filters(1280, width), 1, 1, "top")
    x = classifier_or_pooling(x, arguments, DROPOUT_RATE, initializers.Constant(0.0))
    return builder.finish(arguments["input_tensor"], image, x, arguments["name"], path)


def _application(variant):
    """The function `EfficientNetV2{variant}`, its docstring written once for all seven."""
    stages, width, depth, size = VARIANTS[variant]
    model_name = f"EfficientNetV2{variant.upper()}"
    preprocessing = (
        "rescale them by 1/255 and normalize them with ImageNet's mean and variance"
        if variant.startswith("b")
        else "map them to [-1, 1] (`x / 128 - 1`)"
    )

    def application(
        include_top=True,
        weights="imagenet",
        input_tensor=None,
        input_shape=None,
        pooling=None,
        classes=1000,
        classifier_activation="softmax",
        include_preprocessing=True,
        name=f"efficientnetv2-{variant}",
    ):
        arguments = {"include_top": include_top, "weights": weights, "pooling": pooling}
        arguments.update(input_tensor=input_tensor, input_shape=input_shape, classes=classes)
        arguments.update(classifier_activation=classifier_activation, name=name)
        arguments.update(include_preprocessing=include_preprocessing)
        return _efficientnet_v2(variant, arguments)

    application.__name__ = application.__qualname__ = model_name
    # The larger variants take seconds to initialize: their examples are not run.
    skip = "" if variant in ("b0", "b1") else "  # doctest: +SKIP"
    application.__doc__ = f"""Instantiates {model_name} (Keras's `keras.applications.{model_name}`).

    {len(stages)} stages, the first three of fused MBConv blocks, scaled by width {width}
    and depth {depth}; trained on {size}x{size} images. With `include_preprocessing`
    the model takes pixels in 0..255 and its first layers {preprocessing}.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `efficientnetv2-{variant}[_notop].h5` from Keras's cache (`~/.keras/models`) if it
    is there, else raises. Any `name` works (Keras picks the blocks by `name` and
    fails on another). An unknown `pooling` is an error (Keras ignores it).

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
        include_preprocessing: whether the model starts with its input scaling.
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


EfficientNetV2B0 = _application("b0")
EfficientNetV2B1 = _application("b1")
EfficientNetV2B2 = _application("b2")
EfficientNetV2B3 = _application("b3")
EfficientNetV2S = _application("s")
EfficientNetV2M = _application("m")
EfficientNetV2L = _application("l")


def preprocess_input(x, data_format=None):
    """Returns `x` as it is: EfficientNetV2s scale their inputs themselves.

    Kept, as in Keras, so that every family has one.

    Args:
        x: a numpy array or tensor of images in 0..255.
        data_format: unused (`"channels_last"`, `"channels_first"` or None).

    Returns:
        `x`, unchanged.

    Example:
        >>> mk.applications.efficientnet_v2.preprocess_input(np.array([0.0, 255.0]))
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
        >>> mk.applications.efficientnet_v2.decode_predictions(np.zeros((1, 9)))
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
