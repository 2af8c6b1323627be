"""VGG19 (Simonyan and Zisserman, 2015): VGG16 with four convolutions in its last three blocks.

Layer names, shapes and weights match Keras's `keras.applications.VGG19`, so
its weights files load. Inputs are preprocessed in `"caffe"` mode.
"""

from minikeras.applications import imagenet_utils
from minikeras.applications.vgg16 import build_vgg

__all__ = ["VGG19", "decode_predictions", "preprocess_input"]


def VGG19(  # noqa: N802 (Keras's name)
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    name="vgg19",
):
    """Instantiates the VGG19 model (Keras's `keras.applications.VGG19`).

    Sixteen 3x3 convolutions in five blocks (2, 2, 4, 4, 4), each block
    ending in 2x2 max pooling; with the top, `Flatten`, two `Dense(4096)` and
    the classifier. Call `mk.applications.vgg19.preprocess_input` on images
    in 0..255 first.

    Differs from Keras: nothing is downloaded. `weights="imagenet"` loads
    `vgg19_weights_tf_dim_ordering_tf_kernels[_notop].h5` from Keras's cache
    (`~/.keras/models`) if it is there, else raises; pass a local weights file
    instead.

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
        >>> model = mk.applications.VGG19(weights=None, include_top=False, input_shape=(32, 32, 3))
        >>> model.output_shape, model.count_params()
        ((None, 1, 1, 512), 20024384)
    """
    return build_vgg(
        "VGG19",
        (2, 2, 4, 4, 4),
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
    """Preprocesses images in 0..255 for VGG19: RGB to BGR, minus the ImageNet mean pixel.

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
        >>> mk.applications.vgg19.preprocess_input(image)[0, 0, 0]
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
        >>> mk.applications.vgg19.decode_predictions(np.zeros((1, 3)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    return imagenet_utils.decode_predictions(preds, top=top)
