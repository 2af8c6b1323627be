"""`image_dataset_from_directory`: a folder of image files (a subfolder per class) as batches."""

import numpy as np

from minikeras.ops.image import resize
from minikeras.ops.image_resize import INTERPOLATIONS
from minikeras.utils.directory_index import check_arguments, index_directory, make_datasets
from minikeras.utils.image_resizing import crop_to_aspect, pad_to_aspect
from minikeras.utils.image_utils import _COLOR_MODES, _data_format, _pil_image

__all__ = ["image_dataset_from_directory"]

_WHERE = "image_dataset_from_directory"
IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_KERAS_INTERPOLATIONS = (
    "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic",
)  # fmt: skip


def _image_loader(image_size, color_mode, interpolation, crop, pad, data_format):
    """A function from file paths to a float32 batch of their images, resized."""
    image_module = _pil_image(_WHERE)
    modes = _COLOR_MODES[color_mode]  # grayscale keeps 16- and 32-bit images, as Keras

    def load(paths):
        images = []
        for path in paths:
            with image_module.open(path) as image:  # an animated GIF's first frame
                image = image if image.mode in modes else image.convert(modes[0])
                pixels = np.asarray(image, dtype="float32")
            if pixels.ndim == 2:
                pixels = pixels[:, :, None]
            if crop:
                pixels = crop_to_aspect(pixels, image_size, "channels_last")
            elif pad:
                pixels = pad_to_aspect(pixels, image_size, "channels_last")
            if pixels.shape[:2] != tuple(image_size):
                pixels = resize(pixels, image_size, interpolation).numpy()
            images.append(pixels)
        batch = np.stack(images).astype("float32")
        return batch.transpose(0, 3, 1, 2) if data_format == "channels_first" else batch

    return load


