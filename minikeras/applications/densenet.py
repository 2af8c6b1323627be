"""DenseNet121, DenseNet169 and DenseNet201 (Huang et al., 2017): densely connected blocks.

Inside a dense block every layer (batch normalization, ReLU, 1x1 convolution
to 128 channels, again, 3x3 convolution to 32) concatenates its 32 new
channels to everything before it; transition blocks between dense blocks halve
the channels with a 1x1 convolution and the sides with 2x2 average pooling.
Layer names, shapes and weights match Keras's `keras.applications.DenseNet121`
etc., so its weights files load. Inputs are preprocessed in `"torch"` mode.
"""

from minikeras import config, layers
from minikeras.applications import builder, imagenet_utils

__all__ = [
    "DenseNet121",
    "DenseNet169",
    "DenseNet201",
    "decode_predictions",
    "preprocess_input",
]

EPSILON = 1.001e-5
GROWTH_RATE = 32


def _normalize_activate(x, name):
    x = layers.BatchNormalization(axis=builder.channel_axis(), epsilon=EPSILON, name=f"{name}_bn")(
        x
    )
    return layers.Activation("relu", name=f"{name}_relu")(x)


def _conv_block(x, name):
    """One layer of a dense block: its `GROWTH_RATE` new channels concatenated to `x`."""
    new = _normalize_activate(x, f"{name}_0")
    new = layers.Conv2D(4 * GROWTH_RATE, 1, use_bias=False, name=f"{name}_1_conv")(new)
    new = _normalize_activate(new, f"{name}_1")
    new = layers.Conv2D(GROWTH_RATE, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(new)
    return layers.Concatenate(axis=builder.channel_axis(), name=f"{name}_concat")([x, new])


def _transition_block(x, name):
    """Halves the channels (1x1 convolution) and the sides (2x2 average pooling)."""
    x = _normalize_activate(x, name)
    channels = x.shape[builder.channel_axis()]
    x = layers.Conv2D(int(channels * 0.5), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def build_densenet(model_name, blocks, arguments):
    """Builds a DenseNet with `blocks` layers in each of its four dense blocks.

    Args:
        model_name: `"DenseNet121"`, ..., for messages and the weights file name.
        blocks: four ints.
        arguments: a dict of the application's arguments (`include_top`,
            `weights`, `input_tensor`, `input_shape`, `pooling`, `classes`,
            `classifier_activation`, `name`).

    Returns:
        A `Model`.

    Raises:
        ValueError: for a bad argument, or under the `"channels_first"` image
            data format (Keras's DenseNet supports only `"channels_last"`).
    """
    include_top, weights = arguments["include_top"], arguments["weights"]
    pooling, classes = arguments["pooling"], arguments["classes"]
    activation = arguments["classifier_activation"]
    if config.image_data_format() == "channels_first":
        raise ValueError(
            f"{model_name} supports only the 'channels_last' image data format (as in Keras); "
            "call mk.config.set_image_data_format('channels_last') first"
        )
    builder.check_arguments(model_name, weights, include_top, classes, pooling, activation)
    input_shape = builder.obtain_input_shape(
        arguments["input_shape"], 224, 32, include_top, weights
    )
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        model_name, weights, f"{model_name.lower()}_weights_tf_dim_ordering_tf_kernels{top}.h5"
    )
    image = builder.image_input(arguments["input_tensor"], input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(image)  # unnamed in Keras too
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _normalize_activate(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks, 2):
        for block in range(1, count + 1):
            x = _conv_block(x, f"conv{stage}_block{block}")
        if stage < 5:
            x = _transition_block(x, f"pool{stage}")
    x = layers.BatchNormalization(axis=builder.channel_axis(), epsilon=EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    names = {"avg": "avg_pool", "max": "max_pool"}
    x = builder.classifier_or_pooling(x, include_top, pooling, classes, activation, names)
    return builder.finish(arguments["input_tensor"], image, x, arguments["name"], path)


def DenseNet121(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="densenet121",
):
    """Instantiates the DenseNet121 architecture (Keras's `keras.applications.DenseNet121`).

    A 7x7 stride-2 stem and 3x3 max pooling, then dense blocks of 6, 12, 24
    and 16 layers with transition blocks between them, batch normalization
    and ReLU (`bn`, `relu`); with the top, global average pooling
    (`avg_pool`) and the classifier (`predictions`). Call
    `mk.applications.densenet.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `densenet121_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's
    cache (`~/.keras/models`) if it is there, else raises; pass a local
    weights file instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"` (from Keras's
            cache only), or the path of a weights file to load (a Keras
            `.weights.h5` or `.keras` file, or a minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3, sides at least 32; with the
            top and ImageNet weights it must be `(224, 224, 3)`.
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
            or `classifier_activation`, and under the `"channels_first"`
            image data format (which Keras's DenseNet refuses too).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.DenseNet121(weights=None, input_shape=(32, 32, 3), classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 7047754)
    """
    return build_densenet("DenseNet121", (6, 12, 24, 16), locals())


def DenseNet169(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="densenet169",
):
    """Instantiates the DenseNet169 architecture (Keras's `keras.applications.DenseNet169`).

    `DenseNet121` with 32 layers in the third and fourth dense blocks. Same
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
        ValueError: for a bad argument (see `DenseNet121`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.DenseNet169(
        ...     weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg"
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 1664), 12642880)
    """
    return build_densenet("DenseNet169", (6, 12, 32, 32), locals())


def DenseNet201(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="densenet201",
):
    """Instantiates the DenseNet201 architecture (Keras's `keras.applications.DenseNet201`).

    `DenseNet121` with 48 layers in the third dense block and 32 in the
    fourth. Same arguments, same differences from Keras (nothing is downloaded).

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
        ValueError: for a bad argument (see `DenseNet121`).
        FileNotFoundError: for `weights="imagenet"` when the file is not in
            Keras's cache.

    Example:
        >>> model = mk.applications.DenseNet201(
        ...     weights=None, include_top=False, input_shape=(32, 32, 3)
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 1, 1, 1920), 18321984)
    """
    return build_densenet("DenseNet201", (6, 12, 48, 32), locals())


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for DenseNet: to 0..1, then standardized per channel.

    The `"torch"` mode of `mk.applications.imagenet_utils.preprocess_input`:
    `(x / 255 - mean) / std` with ImageNet's mean `(0.485, 0.456, 0.406)`
    and standard deviation `(0.229, 0.224, 0.225)` (RGB order).

    Args:
        x: a numpy array or tensor of rank 3 or 4, 3 channels.
        data_format: `"channels_last"`, `"channels_first"`, or None for the
            global image data format.

    Returns:
        The preprocessed images (a numpy array for a numpy array).

    Raises:
        ValueError: for an unknown `data_format`.

    Example:
        >>> image = np.full((1, 1, 3), 255.0, dtype="float32")
        >>> mk.applications.densenet.preprocess_input(image)[0, 0].round(4)
        array([2.2489, 2.4286, 2.64  ], dtype=float32)
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


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
        >>> mk.applications.densenet.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
