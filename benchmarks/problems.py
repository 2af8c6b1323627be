"""What the suite's workloads compute: seeded data, weights and sizes, shared by every contender.

Every contender, in this process or in a peer's own process, rebuilds its
problem from the same seed with these functions, so that all of them start
from the same weights and see the same batches in the same order.
"""

import time

import numpy as np

from benchmarks.reference import dense_weights

DISTINCT_BATCHES = 8  # cycled, so that no step sees the batch of the step before
LEARNING_RATE = 1e-3

# ----------------------------------------------------------------- MLP step


def mlp_problem(layers, batch, seed=0):
    """Seeded float32 batches with int64 labels, and Glorot-uniform weights.

    Example:
        >>> batches, weights = mlp_problem((4, 3, 2), 5)
        >>> len(batches), batches[0][0].shape, [w.shape for w in weights]
        (8, (5, 4), [(4, 3), (3,), (3, 2), (2,)])
    """
    rng = np.random.default_rng(seed)
    batches = [
        (
            rng.standard_normal((batch, layers[0]), dtype=np.float32),
            rng.integers(0, layers[-1], size=batch),
        )
        for _ in range(DISTINCT_BATCHES)
    ]
    return batches, dense_weights(layers, rng)


def inference_problem(layers, batch, seed=0):
    """`mlp_problem`'s batches without their labels (as 1-tuples), and its weights.

    Example:
        >>> batches, weights = inference_problem((4, 3, 2), 5)
        >>> len(batches), len(batches[0]), batches[0][0].shape
        (8, 1, (5, 4))
    """
    batches, weights = mlp_problem(layers, batch, seed)
    return [(x,) for x, _ in batches], weights


class BatchCycle:
    """Hands out a problem's batches in turn, the same order for every contender."""

    def __init__(self, batches):
        self.batches = batches
        self.index = 0

    def next(self):
        batch = self.batches[self.index % len(self.batches)]
        self.index += 1
        return batch

    def time(self, step, steps):
        """Runs `step(*batch)` on the next `steps` batches; returns the seconds they took."""
        start = time.perf_counter()
        for _ in range(steps):
            step(*self.next())
        return time.perf_counter() - start


# ----------------------------------------------------------------- small ops

OP_SHAPE = (16, 16)
CHAIN_BLOCKS = 10  # five ops a block: * 0.9, + 0.1, tanh, * x, + x
BINARY_OPS = ("add", "multiply", "matmul")


def op_operands(seed=0):
    """Two float32 `OP_SHAPE` arrays in [-1, 1)."""
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1, 1, OP_SHAPE).astype(np.float32) for _ in range(2))


def bind_op(op, functions, a, b):
    """A call without arguments of `functions[op]` on `a` and `b` (on `a` alone if unary)."""
    function = functions[op]
    return (lambda: function(a, b)) if op in BINARY_OPS else (lambda: function(a))


def chain(x, multiply, add, tanh, total):
    """The 50-op chain, written once for any library's functions; returns its sum."""
    y = x
    for _ in range(CHAIN_BLOCKS):
        y = multiply(y, 0.9)
        y = add(y, 0.1)
        y = tanh(y)
        y = multiply(y, x)
        y = add(y, x)
    return total(y)


def chain_gradient_numpy(x):
    """The chain's sum and its gradient with respect to `x`, by hand in numpy."""
    y, saved = x, []
    for _ in range(CHAIN_BLOCKS):
        y = y * 0.9
        y += 0.1
        y = np.tanh(y)
        saved.append((y, None))
        before = y
        y = y * x
        y += x
        saved.append((None, before))
    grad_x = np.zeros_like(x)
    grad = np.ones_like(x)
    for tanh_out, before_times_x in reversed(saved):
        if before_times_x is not None:  # y = before * x + x
            grad_x += grad * (before_times_x + 1.0)
            grad = grad * x
        else:  # y = tanh((y * 0.9) + 0.1)
            grad = grad * (1.0 - tanh_out * tanh_out)
            grad *= 0.9
    grad_x += grad
    return y.sum(), grad_x


# ----------------------------------------------------------------- accuracy


def load_dataset(name, mnist_path=None, train_subset=10000, test_subset=2000):
    """Float32 flat images in [0, 1] and int64 labels: `(x_train, y_train, x_test, y_test)`.

    Args:
        name: "digits" (bundled 8x8 digits) or "mnist" (local IDX files).
        mnist_path: the folder of MNIST's four IDX files, for "mnist".
        train_subset, test_subset: MNIST's first this many images of each split.
    """
    from minikeras import datasets

    if name == "digits":
        (x_train, y_train), (x_test, y_test) = datasets.digits.load_data()
        scale = 16.0
    else:
        (x_train, y_train), (x_test, y_test) = datasets.mnist.load_data(mnist_path)
        x_train, y_train = x_train[:train_subset], y_train[:train_subset]
        x_test, y_test = x_test[:test_subset], y_test[:test_subset]
        scale = 255.0

    def flat(images):
        return (images.reshape(len(images), -1).astype(np.float32) / np.float32(scale)).copy()

    return flat(x_train), y_train.astype(np.int64), flat(x_test), y_test.astype(np.int64)


def fit_problem(config, seed):
    """A seed's shuffled training order and initial weights, for one accuracy run."""
    x_train, y_train, x_test, y_test = load_dataset(
        config["dataset"], config.get("mnist_path"), config.get("train_subset", 10000)
    )
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x_train))
    weights = dense_weights(config["layers"], rng)
    return (x_train[order], y_train[order], x_test, y_test), weights


def batch_slices(samples, batch):
    """The `(start, stop)` of each batch of one epoch, the last one possibly short."""
    return [(start, min(start + batch, samples)) for start in range(0, samples, batch)]
