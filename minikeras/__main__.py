"""The main job: train a model on the bundled digits (`minikeras` or `python -m minikeras`)."""

import argparse
import time

from minikeras import Sequential, datasets, layers, losses, optimizers, utils

__all__ = ["build_model", "main"]

MODELS = {
    "mlp": lambda: [
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.1),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ],
    "small": lambda: [layers.Dense(32, activation="relu"), layers.Dense(10)],
    "linear": lambda: [layers.Dense(10)],
    "cnn": lambda: [
        layers.Reshape((8, 8, 1)),
        layers.Conv2D(16, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ],
}
# Models that see the 8x8 images as they are; the others see 64 flat pixels.
IMAGE_MODELS = {"cnn"}


def build_model(name):
    """Makes one of the main job's models for 8x8 digit images.

    Args:
        name: `"mlp"` (64-128-64-10), `"small"` (64-32-10), `"linear"`, or
            `"cnn"` (two 3x3 convolutions with max pooling, then 64-10).

    Returns:
        A `Sequential` model producing 10 logits.

    Raises:
        KeyError: for an unknown name.

    Example:
        >>> build_model("small").count_params()
        2410
    """
    flatten = [] if name in IMAGE_MODELS else [layers.Flatten()]
    return Sequential([layers.Input((8, 8)), *flatten, *MODELS[name]()], name=name)


def main(argv=None):
    """Trains a model on the bundled 8x8 digits and reports its test accuracy.

    Args:
        argv: command-line arguments (defaults to `sys.argv[1:]`).

    Returns:
        The exit code, 0.

    Example:
        >>> main(["--model", "linear", "--epochs", "1", "--verbose", "0"])  # doctest: +ELLIPSIS
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
    args = parser.parse_args(argv)

    utils.set_random_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = datasets.digits.load_data()
    print(f"digits: {len(x_train)} training and {len(x_test)} test images of 8x8 pixels")
    x_train, x_test = x_train.astype("float32") / 16.0, x_test.astype("float32") / 16.0

    model = build_model(args.model)
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
    model.fit(
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
