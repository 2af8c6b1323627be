"""Preprocessing of images: `Resizing` and `CenterCrop`, and the resize they share.

Images are channels-last `(batch, height, width, channels)` or one image
`(height, width, channels)`; `data_format="channels_first"` is handled by
transposing to channels last and back. Resizing is `ops.image.resize` (see
`minikeras.ops.image_resize`).
"""

import numpy as np

from minikeras import ops
from minikeras.config import standardize_data_format
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.ops.image_resize import INTERPOLATIONS, aspect_window, resize

__all__ = ["CenterCrop", "Resizing", "resize_images"]


def resize_images(images, height, width, interpolation="bilinear"):
    """Resizes channels-last images (a 4-D Tensor) to `(height, width)` by `ops.image.resize`.

    Args:
        images: a float Tensor `(batch, rows, cols, channels)`.
        height: the new number of rows.
        width: the new number of columns.
        interpolation: one of `ops.image_resize.INTERPOLATIONS`.

    Returns:
        A Tensor `(batch, height, width, channels)`.

    Example:
        >>> from minikeras.layers.preprocessing.image import resize_images
        >>> resize_images(mk.ops.ones((1, 2, 2, 1)), 3, 5).shape
        (1, 3, 5, 1)
    """
    return resize(images, (height, width), interpolation, data_format="channels_last")


def check_data_format(layer_class, data_format):
    # None: the global setting when the layer is made, as Keras's image preprocessing layers
    return standardize_data_format(data_format, layer_class)


