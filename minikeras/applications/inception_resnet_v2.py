"""InceptionResNetV2 (Szegedy et al., 2017): Inception modules as residual branches, scaled down.

The stem of InceptionV3 (five convolutions, two max poolings), an Inception
module (`mixed_5b`, 320 channels), then three stacks of Inception-ResNet
blocks separated by reduction modules (`mixed_6a`, `mixed_7a`): ten `block35`
(320 channels), twenty `block17` (1088) and ten `block8` (2080). A block
concatenates its branches (`{block}_mixed`), projects them back to its input's
channels with a biased 1x1 convolution (`{block}_conv`) and adds that, times a
small `scale`, to its input (`CustomScaleLayer`), then applies ReLU
(`{block}_ac`; not after the last `block8`). A 1x1 convolution to 1536
channels (`conv_7b`) ends the features. The other convolutions are followed by
batch normalization without a scale and ReLU and named automatically, as in
Keras. Layer names, shapes and weights match Keras's
`keras.applications.InceptionResNetV2`. Inputs are preprocessed in `"tf"`
mode.
"""

from minikeras import layers, ops
from minikeras.applications import builder, imagenet_utils

__all__ = ["CustomScaleLayer", "InceptionResNetV2", "decode_predictions", "preprocess_input"]


class CustomScaleLayer(layers.Layer):
    """Adds a residual branch, times `scale`, to its shortcut: `inputs[0] + inputs[1] * scale`.

    Keras's `keras.src.applications.inception_resnet_v2.CustomScaleLayer`
    (not exported by Keras; its `.keras` files name it under that module).

    Args:
        scale: a float, the factor of the residual branch.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of two tensors of the same shape.

    Output shape:
        Their shape.

    Raises:
        ValueError: if not called on a list of two tensors of the same shape.

    Example:
        >>> from minikeras.applications.inception_resnet_v2 import CustomScaleLayer
        >>> CustomScaleLayer(0.5)([np.array([[1.0, 2.0]]), np.array([[4.0, 4.0]])]).numpy()
        array([[3., 4.]], dtype=float32)
    """

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        self._check([tuple(x.shape) for x in inputs] if _is_pair(inputs) else inputs)
        shortcut, branch = inputs
        return ops.add(shortcut, ops.multiply(branch, self.scale))

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        return tuple(a if a is not None else b for a, b in zip(*input_shape))

    def _check(self, shapes):
        if not _is_pair(shapes):
            raise ValueError(
                f"CustomScaleLayer '{self.name}' expects a list of two tensors (the shortcut "
                f"and the residual branch), got {type(shapes).__name__} {_describe(shapes)}"
            )
        first, second = (tuple(shape) for shape in shapes)
        if len(first) != len(second) or any(
            a is not None and b is not None and a != b for a, b in zip(first, second)
        ):
            raise ValueError(
                f"CustomScaleLayer '{self.name}' expects two tensors of the same shape, got "
                f"shapes {first} and {second}"
            )

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


def _is_pair(values):
    """Whether `values` is a list of two tensors (or of two shapes)."""
    return (
        isinstance(values, (list, tuple))
        and len(values) == 2
        and all(isinstance(v, (list, tuple)) or hasattr(v, "shape") for v in values)
    )


def _describe(values):
    if isinstance(values, (list, tuple)):
        return f"of length {len(values)}"
    return f"of shape {tuple(getattr(values, 'shape', ()))}"


def _conv_bn(x, filters, kernel_size, strides=1, padding="same", name=None):
    """Convolution without bias, batch normalization without scale (`{name}_bn`), ReLU
    (`{name}_ac`); unnamed unless `name` is given, as in Keras."""
    x = layers.Conv2D(
        filters, kernel_size, strides=strides, padding=padding, use_bias=False, name=name
    )(x)
    x = layers.BatchNormalization(
        axis=builder.channel_axis(), scale=False, name=name and f"{name}_bn"
    )(x)
    return layers.Activation("relu", name=name and f"{name}_ac")(x)


def _concatenate(branches, name):
    return layers.Concatenate(axis=builder.channel_axis(), name=name)(branches)


