"""`ContrastLimitedAdaptiveHistogramEqualization` (CLAHE): histogram equalization per tile of
the image, with the histograms clipped, blended between tiles.

It draws nothing and, as in Keras, applies whatever `training` is. The steps
follow Keras 3's: values mapped to `[0, 255]`; the image padded at its bottom
and right (mirrored, the edge pixel repeated) to whole tiles; per tile and
channel a 256-bin histogram of the values truncated to integers, each bin
clipped at `clip_limit * tile_pixels / 256` with the excess spread evenly over
all bins; its cumulative counts `cdf` scaled to `[0, 255]` as
`(cdf - cdf[0]) * 255 / (tile_pixels - cdf[0])` (so the lowest values do not
map to 0 unless they are at level 0); and each pixel's value
looked up in the four tables of the tiles whose centres surround it, blended
bilinearly (the outer tiles' tables repeat past the border).
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.image import ImageLayer
from minikeras.layers.preprocessing.random_color import sorted_value_range

__all__ = ["ContrastLimitedAdaptiveHistogramEqualization", "clahe"]


def _tables(tiles, clip_limit):
    """Equalization tables `(..., 256)` from tiles of pixel values `(..., tile pixels)`."""
    levels = np.clip(np.trunc(tiles), 0, 255).astype(int).reshape(-1, tiles.shape[-1])
    counts = np.zeros((levels.shape[0], 256))
    np.add.at(counts, (np.arange(levels.shape[0])[:, None], levels), 1.0)
    counts = counts.reshape(*tiles.shape[:-1], 256)
    pixels = tiles.shape[-1]
    if clip_limit > 0:
        clipped = np.minimum(counts, clip_limit * pixels / 256.0)
        counts = clipped + (counts - clipped).sum(axis=-1, keepdims=True) / 256.0
    cdf = np.cumsum(counts, axis=-1)
    cdf_min = cdf.min(axis=-1, keepdims=True)
    denominator = pixels - cdf_min
    denominator = np.where(denominator == 0, 1.0, denominator)
    return np.clip((cdf - cdf_min) * 255.0 / denominator, 0, 255)


def _blend_positions(size, tile, grid):
    """Per pixel along one axis: the two table rows around it and the weight of the second."""
    position = (np.arange(size) - tile / 2.0) / tile + 1.0
    first = np.floor(position)
    weight = position - first
    first = np.clip(first, 0, grid + 1).astype(int)
    second = np.clip(first + 1, 0, grid + 1).astype(int)
    return first, second, weight


def clahe(images, clip_limit=4.0, tile_grid_size=(8, 8)):
    """CLAHE of channels-last images with values in `[0, 255]` (see the module).

    Args:
        images: a float array `(batch, rows, cols, channels)`.
        clip_limit: the most a histogram bin may hold, in multiples of the
            mean count; 0 or less: no clipping.
        tile_grid_size: `(tile rows, tile columns)`, the number of tiles.

    Returns:
        A float64 array of the images' shape, values in `[0, 255]`.

    Example:
        >>> from minikeras.layers.preprocessing.clahe import clahe
        >>> image = np.array([[[[10.0], [20.0]], [[20.0], [30.0]]]])
        >>> clahe(image, clip_limit=0, tile_grid_size=(1, 1))[0, :, :, 0]
        array([[ 63.75, 191.25],
               [191.25, 255.  ]])
    """
    images = np.asarray(images, np.float64)
    batch, height, width, channels = images.shape
    grid_h, grid_w = tile_grid_size
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    padding = [(0, 0), (0, tile_h * grid_h - height), (0, tile_w * grid_w - width), (0, 0)]
    padded = np.pad(images, padding, mode="symmetric")
    tiles = padded.reshape(batch, grid_h, tile_h, grid_w, tile_w, channels)
    tiles = tiles.transpose(0, 1, 3, 5, 2, 4).reshape(
        batch, grid_h, grid_w, channels, tile_h * tile_w
    )
    tables = np.pad(_tables(tiles, clip_limit), [(0, 0), (1, 1), (1, 1), (0, 0), (0, 0)],
                    mode="edge")  # fmt: skip
    top, bottom, down = _blend_positions(padded.shape[1], tile_h, grid_h)
    left, right, across = _blend_positions(padded.shape[2], tile_w, grid_w)
    levels = np.clip(padded, 0, 255).astype(int)
    which = np.arange(batch)[:, None, None, None]
    channel = np.arange(channels)[None, None, None, :]

    def look_up(rows, cols):
        return tables[which, rows[None, :, None, None], cols[None, None, :, None], channel, levels]

    across = across[None, None, :, None]
    upper = look_up(top, left) * (1 - across) + look_up(top, right) * across
    lower = look_up(bottom, left) * (1 - across) + look_up(bottom, right) * across
    down = down[None, :, None, None]
    return (upper * (1 - down) + lower * down)[:, :height, :width]


class ContrastLimitedAdaptiveHistogramEqualization(ImageLayer):
    """Equalizes the histograms of tiles of each image, clipped and blended (CLAHE).

    See the module for the steps, Keras 3's. Unlike the random layers it
    applies in training and inference alike, as in Keras.

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        clip_limit: the most a histogram bin may hold, in multiples of the
            mean count (default 4.0); 0 turns clipping off.
        tile_grid_size: `(rows, columns)` of tiles, ints >= 1 (default `(8, 8)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `value_range`, `clip_limit` or `tile_grid_size`.

    Example:
        >>> layer = mk.layers.ContrastLimitedAdaptiveHistogramEqualization(
        ...     value_range=(0, 1), clip_limit=0, tile_grid_size=(1, 1))
        >>> layer(np.array([[[0.1], [0.2]], [[0.2], [0.3]]])).numpy()[:, :, 0]
        array([[0.25, 0.75],
               [0.75, 1.  ]], dtype=float32)
    """

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8),
                 data_format=None, **kwargs):  # fmt: skip
        super().__init__(data_format=data_format, **kwargs)
        name = "ContrastLimitedAdaptiveHistogramEqualization"
        sorted_value_range(name, value_range)
        if isinstance(clip_limit, bool) or not isinstance(clip_limit, (int, float)):
            raise ValueError(f"{name}: `clip_limit` must be a number, got {clip_limit!r}")
        if not (
            isinstance(tile_grid_size, (list, tuple))
            and len(tile_grid_size) == 2
            and all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in tile_grid_size
            )  # fmt: skip
        ):
            raise ValueError(
                f"{name}: `tile_grid_size` must be a pair of ints >= 1, got {tile_grid_size!r}"
            )
        self.value_range = list(value_range)
        self.clip_limit = clip_limit
        self.tile_grid_size = tuple(tile_grid_size)

    def transform(self, images, training):
        low, high = self.value_range
        values = (images.numpy().astype(np.float32) - low) * (255.0 / (high - low))
        equalized = clahe(values, self.clip_limit, self.tile_grid_size)
        return Tensor((equalized * ((high - low) / 255.0) + low).astype(images.dtype))

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "clip_limit": self.clip_limit,
            "tile_grid_size": self.tile_grid_size,
        }
