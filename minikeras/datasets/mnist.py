"""MNIST from local files (never downloaded), or from Keras's download of it."""

from minikeras.datasets.idx import load_local

__all__ = ["load_data"]


def load_data(path=None):
    """Loads MNIST from local files: a folder of the four IDX files, or Keras's `mnist.npz`.

    Keras downloads `mnist.npz` into its cache; minikeras never downloads,
    but reads that file if Keras left it there. `path="mnist.npz"`, Keras's
    default, is looked for in that cache too.

    Args:
        path: a folder of IDX files (gzipped or not) or a `.npz` file; by
            default the first of `$MINIKERAS_MNIST`, `~/.minikeras/datasets/mnist`
            and Keras's `~/.keras/datasets/mnist.npz` (`$KERAS_HOME` if set)
            that holds the data.

    Returns:
        `(x_train, y_train), (x_test, y_test)`: uint8 images `(n, 28, 28)`
        and uint8 labels `(n,)`.

    Raises:
        FileNotFoundError: if the files are not there, saying where to put them.
        ValueError: if a file is not a valid IDX or `.npz` data set file.

    Example:
        >>> mk.datasets.mnist.load_data("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        FileNotFoundError: mnist: cannot find ...
    """
    return load_local("mnist", path, "MINIKERAS_MNIST", "mnist.npz")
