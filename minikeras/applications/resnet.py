"""ResNet50, ResNet101 and ResNet152 (He et al., 2015): bottleneck residual blocks in four stages.

Each block is 1x1, 3x3 and 1x1 convolutions with batch normalization, added
to its input (through a 1x1 convolution in the first block of a stage). Layer
names, shapes and weights match Keras's `keras.applications.ResNet50` etc., so
its weights files load. Inputs are preprocessed in `"caffe"` mode.
"""

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["ResNet50", "ResNet101", "ResNet152", "decode_predictions", "preprocess_input"]

EPSILON = 1.001e-5


def build_resnet(model_name, stack, preact, arguments):
    """Builds a ResNet around `stack` (the residual stages), shared with ResNetV2.

    Args:
        model_name: `"ResNet50"`, ..., for messages and the weights file name.
        stack: a function from the stem's output to the last stage's output.
        preact: True for ResNetV2 (batch normalization before convolutions,
            one after the last stage), False for ResNet.
        arguments: a dict of the application's arguments (`include_top`,
            `weights`, `input_tensor`, `input_shape`, `pooling`, `classes`,
            `classifier_activation`, `name`).

    Returns:
        A `Model`.
    """
    include_top, weights = arguments["include_top"], arguments["weights"]
    pooling, classes = arguments["pooling"], arguments["classes"]
    activation = arguments["classifier_activation"]
    builder.check_arguments(model_name, weights, include_top, classes, pooling, activation)
    input_shape = builder.obtain_input_shape(
        arguments["input_shape"], 224, 32, include_top, weights
    )
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        model_name, weights, f"{model_name.lower()}_weights_tf_dim_ordering_tf_kernels{top}.h5"
    )
    image = builder.image_input(arguments["input_tensor"], input_shape)
    axis = builder.channel_axis()
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(image)
    x = layers.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack(x)
    if preact:
        x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    names = {"avg": "avg_pool", "max": "max_pool"}
    x = builder.classifier_or_pooling(x, include_top, pooling, classes, activation, names)
    return builder.finish(arguments["input_tensor"], image, x, arguments["name"], path)


def _block(x, filters, stride, conv_shortcut, name):
    """A bottleneck block: 1x1 (strided), 3x3, 1x1 to `4 * filters`, added to the shortcut."""
    axis = builder.channel_axis()
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_0_bn")(
            shortcut
        )
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, 3, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def _stages(blocks_per_stage):
    """The four stages `conv2`..`conv5` with `blocks_per_stage` blocks each."""

    def stack(x):
        for stage, (filters, blocks) in enumerate(zip((64, 128, 256, 512), blocks_per_stage), 2):
            stride = 1 if stage == 2 else 2
            x = _block(x, filters, stride, True, f"conv{stage}_block1")
            for block in range(2, blocks + 1):
                x = _block(x, filters, 1, False, f"conv{stage}_block{block}")
        return x

    return stack


def ResNet50(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet50",
):
    """Instantiates the ResNet50 architecture (Keras's `keras.applications.ResNet50`).

    A 7x7 stride-2 stem and 3x3 max pooling, then stages of 3, 4, 6 and 3
    bottleneck blocks (64, 128, 256, 512 filters, 4x that out); with the top,
    global average pooling (`avg_pool`) and the classifier (`predictions`).
    Call `mk.applications.resnet.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `resnet50_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's
    cache (`~/.keras/models`) if it is there, else raises; pass a local
    weights file instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
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
        >>> model = mk.applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 23608202)
    """
    return build_resnet("ResNet50", _stages((3, 4, 6, 3)), False, locals())


def ResNet101(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet101",
):
    """Instantiates the ResNet101 architecture (Keras's `keras.applications.ResNet101`).

    `ResNet50` with 23 blocks in the third stage instead of 6. Same
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
        ValueError: for a bad argument (see `ResNet50`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.ResNet101(
        ...     weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg"
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 2048), 42658176)
    """
    return build_resnet("ResNet101", _stages((3, 4, 23, 3)), False, locals())


def ResNet152(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="resnet152",
):
    """Instantiates the ResNet152 architecture (Keras's `keras.applications.ResNet152`).

    `ResNet50` with 8 blocks in the second stage and 36 in the third. Same
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
        ValueError: for a bad argument (see `ResNet50`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.ResNet152(
        ...     weights=None, include_top=False, input_shape=(32, 32, 3)
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 1, 1, 2048), 58370944)
    """
    return build_resnet("ResNet152", _stages((3, 8, 36, 3)), False, locals())


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for ResNet: RGB to BGR, minus the ImageNet mean pixel.

    The `"caffe"` mode of `mk.applications.imagenet_utils.preprocess_input`.

    Args:
        x: a numpy array or tensor of rank 3 or 4, 3 channels.
        data_format: `"channels_last"`, `"channels_first"`, or None for the
            global image data format.

    Returns:
        The preprocessed images (a numpy array for a numpy array).

    Raises:
        ValueError: for an unknown `data_format`.

    Example:
        >>> image = np.zeros((1, 3, 1, 1), dtype="float32")
        >>> mk.applications.resnet.preprocess_input(image, "channels_first")[0, :, 0, 0]
        array([-103.939, -116.779, -123.68 ], dtype=float32)
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


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
        >>> mk.applications.resnet.decode_predictions(np.zeros(1000))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
