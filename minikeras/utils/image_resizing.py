"""`smart_resize` and the aspect-ratio crop and pad that `image_dataset_from_directory` uses.

The crop is the largest centred window of the target's aspect ratio; the
pad adds zeros on both sides up to about that ratio; both then resize with
`minikeras.ops.image.resize`, as Keras's `ops.image.resize` does with
`crop_to_aspect_ratio` / `pad_to_aspect_ratio`.
"""

import numpy as np

from minikeras import config
from minikeras.ops.image import resize

__all__ = ["crop_to_aspect", "pad_to_aspect", "smart_resize"]


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last"):
    """Resizes images to `size` without distorting them: the largest centred crop, resized.

    The crop has the target's aspect ratio: an image of `(340, 500)` resized
    to `(200, 200)` loses 80 columns on each side first. Keras exports it as
    `keras.preprocessing.image.smart_resize`.

    Args:
        x: one image `(height, width, channels)` or a batch of them (channels
            first with `data_format="channels_first"`).
        size: the target `(height, width)`.
        interpolation: any of `minikeras.ops.image.resize`'s: `"bilinear"`,
            `"nearest"`, `"bicubic"`, `"lanczos3"` or `"lanczos5"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The resized images, float (integer and float64 images become
        `floatx()`, float16 stays, as in Keras): a numpy array for a numpy
        input, else a Tensor.

    Raises:
        ValueError: if `x` is not 3-D or 4-D, or `size` is not two ints.

    Example:
        >>> mk.preprocessing.image.smart_resize(np.ones((340, 500, 3)), (200, 200)).shape
        (200, 200, 3)
    """
    if len(size) != 2:
        raise ValueError(f"smart_resize: size must be (height, width), got {size!r}")
    images = x.numpy() if hasattr(x, "numpy") else np.asarray(x)
    if images.ndim not in (3, 4):
        raise ValueError(
            f"smart_resize: expected an image (3-D) or a batch of them (4-D), got shape "
            f"{images.shape}"
        )
    if images.dtype.kind != "f" or images.dtype == np.float64:  # (as Keras: uint8 -> float32)
        images = images.astype(config.floatx())
    resized = resize(
        crop_to_aspect(images, size, data_format), size, interpolation, data_format=data_format
    )
    return resized.numpy() if isinstance(x, np.ndarray) else resized


def _spatial_axes(images, data_format):
    if data_format == "channels_last":
        return images.ndim - 3, images.ndim - 2
    return images.ndim - 2, images.ndim - 1


def crop_to_aspect(images, size, data_format):
    """The largest centred crop of `images` with the aspect ratio of `size`, as Keras crops."""
    rows, cols = _spatial_axes(images, data_format)
    height, width = images.shape[rows], images.shape[cols]
    crop_height = max(min(height, int(width * size[0] / size[1])), 1)
    crop_width = max(min(width, int(height * size[1] / size[0])), 1)
    top, left = int((height - crop_height) / 2), int((width - crop_width) / 2)
    index = [slice(None)] * images.ndim
    index[rows], index[cols] = slice(top, top + crop_height), slice(left, left + crop_width)
    return images[tuple(index)]


def pad_to_aspect(images, size, data_format):
    """`images` padded with zeros on both sides to about the aspect ratio of `size`, as Keras."""
    rows, cols = _spatial_axes(images, data_format)
    height, width = images.shape[rows], images.shape[cols]
    pad_height = max(height, int(width * size[0] / size[1]))
    pad_width = max(width, int(height * size[1] / size[0]))
    widths = [(0, 0)] * images.ndim
    top, left = int((pad_height - height) / 2), int((pad_width - width) / 2)
    widths[rows], widths[cols] = (top, top), (left, left)
    return np.pad(images, widths)
