"""InceptionV3 (Szegedy et al., 2015): parallel branches of factorized convolutions, concatenated.

A stem of plain convolutions and two max poolings, then eleven Inception
modules (`mixed0`..`mixed10`): each runs 1x1, factorized 3x3/5x5/7x7
(1xn then nx1) and pooled branches side by side and concatenates them; two
of them (`mixed3`, `mixed8`) halve the sides. Every convolution is followed by
batch normalization without a scale and ReLU. As in Keras, these layers are
named automatically (`conv2d_12`, ...); Keras's weights files match them by
position, which is the same here. Layer shapes and weights match Keras's
`keras.applications.InceptionV3`. Inputs are preprocessed in `"tf"` mode.
"""

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["InceptionV3", "decode_predictions", "preprocess_input"]


def _conv_bn(x, filters, rows, cols, strides=1, padding="same"):
    """Convolution without bias, batch normalization without scale, ReLU; unnamed, as in Keras."""
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding, use_bias=False)(x)
    x = layers.BatchNormalization(axis=builder.channel_axis(), scale=False)(x)
    return layers.Activation("relu")(x)


def _average_pool_branch(x, filters):
    x = layers.AveragePooling2D(3, strides=1, padding="same")(x)
    return _conv_bn(x, filters, 1, 1)


def _concatenate(branches, name=None):
    return layers.Concatenate(axis=builder.channel_axis(), name=name)(branches)


def _module_35(x, pool_filters, name):
    """1x1; 1x1 then 5x5; 1x1 then two 3x3; average pool then 1x1 (`mixed0`..`mixed2`)."""
    branch1x1 = _conv_bn(x, 64, 1, 1)
    branch5x5 = _conv_bn(_conv_bn(x, 48, 1, 1), 64, 5, 5)
    branch3x3 = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    pool = _average_pool_branch(x, pool_filters)
    return _concatenate([branch1x1, branch5x5, branch3x3, pool], name)


def _module_17(x, width, name):
    """1x1; 1x7 then 7x1; (7x1, 1x7) twice; average pool then 1x1 (`mixed4`..`mixed7`)."""
    branch1x1 = _conv_bn(x, 192, 1, 1)
    branch7x7 = _conv_bn(x, width, 1, 1)
    branch7x7 = _conv_bn(branch7x7, width, 1, 7)
    branch7x7 = _conv_bn(branch7x7, 192, 7, 1)
    double = _conv_bn(x, width, 1, 1)
    double = _conv_bn(double, width, 7, 1)
    double = _conv_bn(double, width, 1, 7)
    double = _conv_bn(double, width, 7, 1)
    double = _conv_bn(double, 192, 1, 7)
    pool = _average_pool_branch(x, 192)
    return _concatenate([branch1x1, branch7x7, double, pool], name)


def _module_8(x, index):
    """1x1; 1x1 then (1x3, 3x1) side by side; 1x1, 3x3 then (1x3, 3x1); pool (`mixed9`, `10`)."""
    branch1x1 = _conv_bn(x, 320, 1, 1)
    branch3x3 = _conv_bn(x, 384, 1, 1)
    branch3x3 = _concatenate(
        [_conv_bn(branch3x3, 384, 1, 3), _conv_bn(branch3x3, 384, 3, 1)], f"mixed9_{index}"
    )
    double = _conv_bn(_conv_bn(x, 448, 1, 1), 384, 3, 3)
    double = _concatenate([_conv_bn(double, 384, 1, 3), _conv_bn(double, 384, 3, 1)])
    pool = _average_pool_branch(x, 192)
    return _concatenate([branch1x1, branch3x3, double, pool], f"mixed{9 + index}")


def InceptionV3(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="inception_v3",
):
    """Instantiates the InceptionV3 architecture (Keras's `keras.applications.InceptionV3`).

    The stem, eleven Inception modules ending in 2048 channels at about a
    32nd of the input's side; with the top, global average pooling
    (`avg_pool`) and the classifier (`predictions`). Call
    `mk.applications.inception_v3.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `inception_v3_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's
    cache (`~/.keras/models`) if it is there, else raises; pass a local
    weights file instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 75; with the top and ImageNet
            weights it must be `(299, 299, 3)`.
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
        >>> model = mk.applications.InceptionV3(weights=None, input_shape=(75, 75, 3), classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 21823274)
    """
    builder.check_arguments(
        "InceptionV3", weights, include_top, classes, pooling, classifier_activation
    )
    input_shape = builder.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        "InceptionV3", weights, f"inception_v3_weights_tf_dim_ordering_tf_kernels{top}.h5"
    )
    image = builder.image_input(input_tensor, input_shape)
    x = _conv_bn(image, 32, 3, 3, strides=2, padding="valid")
    x = _conv_bn(x, 32, 3, 3, padding="valid")
    x = _conv_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = _conv_bn(x, 80, 1, 1, padding="valid")
    x = _conv_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    for index, pool_filters in enumerate((32, 64, 64)):
        x = _module_35(x, pool_filters, f"mixed{index}")
    branch3x3 = _conv_bn(x, 384, 3, 3, strides=2, padding="valid")
    double = _conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3)
    double = _conv_bn(double, 96, 3, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2)(x)
    x = _concatenate([branch3x3, double, pool], "mixed3")
    for index, width in enumerate((128, 160, 160, 192), 4):
        x = _module_17(x, width, f"mixed{index}")
    branch3x3 = _conv_bn(_conv_bn(x, 192, 1, 1), 320, 3, 3, strides=2, padding="valid")
    branch7x7x3 = _conv_bn(x, 192, 1, 1)
    branch7x7x3 = _conv_bn(branch7x7x3, 192, 1, 7)
    branch7x7x3 = _conv_bn(branch7x7x3, 192, 7, 1)
    branch7x7x3 = _conv_bn(branch7x7x3, 192, 3, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2)(x)
    x = _concatenate([branch3x3, branch7x7x3, pool], "mixed8")
    for index in range(2):
        x = _module_8(x, index)
    names = {"avg": "avg_pool"} if include_top else {}
    x = builder.classifier_or_pooling(
        x, include_top, pooling, classes, classifier_activation, names
    )
    return builder.finish(input_tensor, image, x, name, path)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for InceptionV3: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.inception_v3.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
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
        >>> mk.applications.inception_v3.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
