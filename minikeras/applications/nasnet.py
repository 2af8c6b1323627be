"""NASNetMobile and NASNetLarge (Zoph et al., 2018): cells found by architecture search.

A strided 3x3 convolution (`stem_conv1`, `stem_bn1`), two reduction cells
(`stem_1`, `stem_2`), then three stacks of normal cells separated by
reduction cells (`reduce_<n>`), and ReLU. Every cell takes the two previous
cells' outputs, `x` and `p`: it adjusts `p` to `x`'s side (two offset 1x1
paths, concatenated) or channels (a 1x1 convolution), then adds pairs of
branches (separable convolution blocks, poolings, identities) and
concatenates the sums. A normal cell keeps the side, a reduction cell halves
it. NASNetMobile is NASNet-A (4 @ 1056), NASNetLarge NASNet-A (6 @ 4032).
Layer names, shapes and weights match Keras's `keras.applications.NASNetMobile`
and `NASNetLarge`. Inputs are preprocessed in `"tf"` mode.
"""

from minikeras import config, layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["NASNetLarge", "NASNetMobile", "decode_predictions", "preprocess_input"]

# Keras's batch normalization in NASNet.
MOMENTUM = 0.9997
EPSILON = 1e-3


def _normalize(x, name=None):
    return layers.BatchNormalization(momentum=MOMENTUM, epsilon=EPSILON, name=name)(x)


def _conv_1x1(x, filters, name):
    return layers.Conv2D(
        filters, 1, padding="same", use_bias=False, kernel_initializer="he_normal", name=name
    )(x)


def _separable_block(x, filters, kernel_size, block_id, strides=1):
    """ReLU, separable convolution (strided: after `correct_pad`), batch normalization, twice."""
    x = layers.Activation("relu")(x)
    padding = "same"
    if strides == 2:
        x = layers.ZeroPadding2D(
            builder.correct_pad(x, kernel_size), name=f"separable_conv_1_pad_{block_id}"
        )(x)
        padding = "valid"
    x = layers.SeparableConv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        use_bias=False,
        name=f"separable_conv_1_{block_id}",
    )(x)
    x = _normalize(x, f"separable_conv_1_bn_{block_id}")
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(
        filters, kernel_size, padding="same", use_bias=False, name=f"separable_conv_2_{block_id}"
    )(x)
    return _normalize(x, f"separable_conv_2_bn_{block_id}")


