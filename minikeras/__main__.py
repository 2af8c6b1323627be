"""The main job: train a model on the bundled digits (`minikeras` or `python -m minikeras`)."""

import argparse
import pathlib
import time

from minikeras import Sequential, datasets, layers, losses, optimizers, utils
from minikeras.datasets.idx import load_folder

__all__ = ["build_model", "load_images", "main", "plot_history"]

__all__ = ["build_model", "main"]

MODELS = {
    "mlp": lambda shape: [
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.1),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ],
    "small": lambda shape: [
        layers.Flatten(),
        layers.Dense(32, activation="relu"),
        layers.Dense(10),
    ],
    "linear": lambda shape: [layers.Flatten(), layers.Dense(10)],
    "cnn": lambda shape: [
        layers.Reshape((*shape, 1)),
        layers.Conv2D(16, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        *([layers.MaxPooling2D()] if shape[0] >= 16 else []),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ],
    # Each image read row by row: a sequence of `height` steps of `width` pixels.
    "lstm": lambda shape: [layers.LSTM(64), layers.Dense(10)],
}


def build_model(name, image_shape=(8, 8)):
    """Makes one of the main job's models for images of `image_shape`, with 10 classes.

    Args:
        name: `"mlp"` (flat pixels, 128-64-10), `"small"` (32-10), `"linear"`,
            `"cnn"` (two 3x3 convolutions with max pooling, then 64-10) or
            `"lstm"` (an LSTM of 64 units reading the image row by row, then 10).
        image_shape: `(height, width)` of the images.

    Returns:
        A `Sequential` model producing 10 logits.

    Raises:
        KeyError: for an unknown name.

    Example:
        >>> mk.__main__.build_model("small").count_params()
        2410
        >>> mk.__main__.build_model("lstm", (28, 28)).output_shape
        (None, 10)
    """
    shape = tuple(image_shape)
    return Sequential([layers.Input(shape), *MODELS[name](shape)], name=name)


def load_images(path):
    """Loads the bundled digits, or MNIST / Fashion-MNIST IDX files from a folder.

    Args:
        path: None for the bundled 8x8 digits, or a folder with the four IDX
            files (`train-images-idx3-ubyte` ..., gzipped or not).

    Returns:
        `(x_train, y_train), (x_test, y_test), description`: float32 images
        scaled to [0, 1], int labels, and a line saying what was loaded.

    Raises:
        FileNotFoundError: if the folder or a file is missing, naming it.
        ValueError: if a file is not a valid IDX file, naming it, or the
            labels are not the 10 classes of MNIST.

    Example:
        >>> (x, y), _, line = mk.__main__.load_images(None)
        >>> x.shape[1:], line.split(":")[0]
        ((8, 8), 'digits')
    """
    if path is None:
        (x_train, y_train), (x_test, y_test) = datasets.digits.load_data()
        scale, name = 16.0, "digits"
    else:
        folder = pathlib.Path(path).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"--data: {folder} is not a folder of IDX files")
        (x_train, y_train), (x_test, y_test) = load_folder("--data", folder, None)
        scale, name = 255.0, str(folder)
    if x_train.ndim != 3 or x_test.ndim != 3 or x_train.shape[1:] != x_test.shape[1:]:
        raise ValueError(
            f"--data: {name} holds images of shapes {x_train.shape[1:]} (training) and "
            f"{x_test.shape[1:]} (test); expected one (height, width) for both"
        )
    if len(x_train) != len(y_train) or len(x_test) != len(y_test):
        raise ValueError(
            f"--data: {name} holds {len(x_train)}/{len(x_test)} training/test images but "
            f"{len(y_train)}/{len(y_test)} labels"
        )
    for labels, part in ((y_train, "training"), (y_test, "test")):
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise ValueError(
                f"--data: the {part} labels in {name} run from {labels.min()} to "
                f"{labels.max()}; the main job trains 10 classes (0-9)"
            )
    height, width = x_train.shape[1:]
    line = (
        f"{name}: {len(x_train)} training and {len(x_test)} test images of {height}x{width} pixels"
    )
    x_train = x_train.astype("float32") / scale
    x_test = x_test.astype("float32") / scale
    return (x_train, y_train.astype("int64")), (x_test, y_test.astype("int64")), line


