"""Fashion-MNIST from local IDX files (never downloaded)."""

from minikeras.datasets.idx import load_folder

__all__ = ["load_data"]


def load_data(path=None):
    """Loads Fashion-MNIST from the four IDX files in a local folder.

    Args:
        path: the folder; by default `$MINIKERAS_FASHION_MNIST` or
            `~/.minikeras/datasets/fashion_mnist`.

    Returns:
        `(x_train, y_train), (x_test, y_test)`: uint8 images `(n, 28, 28)`
        and uint8 labels `(n,)`.

    Raises:
        FileNotFoundError: if a file is missing, saying where to put it.
        ValueError: if a file is not a valid IDX file.

    Example:
        >>> mk.datasets.fashion_mnist.load_data("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        FileNotFoundError: fashion_mnist: cannot find ...
    """
    return load_folder("fashion_mnist", path, "MINIKERAS_FASHION_MNIST")
