"""Workload: accuracy, and the time of a whole fit, on real data.

The bundled 8x8 digits (1,437 training and 360 test images) with a 64-128-64-10
MLP and with a 64-64-10 MLP (whose fit is mostly per-step overhead), Adam
1e-3, batch 32, 10 epochs, over 3 seeds; and, when `--mnist DIR`
names a folder of MNIST's IDX files, a 784-256-128-10 MLP on its first
10,000 training and 2,000 test images (skipped without it). Each seed fixes
the initial weights and the one shuffled order of the training set, the same
for every contender, so that they all do the same training; each then reports
its test accuracy and the wall time of its fit (input checks, compilation and
all: what a user waits for). minikeras runs `model.fit(..., shuffle=False)`,
its training step compiled as by default (recorded once, then replayed) and,
as "minikeras eager", with `jit_compile=False`;
numpy, autograd and torch their own loops over the same batches.
"""

import time

import numpy as np

from benchmarks import problems
from benchmarks.reference import Adam, NumpyMLP

CONTENDERS = {
    "numpy": "benchmarks.accuracy:NumpyFit",
    "minikeras": "benchmarks.accuracy:MinikerasFit",
    "minikeras eager": "benchmarks.accuracy:MinikerasEagerFit",
    "autograd": "benchmarks.peer_autograd:Fit",
    "torch": "benchmarks.peer_torch:Fit",
    "keras-jax": "benchmarks.peer_keras:Fit",
    "keras-torch": "benchmarks.peer_keras:Fit",
}
DIGITS = {"dataset": "digits", "layers": [64, 128, 64, 10], "batch": 32, "epochs": 10}
# The small model of the overhead targets: per-step costs dominate its fit.
DIGITS_SMALL = {"dataset": "digits", "layers": [64, 64, 10], "batch": 32, "epochs": 10}
MNIST = {
    "dataset": "mnist",
    "layers": [784, 256, 128, 10],
    "batch": 128,
    "epochs": 10,
    "train_subset": 10000,
}


class NumpyFit:
    """The training loop by hand: `reference.NumpyMLP` and Keras's Adam, then accuracy."""

    def __init__(self, config):
        self.config = config

    def fit(self, seed):
        config = self.config
        (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
        mlp = NumpyMLP(weights)
        optimizer = Adam(mlp.params, problems.LEARNING_RATE)
        slices = problems.batch_slices(len(x_train), config["batch"])
        start = time.perf_counter()
        for _ in range(config["epochs"]):
            for begin, end in slices:
                _, grads = mlp.forward_backward(x_train[begin:end], y_train[begin:end])
                optimizer.apply(grads)
        seconds = time.perf_counter() - start
        accuracy = np.mean(mlp.predict(x_test).argmax(axis=1) == y_test)
        return {"seconds": seconds, "accuracy": float(accuracy)}


class MinikerasFit:
    """`model.fit` as a user calls it (its step compiled), then `predict` for the test accuracy."""

    jit_compile = "auto"

    def __init__(self, config):
        self.config = config

    def fit(self, seed):
        from benchmarks.mlp import minikeras_model
        from minikeras import losses, optimizers

        config = self.config
        (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
        model = minikeras_model(weights)
        model.compile(
            optimizer=optimizers.Adam(learning_rate=problems.LEARNING_RATE),
            loss=losses.SparseCategoricalCrossentropy(from_logits=True),
            jit_compile=self.jit_compile,
        )  # no metrics: the other loops compute none while they train
        start = time.perf_counter()
        model.fit(
            x_train,
            y_train,
            batch_size=config["batch"],
            epochs=config["epochs"],
            shuffle=False,
            verbose=0,
        )
        seconds = time.perf_counter() - start
        logits = model.predict(x_test, verbose=0)
        return {"seconds": seconds, "accuracy": float(np.mean(logits.argmax(axis=1) == y_test))}


class MinikerasEagerFit(MinikerasFit):
    """The same `fit` with `jit_compile=False`: every step eager, nothing replayed."""

    jit_compile = False


def run(suite):
    seeds = list(range(suite.seeds))
    epochs = suite.epochs
    cases = []
    digits = dict(DIGITS, epochs=epochs or DIGITS["epochs"])
    cases.append(
        suite.fit_case(f"digits 64-128-64-10, {digits['epochs']} epochs", digits, CONTENDERS, seeds)
    )
    small = dict(DIGITS_SMALL, epochs=epochs or DIGITS_SMALL["epochs"])
    cases.append(
        suite.fit_case(f"digits 64-64-10, {small['epochs']} epochs", small, CONTENDERS, seeds)
    )
    if suite.mnist:
        mnist = dict(MNIST, epochs=epochs or MNIST["epochs"], mnist_path=suite.mnist)
        name = f"MNIST subset 784-256-128-10, {mnist['epochs']} epochs"
        try:
            problems.load_dataset("mnist", suite.mnist)
        except (OSError, ValueError) as error:
            cases.append({"name": name, "status": "skipped", "reason": str(error)})
        else:
            cases.append(suite.fit_case(name, mnist, CONTENDERS, seeds))
    else:
        cases.append(
            {
                "name": "MNIST subset",
                "status": "skipped",
                "reason": "no --mnist DIR given (minikeras never downloads data)",
            }
        )
    return {"title": "accuracy and whole-fit time (Adam 1e-3)", "unit": "s per fit", "cases": cases}
