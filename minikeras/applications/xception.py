"""Xception (Chollet, 2017): Inception taken to depthwise separable convolutions, with residuals.

Two plain convolutions, then 12 blocks of ReLU and separable 3x3
convolutions with batch normalization: three entry blocks (128, 256, 728
channels) and `block13` halve the sides with max pooling and add a strided
1x1 convolution of their input; eight middle blocks (`block5`..`block12`) of
three separable convolutions add their input as it is; `block14` ends at 2048
channels. Layer names, shapes and weights match Keras's
`keras.applications.Xception`. Inputs are preprocessed in `"tf"` mode.
"""

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["Xception", "decode_predictions", "preprocess_input"]


def _normalize(x, name=None):
    return layers.BatchNormalization(axis=builder.channel_axis(), name=name)(x)


def _separable(x, filters, name):
    """Separable 3x3 convolution without bias, then batch normalization (`{name}_bn`)."""
    x = layers.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name)(x)
    return _normalize(x, f"{name}_bn")


def _downsampling_block(x, filters, block, activate_first=True):
    """Two separable convolutions and a 3x3 max pooling, plus a strided 1x1 of the input."""
    residual = layers.Conv2D(filters[1], 1, strides=2, padding="same", use_bias=False)(x)
    residual = _normalize(residual)  # the shortcut is unnamed in Keras
    if activate_first:
        x = layers.Activation("relu", name=f"{block}_sepconv1_act")(x)
    x = _separable(x, filters[0], f"{block}_sepconv1")
    x = layers.Activation("relu", name=f"{block}_sepconv2_act")(x)
    x = _separable(x, filters[1], f"{block}_sepconv2")
    x = layers.MaxPooling2D(3, strides=2, padding="same", name=f"{block}_pool")(x)
    return layers.Add()([x, residual])


def _middle_block(x, block):
    residual = x
    for index in (1, 2, 3):
        x = layers.Activation("relu", name=f"{block}_sepconv{index}_act")(x)
        x = _separable(x, 728, f"{block}_sepconv{index}")
    return layers.Add()([x, residual])


def Xception(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="xception",
):
    """Instantiates the Xception architecture (Keras's `keras.applications.Xception`).

    `block1` (two 3x3 convolutions, the first with stride 2), the entry,
    middle and exit blocks, then `block14` (separable convolutions to 1536
    and 2048 channels); with the top, global average pooling (`avg_pool`) and
    the classifier (`predictions`). Call
    `mk.applications.xception.preprocess_input` on images in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `xception_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's
    cache (`~/.keras/models`) if it is there, else raises; pass a local
    weights file instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the classifier at the top.
        weights: None (random initialization), `"imagenet"`, or the path of a
            weights file to load (a Keras `.weights.h5` or `.keras` file, or a
            minikeras weights file).
        input_tensor: optional symbolic tensor (from `mk.Input`) to build on.
        input_shape: optional shape tuple of 3 (channels placed by the image
            data format), sides at least 71; with the top and ImageNet
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
        >>> model = mk.applications.Xception(weights=None, input_shape=(71, 71, 3), classes=10)
        >>> model.output_shape, model.count_params()
        ((None, 10), 20881970)
    """
    builder.check_arguments(
        "Xception", weights, include_top, classes, pooling, classifier_activation
    )
    input_shape = builder.obtain_input_shape(input_shape, 299, 71, include_top, weights)
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        "Xception", weights, f"xception_weights_tf_dim_ordering_tf_kernels{top}.h5"
    )
    image = builder.image_input(input_tensor, input_shape)
    x = layers.Conv2D(32, 3, strides=2, use_bias=False, name="block1_conv1")(image)
    x = layers.Activation("relu", name="block1_conv1_act")(_normalize(x, "block1_conv1_bn"))
    x = layers.Conv2D(64, 3, use_bias=False, name="block1_conv2")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(_normalize(x, "block1_conv2_bn"))
    x = _downsampling_block(x, (128, 128), "block2", activate_first=False)
    x = _downsampling_block(x, (256, 256), "block3")
    x = _downsampling_block(x, (728, 728), "block4")
    for block in range(5, 13):
        x = _middle_block(x, f"block{block}")
    x = _downsampling_block(x, (728, 1024), "block13")
    x = _separable(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _separable(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    names = {"avg": "avg_pool"} if include_top else {}
    x = builder.classifier_or_pooling(
        x, include_top, pooling, classes, classifier_activation, names
    )
    return builder.finish(input_tensor, image, x, name, path)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for Xception: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.xception.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
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
        >>> mk.applications.xception.decode_predictions(np.zeros((1, 9)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
