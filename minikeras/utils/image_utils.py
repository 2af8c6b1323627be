"""Images between numpy arrays, PIL images and files, as `keras.utils` has them.

`array_to_img`, `img_to_array`, `save_img` and `load_img` convert and read
through Pillow, which minikeras does not depend on: it is imported when one
of them needs it (the `images` extra installs it), and its absence is an
`ImportError` that says so. `img_to_array` of a numpy array needs no Pillow.
"""

import io
import pathlib
import warnings

import numpy as np

from minikeras import config

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]

_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")
_COLOR_MODES = {"grayscale": ("L", "I;16", "I"), "rgb": ("RGB",), "rgba": ("RGBA",)}


def _pil_image(caller):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            f"{caller} needs Pillow (PIL.Image), which minikeras does not install: "
            "pip install pillow (or the 'images' extra)"
        ) from None
    return Image


def _data_format(data_format, caller):
    data_format = config.image_data_format() if data_format is None else data_format
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"{caller}: data_format must be 'channels_last' or 'channels_first', "
            f"got {data_format!r}"
        )
    return data_format


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """Converts one image, a rank-3 array, to a PIL image.

    With `scale`, the values are first shifted and stretched so that their
    minimum is 0 and their maximum 255; the values are then cast to uint8.
    1, 3 or 4 channels give a PIL image of mode `"L"`, `"RGB"` or `"RGBA"`
    (one channel above 255 gives mode `"I"`, 32-bit integers), as in Keras.

    Args:
        x: an array-like (or Tensor) of shape `(height, width, channels)`,
            or `(channels, height, width)` for `"channels_first"`.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()`.
        scale: whether to stretch the values to [0, 255].
        dtype: the float dtype the values are computed in; None means
            `mk.config.floatx()`.

    Returns:
        A `PIL.Image.Image`.

    Raises:
        ImportError: if Pillow is not installed.
        ValueError: if `x` is not of rank 3 or has another number of channels.

    Example:
        >>> image = mk.utils.array_to_img(np.array([[[0.0], [0.5]], [[0.5], [1.0]]]))
        >>> image.mode, image.size, np.asarray(image).tolist()
        ('L', (2, 2), [[0, 127], [127, 255]])
    """
    image_module = _pil_image("array_to_img")
    data_format = _data_format(data_format, "array_to_img")
    x = np.array(x, dtype=config.floatx() if dtype is None else dtype)
    if x.ndim != 3:
        raise ValueError(f"array_to_img expected one image of rank 3, got shape {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        if np.max(x) != 0:
            x = x / np.max(x)
        x = x * 255
    channels = x.shape[2]
    if channels in (3, 4):
        return image_module.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:  # (integer grey levels above 255: PIL's 32-bit mode)
            return image_module.fromarray(x[:, :, 0].astype("int32"), "I")
        return image_module.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(
        f"array_to_img expected 1, 3 or 4 channels, got {channels} (shape {x.shape}, "
        f"data_format {data_format!r})"
    )


def img_to_array(img, data_format=None, dtype=None):
    """Converts a PIL image (or an array) to a rank-3 numpy array.

    Args:
        img: a PIL image, or an array of shape `(height, width)` or
            `(height, width, channels)`.
        data_format: `"channels_last"` (channels as the last axis) or
            `"channels_first"`; None means `mk.config.image_data_format()`.
        dtype: the array's dtype; None means `mk.config.floatx()`.

    Returns:
        A numpy array of rank 3; a grey image gets a channel axis of size 1.

    Raises:
        ValueError: for an image of another rank.

    Example:
        >>> mk.utils.img_to_array(np.zeros((4, 5))).shape
        (4, 5, 1)
        >>> mk.utils.img_to_array(np.zeros((4, 5, 3)), data_format="channels_first").shape
        (3, 4, 5)
    """
    data_format = _data_format(data_format, "img_to_array")
    x = np.asarray(img, dtype=config.floatx() if dtype is None else dtype)
    if x.ndim == 2:
        x = x[None] if data_format == "channels_first" else x[:, :, None]
    elif x.ndim == 3:
        x = x.transpose(2, 0, 1) if data_format == "channels_first" else x
    else:
        raise ValueError(f"img_to_array expected an image of rank 2 or 3, got shape {x.shape}")
    return x


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes one image, a rank-3 array, to an image file (through `array_to_img`).

    Args:
        path: a path or a writable file object.
        x: the image, as `array_to_img` takes it.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()`.
        file_format: `"png"`, `"jpeg"`...; None means the path's suffix
            (`"jpg"` is read as `"jpeg"`); needed for a file object.
        scale: whether to stretch the values to [0, 255].
        **kwargs: passed to `PIL.Image.Image.save`.

    Returns:
        None.

    Raises:
        ImportError: if Pillow is not installed.

    Example:
        >>> import io
        >>> buffer = io.BytesIO()
        >>> mk.utils.save_img(buffer, np.ones((2, 3, 3)), file_format="png")
        >>> mk.utils.load_img(buffer).size
        (3, 2)
    """
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn(
            "save_img: JPEG has no alpha channel; the image is saved as RGB.", stacklevel=2
        )
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(
    path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False
):
    """Reads an image file into a PIL image, converted and resized as asked.

    Args:
        path: a path, or an `io.BytesIO` holding the file.
        color_mode: `"rgb"`, `"rgba"` or `"grayscale"` (a 16- or 32-bit grey
            image stays as it is, as in Keras).
        target_size: None for the file's size, or `(height, width)`.
        interpolation: how to resize: `"nearest"`, `"bilinear"`,
            `"bicubic"`, `"hamming"`, `"box"` or `"lanczos"`.
        keep_aspect_ratio: if True, the largest centered window of the target's
            aspect ratio is resized instead of the whole image.

    Returns:
        A `PIL.Image.Image`.

    Raises:
        ImportError: if Pillow is not installed.
        TypeError: for a path of another type.
        ValueError: for an unknown `color_mode` or `interpolation`.

    Example:
        >>> import io
        >>> buffer = io.BytesIO()
        >>> mk.utils.save_img(buffer, np.ones((4, 6, 3)), file_format="png")
        >>> image = mk.utils.load_img(buffer, color_mode="grayscale", target_size=(2, 3))
        >>> image.mode, image.size
        ('L', (3, 2))
    """
    image_module = _pil_image("load_img")
    if color_mode not in _COLOR_MODES:
        raise ValueError(
            f"load_img: color_mode must be one of {list(_COLOR_MODES)}, got {color_mode!r}"
        )
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"load_img: interpolation must be one of {list(_INTERPOLATIONS)}, got {interpolation!r}"
        )
    if isinstance(path, io.BytesIO):
        img = image_module.open(path)
    elif isinstance(path, (str, bytes, pathlib.Path)):
        with open(path, "rb") as file:
            img = image_module.open(io.BytesIO(file.read()))
    else:
        raise TypeError(
            f"load_img: path must be path-like or an io.BytesIO, got {type(path).__name__}"
        )
    if img.mode not in _COLOR_MODES[color_mode]:
        img = img.convert(_COLOR_MODES[color_mode][0])
    if target_size is None or img.size == (target_size[1], target_size[0]):
        return img
    width, height = img.size
    target_height, target_width = target_size
    box = None
    if keep_aspect_ratio:  # the largest centered window of the target's shape
        crop_height = min(height, (width * target_height) // target_width)
        crop_width = min(width, (height * target_width) // target_height)
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        box = (left, top, left + crop_width, top + crop_height)
    resample = getattr(image_module, "Resampling", image_module)
    return img.resize(
        (target_width, target_height), getattr(resample, interpolation.upper()), box=box
    )
