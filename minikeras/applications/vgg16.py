"""VGG16 (Simonyan and Zisserman, 2015): five blocks of 3x3 convolutions, then three dense layers.

Layer names, shapes and weights match Keras's `keras.applications.VGG16`, so
its weights files load. Inputs are preprocessed in `"caffe"` mode.
"""

from minikeras import layers
from minikeras.applications import builder, imagenet_utils

__all__ = ["VGG16", "decode_predictions", "preprocess_input"]


def build_vgg(
    model_name,
    convs_per_block,
    include_top,
    weights,
    input_tensor,
    input_shape,
    pooling,
    classes,
    classifier_activation,
    name,
):
    """Builds a VGG with `convs_per_block[i]` convolutions in block `i + 1` (VGG16 and VGG19).

    Args:
        model_name: `"VGG16"` or `"VGG19"`, for messages and the weights file.
        convs_per_block: five ints.
        include_top: see `VGG16`.
        weights: see `VGG16`.
        input_tensor: see `VGG16`.
        input_shape: see `VGG16`.
        pooling: see `VGG16`.
        classes: see `VGG16`.
        classifier_activation: see `VGG16`.
        name: see `VGG16`.

    Returns:
        A `Model`.
    """
    builder.check_arguments(
        model_name, weights, include_top, classes, pooling, classifier_activation
    )
    input_shape = builder.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    top = "" if include_top else "_notop"
    path = builder.weights_path(
        model_name, weights, f"{model_name.lower()}_weights_tf_dim_ordering_tf_kernels{top}.h5"
    )
    image = builder.image_input(input_tensor, input_shape)
    x = image
    for block, (filters, convs) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), 1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(
                filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{conv}"
            )(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = builder.classifier_or_pooling(x, False, pooling, classes, None, {})
    return builder.finish(input_tensor, image, x, name, path)


def VGG16(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="vgg16",
):
    """Instantiates the VGG16 model (Keras's `keras.applications.VGG16`).

    Thirteen 3x3 convolutions in five blocks (2, 2, 3, 3, 3), each block
    ending in 2x2 max pooling; with the top, `Flatten`, two `Dense(4096)` and
    the classifier. Call `mk.applications.vgg16.preprocess_input` on images
    in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `vgg16_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's cache
    (`~/.keras/models`) if it is there, else raises; pass a local weights file
    instead. An unknown `pooling` is an error (Keras ignores it).

    Args:
        include_top: whether to include the three dense layers at the top.
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
        >>> model = mk.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
        >>> model.output_shape, model.count_params()
        ((None, 1, 1, 512), 14714688)
    """
    return build_vgg(
        "VGG16",
        (2, 2, 3, 3, 3),
        include_top,
        weights,
        input_tensor,
        input_shape,
        pooling,
        classes,
        classifier_activation,
        name,
    )


def preprocess_input(x, data_format=None):
    """Preprocesses images in 0..255 for VGG16: RGB to BGR, minus the ImageNet mean pixel.

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
        >>> image = np.zeros((1, 1, 1, 3), dtype="float32")
        >>> mk.applications.vgg16.preprocess_input(image)[0, 0, 0]
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
        >>> mk.applications.vgg16.decode_predictions(np.zeros((1, 3)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