def check_size(layer_class, argument, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{layer_class}: `{argument}` must be an int >= 1, got {value!r}")
    return int(value)


class ImageLayer(Layer):
    """Base of the image preprocessing layers: 3-D or 4-D inputs, either data format.

    Subclasses write `transform(images, training)` on a channels-last 4-D
    float Tensor; this class adds and removes the batch axis of a single
    image and transposes channels-first inputs.

    Args:
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Example:
        >>> mk.layers.CenterCrop(2, 2)(np.zeros((4, 4, 3))).shape
        (2, 2, 3)
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = check_data_format(type(self).__name__, data_format)

    def _check_rank(self, shape):
        if len(shape) not in (3, 4):
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects images of rank 3 (one image) or "
                f"4 (a batch), got shape {tuple(shape)}"
            )

    def build(self, input_shape):
        self._check_rank(input_shape)

    def call(self, inputs, training=None):
        self._check_rank(inputs.shape)
        images = ops.cast(inputs, self.compute_dtype)  # (float16 under mixed_float16, as Keras)
        single = images.ndim == 3
        if single:
            images = ops.expand_dims(images, 0)
        if self.data_format == "channels_first":
            images = ops.transpose(images, (0, 2, 3, 1))
        images = self.transform(images, training)
        if self.data_format == "channels_first":
            images = ops.transpose(images, (0, 3, 1, 2))
        return images[0] if single else images

    def transform(self, images, training):
        """The layer's work on channels-last 4-D images (the base: identity).

        Args:
            images: a float Tensor `(batch, rows, cols, channels)`.
            training: the call's `training` flag.

        Returns:
            A Tensor `(batch, new rows, new cols, channels)`.

        Example:
            >>> layer = mk.layers.CenterCrop(1, 1)
            >>> layer.transform(mk.ops.ones((1, 3, 3, 1)), False).shape
            (1, 1, 1, 1)
        """
        return images

    def compute_output_shape(self, input_shape):
        self._check_rank(input_shape)
        return tuple(input_shape)

    def _with_size(self, input_shape, height, width):
        """`input_shape` with its image rows and columns set to `height` and `width`."""
        self._check_rank(input_shape)
        shape = list(input_shape)
        row = len(shape) - (2 if self.data_format == "channels_first" else 3)
        shape[row], shape[row + 1] = height, width
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


def crop_to_aspect(images, height, width):
    """The central part of 4-D images with the aspect ratio `height : width` (Keras's rounding)."""
    top, left, rows, cols = aspect_window(images.shape[1], images.shape[2], height, width, False)
    return images[:, top : top + rows, left : left + cols, :]


class Resizing(ImageLayer):
    """Resizes images to `(height, width)`, by `ops.image.resize`.

    Args:
        height: the output's number of rows.
        width: the output's number of columns.
        interpolation: `"bilinear"` (default), `"nearest"`, `"bicubic"`,
            `"lanczos3"` or `"lanczos5"`.
        crop_to_aspect_ratio: crop the largest central window with the
            target aspect ratio first, so the image is not distorted.
        pad_to_aspect_ratio: pad with `fill_value` on both sides of the short
            axis to the target aspect ratio first instead.
        fill_mode: `"constant"` (the only mode, as in Keras).
        fill_value: the value of the padding.
        antialias: whether shrinking averages the pixels it skips.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`
        (channels first with `data_format="channels_first"`).

    Output shape:
        `(batch, height, width, channels)` or `(height, width, channels)`.

    Raises:
        ValueError: for bad sizes, an unknown `interpolation`, both aspect
            options, or inputs that are not 3-D or 4-D.

    Example:
        >>> image = np.array([[0.0, 4.0]]).reshape(1, 1, 2, 1)
        >>> mk.layers.Resizing(1, 4)(image).numpy().ravel()
        array([0., 1., 3., 4.], dtype=float32)
    """

    def __init__(
        self,
        height,
        width,
        interpolation="bilinear",
        crop_to_aspect_ratio=False,
        pad_to_aspect_ratio=False,
        fill_mode="constant",
        fill_value=0.0,
        antialias=False,
        data_format=None,
        **kwargs,
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.height = check_size("Resizing", "height", height)
        self.width = check_size("Resizing", "width", width)
        self.interpolation = check_choice(
            "Resizing", "interpolation", interpolation, INTERPOLATIONS
        )
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError(
                "Resizing: give at most one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio`"
            )
        self.fill_mode = check_choice("Resizing", "fill_mode", fill_mode, ("constant",))
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_value = float(fill_value)
        self.antialias = bool(antialias)

    def transform(self, images, training):
        return resize(
            images,
            (self.height, self.width),
            self.interpolation,
            self.antialias,
            self.crop_to_aspect_ratio,
            self.pad_to_aspect_ratio,
            self.fill_mode,
            self.fill_value,
            "channels_last",
        )

    def compute_output_shape(self, input_shape):
        return self._with_size(input_shape, self.height, self.width)

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "antialias": self.antialias,
        }


class CenterCrop(ImageLayer):
    """Crops the central `(height, width)` window of images.

    The window starts at row `(rows - height) // 2` and column
    `(cols - width) // 2`. An image smaller than the window on either side is
    instead cropped to the target aspect ratio and resized (bilinear) to it,
    as Keras does.

    Args:
        height: the output's number of rows.
        width: the output's number of columns.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        `(batch, height, width, channels)` or `(height, width, channels)`.

    Raises:
        ValueError: for bad sizes or inputs that are not 3-D or 4-D.

    Example:
        >>> image = np.arange(16.0).reshape(1, 4, 4, 1)
        >>> mk.layers.CenterCrop(2, 2)(image).numpy()[0, :, :, 0]
        array([[ 5.,  6.],
               [ 9., 10.]], dtype=float32)
    """

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = check_size("CenterCrop", "height", height)
        self.width = check_size("CenterCrop", "width", width)

    def transform(self, images, training):
        return center_crop(images, self.height, self.width)

    def compute_output_shape(self, input_shape):
        return self._with_size(input_shape, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


def center_crop(images, height, width):
    """The central `(height, width)` window of 4-D images, or a resize if they are smaller."""
    rows, cols = images.shape[1], images.shape[2]
    if rows >= height and cols >= width:
        top, left = (rows - height) // 2, (cols - width) // 2
        return images[:, top : top + height, left : left + width, :]
    return resize_images(crop_to_aspect(images, height, width), height, width, "bilinear")
