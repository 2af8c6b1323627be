"""The 8x8 handwritten digits, bundled with the package (no download)."""

from importlib import resources

import numpy as np

__all__ = ["load_data"]


def load_data():
    """Loads the UCI optical-digits set: 1,797 8x8 images of digits 0-9.

    The data ships inside the package (source and licence in
    `minikeras/datasets/data/README.md`); the train/test split is fixed.

    Returns:
        `(x_train, y_train), (x_test, y_test)`: uint8 images of shape
        `(n, 8, 8)` with values 0..16, and uint8 labels of shape `(n,)`;
        1,437 training and 360 test samples.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = mk.datasets.digits.load_data()
        >>> x_train.shape, x_test.shape, int(x_train.max())
        ((1437, 8, 8), (360, 8, 8), 16)
    """
    path = resources.files("minikeras.datasets") / "data" / "digits.npz"
    with resources.as_file(path) as file, np.load(file, allow_pickle=False) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])
