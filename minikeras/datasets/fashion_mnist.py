"""Fashion-MNIST from local IDX files (never downloaded), or from Keras's download of them."""

from minikeras.datasets.idx import load_local

__all__ = ["load_data"]


def load_data(path=None):
    """Loads Fashion-MNIST from the four IDX files in a local folder.

    Keras downloads the four gzipped files into its cache; minikeras never
    downloads, but reads them if Keras left them there. (Keras's
    `load_data()` takes no `path`.)

    Args:
        path: a folder of IDX files (gzipped or not), or a `.npz` file; by
            default the first of `$MINIKERAS_FASHION_MNIST`,
            `~/.minikeras/datasets/fashion_mnist` and Keras's
            `~/.keras/datasets/fashion-mnist` (`$KERAS_HOME` if set) that
            holds the files.

    Returns:
        `(x_train, y_train), (x_test, y_test)`: uint8 images `(n, 28, 28)`
        and uint8 labels `(n,)`.

    Raises:
        FileNotFoundError: if the files are not there, saying where to put them.
        ValueError: if a file is not a valid IDX or `.npz` data set file.

    Example:
        >>> mk.datasets.fashion_mnist.load_data("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        FileNotFoundError: fashion_mnist: cannot find ...
    """
    return load_local("fashion_mnist", path, "MINIKERAS_FASHION_MNIST", "fashion-mnist")
