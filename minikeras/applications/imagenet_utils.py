"""ImageNet helpers shared by the applications: `preprocess_input` and `decode_predictions`.

`preprocess_input` brings images in 0..255 into the range a family's
pretrained weights expect, in one of three modes (Keras's):

- `"caffe"`: RGB to BGR, then each channel minus the ImageNet mean pixel
  `(103.939, 116.779, 123.68)` (BGR order), no scaling (VGG, ResNet);
- `"tf"`: `x / 127.5 - 1`, into [-1, 1] (ResNetV2, MobileNetV2);
- `"torch"`: `x / 255`, then each channel minus `(0.485, 0.456, 0.406)` and
  divided by `(0.229, 0.224, 0.225)`.

`decode_predictions` names the top classes of a batch of 1000-way
predictions from ImageNet's class index, `imagenet_class_index.json`, which
minikeras never downloads: it reads the copy Keras keeps in its cache.
"""

import json
import os
from pathlib import Path

import numpy as np

from minikeras import config, ops

__all__ = ["decode_predictions", "preprocess_input"]

MODES = ("caffe", "tf", "torch")
CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)
TORCH_MEAN = (0.485, 0.456, 0.406)
TORCH_STD = (0.229, 0.224, 0.225)
CLASS_INDEX_URL = (
    "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
)
_class_index = None


def preprocess_input(x, data_format=None, mode="caffe"):
    """Preprocesses a batch of images (or one image) with values in 0..255.

    Differs from Keras: a numpy array passed in is never changed in place
    (Keras's scales a float array in place and returns it); the result is a
    new array.

    Args:
        x: a numpy array or tensor of rank 3 (one image) or 4 (a batch),
            3 channels. Integer arrays become `floatx()` (float32).
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()`.
        mode: `"caffe"` (the default), `"tf"` or `"torch"` (see the module).

    Returns:
        The preprocessed images, same shape: a numpy array for a numpy array
        (floating dtypes kept), else a tensor.

    Raises:
        ValueError: if `mode` or `data_format` is not one of its values.

    Example:
        >>> image = np.full((1, 1, 1, 3), 127.5, dtype="float32")
        >>> mk.applications.imagenet_utils.preprocess_input(image, mode="tf")[0, 0, 0]
        array([0., 0., 0.], dtype=float32)
        >>> mk.applications.imagenet_utils.preprocess_input(image)[0, 0, 0].round(3)  # BGR - mean
        array([23.561, 10.721,  3.82 ], dtype=float32)
    """
    if mode not in MODES:
        raise ValueError(
            "preprocess_input: expected mode to be one of 'caffe', 'tf' or 'torch', "
            f"got mode={mode!r}"
        )
    if data_format is None:
        data_format = config.image_data_format()
    elif data_format not in ("channels_first", "channels_last"):
        raise ValueError(
            "preprocess_input: expected data_format to be 'channels_first' or "
            f"'channels_last', got data_format={data_format!r}"
        )
    if isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            x = x.astype(config.floatx())
        return _preprocess(x, data_format, mode, np)
    return _preprocess(ops.convert_to_tensor(x, dtype=config.floatx()), data_format, mode, ops)


def _preprocess(x, data_format, mode, xp):
    """The arithmetic of `preprocess_input`, with `xp` numpy or minikeras.ops."""
    if mode == "tf":
        return x / 127.5 - 1.0
    channel_axis = -1 if data_format == "channels_last" else len(x.shape) - 3
    shape = [1] * len(x.shape)
    shape[channel_axis] = 3
    if mode == "torch":
        x = x / 255.0
        mean = np.reshape(np.array(TORCH_MEAN, dtype=x.dtype), shape)
        std = np.reshape(np.array(TORCH_STD, dtype=x.dtype), shape)
        return (x - mean) / std
    x = xp.flip(x, axis=channel_axis)  # RGB to BGR
    return x - np.reshape(np.array(CAFFE_MEAN_BGR, dtype=x.dtype), shape)


def keras_models_cache():
    """The folder where Keras keeps what it downloads for the applications.

    Returns:
        A `Path`: `$KERAS_HOME/models`, or `~/.keras/models` if `KERAS_HOME` is
        not set.
    """
    return Path(os.environ.get("KERAS_HOME") or Path.home() / ".keras") / "models"


def _load_class_index():
    global _class_index
    if _class_index is None:
        path = keras_models_cache() / "imagenet_class_index.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"decode_predictions: cannot find ImageNet's class index at {path}; minikeras "
                f"never downloads: put the file from {CLASS_INDEX_URL} there (Keras's cache, "
                "$KERAS_HOME/models if KERAS_HOME is set)"
            )
        with open(path) as stream:
            _class_index = json.load(stream)
    return _class_index


def decode_predictions(preds, top=5):
    """Names the `top` most likely ImageNet classes of each prediction in a batch.

    The class index is read from Keras's cache
    (`~/.keras/models/imagenet_class_index.json`, or under `$KERAS_HOME`);
    minikeras never downloads it.

    Args:
        preds: an array or tensor of shape `(samples, 1000)`.
        top: int, how many classes to give per sample.

    Returns:
        A list (one per sample) of lists of `(class_name, class_description,
        score)` tuples, most likely first.

    Raises:
        ValueError: if `preds` is not of shape `(samples, 1000)`.
        FileNotFoundError: if the class index is not in Keras's cache.

    Example:
        >>> mk.applications.imagenet_utils.decode_predictions(np.zeros((2, 10)))
        Traceback (most recent call last):
        ...
        ValueError: decode_predictions: expected a batch of predictions of shape ...
    """
    preds = ops.convert_to_numpy(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError(
            "decode_predictions: expected a batch of predictions of shape (samples, 1000), "
            f"got shape {preds.shape}"
        )
    index = _load_class_index()
    results = []
    for pred in preds:
        best = np.argsort(pred, kind="stable")[-top:][::-1]
        results.append([(*index[str(i)], pred[i]) for i in best])
    return results