def image_dataset_from_directory(
    directory,
    labels="inferred",
    label_mode="int",
    class_names=None,
    color_mode="rgb",
    batch_size=32,
    image_size=(256, 256),
    shuffle=True,
    seed=None,
    validation_split=None,
    subset=None,
    interpolation="bilinear",
    follow_links=False,
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    data_format=None,
    format="tf",
    verbose=True,
):
    """Reads a directory of images (a subdirectory per class) as batches of `(images, labels)`.

    With `labels="inferred"`, `directory/class_a/*.png` and
    `directory/class_b/*.png` give labels 0 and 1: the classes are the
    subdirectories in alphanumeric order (or `class_names`' order), and
    the images anywhere below one belong to it. Files ending in `.bmp`,
    `.gif` (first frame), `.jpeg`, `.jpg` or `.png` are read, with Pillow
    (`pip install "minikeras[images]"`).

    Keras returns a `tf.data.Dataset`; minikeras has no tf.data and returns
    a `minikeras.utils.PyDataset` of numpy batches, which `fit`, `evaluate`
    and `predict` take, a `for` loop reads and `len` counts (in batches);
    it also has Keras's attributes `class_names` and `file_paths`, and
    `take(n)`. The images are read when a batch is asked for. With
    `shuffle`, `file_paths` is in Keras's order for the same seed (so
    `validation_split` makes the same subsets), and the training batches
    come in a new order at each epoch (Keras shuffles within a buffer). The
    grayscale conversion and the resizing are Pillow's and
    `minikeras.ops.image.resize`'s (as Keras's `format="grain"`), which may
    differ from TensorFlow's by a rounding. The "Using N files for
    training." message follows `verbose` (Keras always prints it).

    Args:
        directory: the directory (a path) to read.
        labels: `"inferred"` (from the subdirectories), None (images only),
            or a list/tuple of int labels, one per image file in the
            alphanumeric order of their paths.
        label_mode: `"int"` (int32 labels of shape `(batch,)`),
            `"categorical"` (float32 one-hot rows, `(batch, num_classes)`),
            `"binary"` (float32 0s and 1s of shape `(batch, 1)`, for exactly
            two classes) or None (images only).
        class_names: with `labels="inferred"`, the subdirectories to read,
            in the order of their labels; None reads all, alphanumerically.
        color_mode: `"rgb"`, `"rgba"` or `"grayscale"`: 3, 4 or 1 channels.
        batch_size: the images in a batch (the last may be smaller); None
            yields single images, without a batch axis.
        image_size: `(height, width)` (or one int for both) every image is
            resized to.
        shuffle: whether to shuffle the files; False keeps them in
            alphanumeric order.
        seed: int seed for the shuffle; None draws one from the global
            generator (needed with `validation_split` and `shuffle`).
        validation_split: a float in (0, 1): the fraction of the files kept
            for validation (the last ones, after the shuffle).
        subset: with `validation_split`, `"training"`, `"validation"` or
            `"both"` (a `(training, validation)` tuple).
        interpolation: `"bilinear"`, `"nearest"`, `"bicubic"`, `"lanczos3"` or
            `"lanczos5"` (`ops.image.resize`'s); Keras's `"area"`,
            `"gaussian"` and `"mitchellcubic"` raise a ValueError.
        follow_links: whether to read subdirectories that are symbolic links.
        crop_to_aspect_ratio: whether to resize the largest centred crop of
            `image_size`'s aspect ratio (no distortion).
        pad_to_aspect_ratio: whether to pad the image with zeros to
            `image_size`'s aspect ratio before resizing (no distortion).
        data_format: `"channels_last"`, `"channels_first"` or None (the
            global `minikeras.config.image_data_format()`).
        format: Keras's choice of dataset, `"tf"` or `"grain"`; both give
            the same `PyDataset` here.
        verbose: whether to print how many files and classes were found.

    Returns:
        A `PyDataset` yielding `(images, labels)`, or images alone without
        labels: float32 images in [0, 255] of shape `(batch, height, width,
        channels)`; or, with `subset="both"`, a `(training, validation)`
        tuple of them (the validation one unshuffled).

    Raises:
        ImportError: if Pillow is not installed.
        ValueError: if an argument is not one of its values (naming it), the
            directory does not exist or holds no images, `class_names` are not
            its subdirectories, `labels` do not match the files in number,
            `label_mode="binary"` has other than two classes, or explicit
            labels are outside [0, number of classes) with `"categorical"` or
            `"binary"` (Keras encodes those silently).

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for name, value in (("cats", 0), ("cats", 10), ("dogs", 255)):
        ...     os.makedirs(os.path.join(folder, name), exist_ok=True)
        ...     path = os.path.join(folder, name, f"{value}.png")
        ...     mk.utils.save_img(path, np.full((8, 8, 3), value), scale=False)
        >>> dataset = mk.utils.image_dataset_from_directory(
        ...     folder, image_size=(4, 4), batch_size=2, shuffle=False
        ... )
        Found 3 files belonging to 2 classes.
        >>> images, labels = dataset[0]
        >>> dataset.class_names, len(dataset), images.shape, labels
        (['cats', 'dogs'], 2, (2, 4, 4, 3), array([0, 0], dtype=int32))
        >>> float(images.max())
        10.0
    """
    labels, label_mode, seed = check_arguments(
        _WHERE, labels, label_mode, class_names, validation_split, subset, shuffle, seed
    )
    if color_mode not in ("rgb", "rgba", "grayscale"):
        raise ValueError(
            f"{_WHERE}: color_mode must be 'rgb', 'rgba' or 'grayscale', got {color_mode!r}"
        )
    if isinstance(image_size, int) and not isinstance(image_size, bool):
        image_size = (image_size, image_size)
    if not (
        isinstance(image_size, (list, tuple))
        and len(image_size) == 2
        and all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in image_size)
    ):
        raise ValueError(
            f"{_WHERE}: image_size must be (height, width), two positive ints, got {image_size!r}"
        )
    image_size = tuple(image_size)
    interpolation = interpolation.lower() if isinstance(interpolation, str) else interpolation
    if interpolation not in INTERPOLATIONS:
        more = (
            " (minikeras does not resize with it)" if interpolation in _KERAS_INTERPOLATIONS else ""
        )
        raise ValueError(
            f"{_WHERE}: interpolation must be one of {', '.join(map(repr, INTERPOLATIONS))}"
            f"{more}, got {interpolation!r}"
        )
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(f"{_WHERE}: give only one of crop_to_aspect_ratio and pad_to_aspect_ratio")
    data_format = _data_format(data_format, _WHERE)
    if format not in ("tf", "grain"):
        raise ValueError(f"{_WHERE}: format must be 'tf' or 'grain', got {format!r}")
    load = _image_loader(
        image_size, color_mode, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio,
        data_format,
    )  # fmt: skip
    index = index_directory(
        _WHERE, directory, labels, IMAGE_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    return make_datasets(
        _WHERE, index, IMAGE_FORMATS, label_mode, load, batch_size, shuffle, seed,
        validation_split, subset, verbose,
    )  # fmt: skip