def _block(x, scale, block_type, index, activation="relu"):
    """One Inception-ResNet block: `x + scale * conv1x1(concat(branches))`, then `activation`.

    Layers are made in Keras's order, so the automatic names (`conv2d_7`) are Keras's too.
    """
    if block_type == "block35":
        branches = [
            _conv_bn(x, 32, 1),
            _conv_bn(_conv_bn(x, 32, 1), 32, 3),
            _conv_bn(_conv_bn(_conv_bn(x, 32, 1), 48, 3), 64, 3),
        ]
    elif block_type == "block17":
        branch_0 = _conv_bn(x, 192, 1)
        branch_1 = _conv_bn(_conv_bn(_conv_bn(x, 128, 1), 160, (1, 7)), 192, (7, 1))
        branches = [branch_0, branch_1]
    else:  # block8
        branch_0 = _conv_bn(x, 192, 1)
        branch_1 = _conv_bn(_conv_bn(_conv_bn(x, 192, 1), 224, (1, 3)), 256, (3, 1))
        branches = [branch_0, branch_1]
    name = f"{block_type}_{index}"
    mixed = _concatenate(branches, f"{name}_mixed")
    channels = x.shape[builder.channel_axis()]
    up = layers.Conv2D(channels, 1, name=f"{name}_conv")(mixed)
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{name}_ac")(x)
    return x


def _reduction_a(x):
    """`mixed_6a`: a strided 3x3; 1x1, 3x3, strided 3x3; strided max pooling."""
    branch_0 = _conv_bn(x, 384, 3, strides=2, padding="valid")
    branch_1 = _conv_bn(_conv_bn(x, 256, 1), 256, 3)
    branch_1 = _conv_bn(branch_1, 384, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    return _concatenate([branch_0, branch_1, pool], "mixed_6a")


def _reduction_b(x):
    """`mixed_7a`: three branches ending in a strided 3x3, and strided max pooling."""
    branch_0 = _conv_bn(_conv_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    branch_1 = _conv_bn(_conv_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    branch_2 = _conv_bn(_conv_bn(x, 256, 1), 288, 3)
    branch_2 = _conv_bn(branch_2, 320, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    return _concatenate([branch_0, branch_1, branch_2, pool], "mixed_7a")


def InceptionResNetV2(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="inception_resnet_v2",
):
    """Instantiates the Inception-ResNet v2 architecture (Keras's
    `keras.applications.InceptionResNetV2`).

    The stem and `mixed_5b`; ten `block35` (residual scale 0.17), `mixed_6a`,
    twenty `block17` (0.1), `mixed_7a`, ten `block8` (0.2, the last 1.0 and
    without ReLU) and `conv_7b`, ending in 1536 channels at about a 32nd of
    the input's side; with the top, global average pooling (`avg_pool`) and
    the classifier (`predictions`). Call
    `mk.applications.inception_resnet_v2.preprocess_input` on images in
    0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `inception_resnet_v2_weights_tf_dim_ordering_tf_kernels[_notop].h5` from
    Keras's cache (`~/.keras/models`) if it is there, else raises; pass a
    local weights file instead. An unknown `pooling` is an error (Keras
    ignores it).

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
        >>> model = mk.applications.InceptionResNetV2(
        ...     weights=None, input_shape=(75, 75, 3), classes=10
        ... )
        >>> model.output_shape, model.count_params()
        ((None, 10), 54352106)
    """
    builder.check_arguments(
        "InceptionResNetV2", weights, include_top, classes, pooling, classifier_activation
    )
    input_shape = builder.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        "InceptionResNetV2",
        weights,
        f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels{top}.h5",
    )
    image = builder.image_input(input_tensor, input_shape)
    x = _conv_bn(image, 32, 3, strides=2, padding="valid")
    x = _conv_bn(x, 32, 3, padding="valid")
    x = _conv_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = _conv_bn(x, 80, 1, padding="valid")
    x = _conv_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    branches = [
        _conv_bn(x, 96, 1),
        _conv_bn(_conv_bn(x, 48, 1), 64, 5),
        _conv_bn(_conv_bn(_conv_bn(x, 64, 1), 96, 3), 96, 3),
        _conv_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1),
    ]
    x = _concatenate(branches, "mixed_5b")
    for index in range(1, 11):
        x = _block(x, 0.17, "block35", index)
    x = _reduction_a(x)
    for index in range(1, 21):
        x = _block(x, 0.1, "block17", index)
    x = _reduction_b(x)
    for index in range(1, 10):
        x = _block(x, 0.2, "block8", index)
    x = _block(x, 1.0, "block8", 10, activation=None)
    x = _conv_bn(x, 1536, 1, name="conv_7b")
    names = {"avg": "avg_pool"} if include_top else {}
    x = builder.classifier_or_pooling(
        x, include_top, pooling, classes, classifier_activation, names
    )
    return builder.finish(input_tensor, image, x, name, path)


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for InceptionResNetV2: `x / 127.5 - 1`, into [-1, 1].

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
        >>> mk.applications.inception_resnet_v2.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]))
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
        >>> mk.applications.inception_resnet_v2.decode_predictions(
        ...     np.zeros((1, 9))
        ... )  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