def plot_history(history, path):
    """Writes a PNG of the training and validation loss and accuracy per epoch.

    Args:
        history: the `History` that `fit` returned.
        path: the PNG file to write.

    Returns:
        None.

    Raises:
        ImportError: if matplotlib (the `plot` extra) is not installed.

    Example:
        >>> import tempfile, pathlib
        >>> history = mk.callbacks.History()
        >>> history.history = {"loss": [1.0, 0.5], "val_loss": [1.1, 0.7]}
        >>> mk.__main__.plot_history(
        ...     history, pathlib.Path(tempfile.mkdtemp()) / "h.png"
        ... )  # doctest: +SKIP
    """
    plt = _pyplot()
    logs = history.history
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for axis, metric in zip(axes, ("loss", "accuracy")):
        for prefix, label in (("", "training"), ("val_", "validation")):
            values = logs.get(prefix + metric)
            if values:
                axis.plot(range(1, len(values) + 1), values, marker="o", label=label)
        axis.set_xlabel("epoch")
        axis.set_title(metric)
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "--plot needs matplotlib, the `plot` extra: pip install 'minikeras[plot]'"
        ) from None
    return plt


def main(argv=None):
    """Trains a model on the bundled 8x8 digits (or your MNIST files) and reports its test accuracy.

    Args:
        argv: command-line arguments (defaults to `sys.argv[1:]`).

    Returns:
        The exit code, 0.

    Raises:
        SystemExit: for bad arguments, a missing or corrupt data file, or a
            missing optional package (the message names it).

    Example:
        >>> mk.__main__.main(
        ...     ["--model", "linear", "--epochs", "1", "--verbose", "0"]
        ... )  # doctest: +ELLIPSIS
        digits: 1437 training and 360 test images of 8x8 pixels
        ...
        test accuracy: ...
        0
    """
    parser = argparse.ArgumentParser(prog="minikeras", description=main.__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp", help="model to train")
    parser.add_argument("--epochs", type=int, default=30, help="passes over the training data")
    parser.add_argument("--optimizer", default="adam", help="optimizer name, e.g. adam, sgd")
    parser.add_argument("--learning-rate", type=float, default=None, help="optimizer step size")
    parser.add_argument("--batch-size", type=int, default=32, help="samples per step")
    parser.add_argument("--seed", type=int, default=0, help="random seed (reproducible runs)")
    parser.add_argument("--verbose", type=int, choices=(0, 1, 2), default=1, help="progress")
    parser.add_argument(
        "--data",
        metavar="PATH",
        help="a folder with MNIST or Fashion-MNIST in IDX format (the four files, plain or "
        ".gz) to train on instead of the bundled digits",
    )
    parser.add_argument("--save", metavar="PATH", help="save the trained model to this .keras file")
    parser.add_argument(
        "--plot",
        metavar="PATH",
        help="write a PNG of the loss and accuracy per epoch (needs the `plot` extra)",
    )
    args = parser.parse_args(argv)
    if args.plot:
        try:
            _pyplot()  # before training, not after
        except ImportError as error:
            parser.exit(2, f"minikeras: error: {error}\n")
    try:
        (x_train, y_train), (x_test, y_test), line = load_images(args.data)
    except (OSError, ValueError) as error:
        parser.exit(2, f"minikeras: error: {error}\n")
    print(line)

    utils.set_random_seed(args.seed)
    model = build_model(args.model, x_train.shape[1:])
    optimizer = optimizers.get(args.optimizer)
    if args.learning_rate is not None:
        optimizer.learning_rate = args.learning_rate
    model.compile(
        optimizer=optimizer,
        loss=losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    if args.verbose:
        model.summary()
    start = time.perf_counter()
    history = model.fit(
        x_train,
        y_train,
        batch_size=args.batch_size,
        epochs=args.epochs,
        validation_split=0.1,
        verbose=args.verbose,
    )
    seconds = time.perf_counter() - start
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"trained '{args.model}' for {args.epochs} epochs in {seconds:.1f} s")
    print(f"test accuracy: {accuracy:.4f}  (test loss {loss:.4f})")
    if args.save:
        model.save(args.save)
        print(f"saved the model to {args.save}")
    if args.plot:
        plot_history(history, args.plot)
        print(f"wrote the training curves to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