def _adjust(p, x, filters, block_id):
    """`p` brought to `x`'s side (halved by two offset strided 1x1 paths) or to `filters`."""
    if p is None:
        return x
    if p.shape[2] != x.shape[2]:  # the width, as Keras compares
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D(1, strides=2, name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv_1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        p2 = layers.ZeroPadding2D(((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(((1, 0), (1, 0)))(p2)  # the path offset by one pixel
        p2 = layers.AveragePooling2D(1, strides=2, name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv_1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        p = layers.concatenate([p1, p2])
        return _normalize(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv_1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _normalize(p, f"adjust_bn_{block_id}")
    return p


def _squeeze(x, filters, kind, block_id):
    """ReLU, 1x1 convolution to `filters`, batch normalization: the cell's `h`."""
    h = layers.Activation("relu")(x)
    h = _conv_1x1(h, filters, f"{kind}_conv_1_{block_id}")
    return _normalize(h, f"{kind}_bn_1_{block_id}")


def _average_3x3(x, name, strides=1):
    padding = "same" if strides == 1 else "valid"
    return layers.AveragePooling2D(3, strides=strides, padding=padding, name=name)(x)


def _normal_cell(x, p, filters, block_id):
    """Five sums of branch pairs of `h` (from `x`) and `p`, concatenated with `p`."""
    p = _adjust(p, x, filters, block_id)
    h = _squeeze(x, filters, "normal", block_id)
    # Each sum right after its branches, as Keras makes them (so the automatic names match).
    x1 = layers.add(
        [
            _separable_block(h, filters, 5, f"normal_left1_{block_id}"),
            _separable_block(p, filters, 3, f"normal_right1_{block_id}"),
        ],
        name=f"normal_add_1_{block_id}",
    )
    x2 = layers.add(
        [
            _separable_block(p, filters, 5, f"normal_left2_{block_id}"),
            _separable_block(p, filters, 3, f"normal_right2_{block_id}"),
        ],
        name=f"normal_add_2_{block_id}",
    )
    x3 = layers.add(
        [_average_3x3(h, f"normal_left3_{block_id}"), p], name=f"normal_add_3_{block_id}"
    )
    x4 = layers.add(
        [_average_3x3(p, f"normal_left4_{block_id}"), _average_3x3(p, f"normal_right4_{block_id}")],
        name=f"normal_add_4_{block_id}",
    )
    x5 = layers.add(
        [_separable_block(h, filters, 3, f"normal_left5_{block_id}"), h],
        name=f"normal_add_5_{block_id}",
    )
    return layers.concatenate([p, x1, x2, x3, x4, x5], name=f"normal_concat_{block_id}"), x


def _reduction_cell(x, p, filters, block_id):
    """Four sums of strided branches of `h` (from `x`) and `p`, concatenated: half the side."""
    p = _adjust(p, x, filters, block_id)
    h = _squeeze(x, filters, "reduction", block_id)
    h3 = layers.ZeroPadding2D(builder.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1 = layers.add(
        [
            _separable_block(h, filters, 5, f"reduction_left1_{block_id}", strides=2),
            _separable_block(p, filters, 7, f"reduction_right1_{block_id}", strides=2),
        ],
        name=f"reduction_add_1_{block_id}",
    )
    x2 = layers.add(
        [
            layers.MaxPooling2D(3, strides=2, name=f"reduction_left2_{block_id}")(h3),
            _separable_block(p, filters, 7, f"reduction_right2_{block_id}", strides=2),
        ],
        name=f"reduction_add_2_{block_id}",
    )
    x3 = layers.add(
        [
            _average_3x3(h3, f"reduction_left3_{block_id}", strides=2),
            _separable_block(p, filters, 5, f"reduction_right3_{block_id}", strides=2),
        ],
        name=f"reduction_add3_{block_id}",  # sic, as Keras names it
    )
    x4 = layers.add([x2, _average_3x3(x1, f"reduction_left4_{block_id}")])
    x5 = layers.add(
        [
            _separable_block(x1, filters, 3, f"reduction_left4_{block_id}"),  # sic
            layers.MaxPooling2D(3, strides=2, name=f"reduction_right5_{block_id}")(h3),
        ],
        name=f"reduction_add4_{block_id}",
    )
    return layers.concatenate([x2, x3, x4, x5], name=f"reduction_concat_{block_id}"), x


def _nasnet(model_name, arguments, size, stem_filters, num_blocks, penultimate_filters, skip):
    """Builds NASNet-A (`num_blocks` @ `penultimate_filters`) with Keras's checks, in its order.

    Args:
        model_name: `"NASNetMobile"` or `"NASNetLarge"`, for messages.
        arguments: a dict of the application's arguments.
        size: the side of the ImageNet images (224 or 331); names the weights file.
        stem_filters: the channels of `stem_conv1`.
        num_blocks: normal cells in each of the three stacks.
        penultimate_filters: the channels of the last stack's cells (times 24 over 24).
        skip: whether the cell after a reduction cell gets the reduction cell's
            own `p` (True) or its input `x` (`skip_reduction` in Keras).

    Returns:
        A `Model`.
    """
    include_top, weights = arguments["include_top"], arguments["weights"]
    pooling, classes = arguments["pooling"], arguments["classes"]
    activation, input_shape = arguments["classifier_activation"], arguments["input_shape"]
    if config.image_data_format() == "channels_first":
        raise ValueError(
            f"{model_name} supports only the 'channels_last' image data format (as in Keras); "
            "call mk.config.set_image_data_format('channels_last') first"
        )
    builder.check_arguments(model_name, weights, include_top, classes, pooling, activation)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError(
            f"{model_name}: with weights='imagenet' the input_shape must be static (no None); "
            f"got input_shape={input_shape}"
        )
    input_shape = builder.obtain_input_shape(input_shape, size, 32, include_top, weights)
    kind = "mobile" if size == 224 else "large"
    path = builder.weights_path(
        model_name, weights, f"nasnet_{kind}{'' if include_top else '_no_top'}.h5"
    )
    image = builder.image_input(arguments["input_tensor"], input_shape)
    if None in tuple(image.shape[1:3]):
        raise ValueError(
            f"{model_name} needs a static image size: its cells compare the sides of their "
            "two inputs to decide whether to halve one, and with free sides would build a "
            "model that fails on every image (Keras builds it); pass e.g. "
            f"input_shape=({size}, {size}, 3), got image shape {tuple(image.shape)}"
        )
    filters, multiplier = penultimate_filters // 24, 2
    x = layers.Conv2D(
        stem_filters,
        3,
        strides=2,
        use_bias=False,
        kernel_initializer="he_normal",
        name="stem_conv1",
    )(image)
    x = _normalize(x, "stem_bn1")
    x, p = _reduction_cell(x, None, filters // multiplier**2, "stem_1")
    x, p = _reduction_cell(x, p, filters // multiplier, "stem_2")
    for stack in range(3):
        width = filters * multiplier**stack
        if stack:
            x, p0 = _reduction_cell(x, p, width, f"reduce_{stack * num_blocks}")
            p = p if skip else p0
        for index in range(num_blocks):
            block = index if stack == 0 else stack * num_blocks + index + 1
            x, p = _normal_cell(x, p, width, str(block))
    x = layers.Activation("relu")(x)
    x = builder.classifier_or_pooling(x, include_top, pooling, classes, activation, {})
    return builder.finish(arguments["input_tensor"], image, x, arguments["name"], path)


def NASNetMobile(  # noqa: N802 (Keras's name)
    input_shape=None,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="nasnet_mobile",
):
    """Instantiates NASNet-A (4 @ 1056), Keras's `keras.applications.NASNetMobile`.

    A 32-channel stem, two stem reduction cells, then three stacks of four
    normal cells (44, 88 and 176 channels a branch) with reduction cells
    between them, ending in 1056 channels at about a 32nd of the input's
    side; with the top, global average pooling and the classifier
    (`predictions`). Note that `input_shape` comes first, as in Keras. Call
    `mk.applications.nasnet.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `nasnet_mobile.h5` (`nasnet_mobile_no_top.h5` without the top) from
    Keras's cache (`~/.keras/models`) if it is there, else raises; pass a
    local weights file instead. An unknown `pooling` is an error (Keras
    ignores it). So is a free image side (None in `input_shape` or in the
    input tensor's shape): Keras then builds a different model, which fails
    on every image.

    Args:
        input_shape: optional shape tuple of 3, sides at least 32; None means
            `(224, 224, 3)` (with the top and ImageNet weights it must be that).
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
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad `weights`, `classes`, `pooling`, `input_shape`
            (or free image sides) or `classifier_activation`, and under the
            `"channels_first"` image data format (which Keras's NASNet
            refuses too).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.NASNetMobile((32, 32, 3), weights=None, classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 4280286)
    """
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return _nasnet("NASNetMobile", locals(), 224, 32, 4, 1056, skip=False)


def NASNetLarge(  # noqa: N802 (Keras's name)
    input_shape=None,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="nasnet_large",
):
    """Instantiates NASNet-A (6 @ 4032), Keras's `keras.applications.NASNetLarge`.

    `NASNetMobile` with a 96-channel stem, stacks of six normal cells (168,
    336 and 672 channels a branch), and the cell after a reduction cell given
    the `p` that the reduction cell was given (Keras's `skip_reduction`, where
    NASNetMobile gives it the reduction cell's input); it ends in 4032
    channels. Same
    arguments, same differences from Keras (nothing is downloaded; the
    ImageNet files are `nasnet_large.h5` and `nasnet_large_no_top.h5`).

    Args:
        input_shape: optional shape tuple of 3, sides at least 32; with the
            top, None means `(331, 331, 3)` (with ImageNet weights it must be
            that). Without the top Keras makes None mean free sides, which
            minikeras refuses (see `NASNetMobile`): pass the shape.
        include_top: whether to include the classifier at the top.
        weights: None, `"imagenet"` (from Keras's cache only) or a weights file path.
        input_tensor: optional symbolic tensor to build on.
        pooling: without the top: None, `"avg"` or `"max"`.
        classes: number of classes of the top.
        classifier_activation: the top's activation.
        name: the model's name.

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad argument (see `NASNetMobile`), and without the
            top when `input_shape` is None.
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        NASNetLarge takes seconds to initialize, so this example is not run:

        >>> model = mk.applications.NASNetLarge(  # doctest: +SKIP
        ...     (32, 32, 3), weights=None, include_top=False, pooling="avg"
        ... )
        >>> model.output_shape, model.count_params()  # doctest: +SKIP
        ((None, 4032), 84916818)
    """
    return _nasnet("NASNetLarge", locals(), 331, 96, 6, 4032, skip=True)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for NASNet: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.nasnet.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
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
        >>> mk.applications.nasnet.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
