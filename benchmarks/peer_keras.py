"""Keras 3 as a peer, on the JAX backend or the torch backend, each in its own process.

Optional: `pip install jax jaxlib keras` (and torch for the torch backend).
Keras picks its backend once, at import, from `KERAS_BACKEND`, so the suite
runs each backend in a worker process of its own (`benchmarks.worker`), with
the same thread pinning. A training step is `model.train_on_batch`, the
Keras way to run one step: on JAX it is a jit-compiled (XLA) step, on torch
an eager one. The first call, which compiles, is part of the warm-up.
"""

import time

import numpy as np

from benchmarks import problems
from benchmarks.ops import Calls


def load():
    """Imports keras (its backend chosen by `KERAS_BACKEND`); raises ImportError if missing."""
    import keras

    return keras


def version():
    keras = load()
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return f"keras {keras.__version__}, jax {jax.__version__}"
    if backend == "torch":
        import torch

        return f"keras {keras.__version__}, torch {torch.__version__}"
    return f"keras {keras.__version__}, {backend}"


def pin_backend_threads():
    """The torch backend reads no environment variable for its intra-op threads."""
    keras = load()
    if keras.backend.backend() == "torch":
        from benchmarks import peer_torch

        peer_torch.load()


def compiled_model(keras, model):
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=problems.LEARNING_RATE),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def mlp_model(keras, weights):
    layers = keras.layers
    sizes = [weights[0].shape[0]] + [kernel.shape[1] for kernel in weights[0::2]]
    stack = [layers.Dense(units, activation="relu") for units in sizes[1:-1]]
    model = keras.Sequential([keras.Input((sizes[0],)), *stack, layers.Dense(sizes[-1])])
    model.set_weights(weights)
    return compiled_model(keras, model)


class TrainOnBatch:
    """`model.train_on_batch` over cycled batches; `first_loss` from the initial weights."""

    def __init__(self, model, batches):
        keras = load()
        pin_backend_threads()
        self.model = model
        self.batches = problems.BatchCycle(batches)
        x0, y0 = batches[0]
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.first_loss = float(keras.ops.convert_to_numpy(loss(y0, model(x0))))

    def run(self, steps):
        return self.batches.time(self.model.train_on_batch, steps)


class MLPStep(TrainOnBatch):
    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.mlp_problem(layers, batch, seed)
        super().__init__(mlp_model(load(), weights), batches)


class MLPPredictOnBatch:
    """`model.predict_on_batch(x)` of the MLP (on JAX a jit-compiled predict step)."""

    def __init__(self, layers, batch, seed=0):
        keras = load()
        pin_backend_threads()
        batches, weights = problems.inference_problem(layers, batch, seed)
        self.keras = keras
        self.model = mlp_model(keras, weights)
        self.batches = problems.BatchCycle(batches)
        self.first_loss = None  # the suite compares `result()`
        self.forward = self.model.predict_on_batch

    def result(self):
        output = self.forward(*self.batches.batches[0])
        return np.asarray(self.keras.ops.convert_to_numpy(output), np.float32).tolist()

    def run(self, calls):
        return self.batches.time(self.forward, calls)


class MLPCall(MLPPredictOnBatch):
    """`model(x)` on a numpy batch, as a user calls it: eager backend ops, no jit.

    On JAX each call waits for its output (`block_until_ready`), as a caller
    using it would; on torch the call is outside `torch.no_grad()`, as a
    user writes it (Keras's own `predict` enters it).
    """

    def __init__(self, layers, batch, seed=0):
        super().__init__(layers, batch, seed)
        model = self.model
        if self.keras.backend.backend() == "jax":
            self.forward = lambda x: model(x).block_until_ready()
        else:
            self.forward = model


class CNNStep(TrainOnBatch):
    """The small CNN of `bench_cnn.py`, from the same weights and batches."""

    def __init__(self, script="bench_cnn", seed=0):
        from benchmarks import bench_cnn

        keras = load()
        layers = keras.layers
        batches, weights = bench_cnn.make_problem(seed)
        model = keras.Sequential(
            [
                keras.Input((bench_cnn.IMAGE, bench_cnn.IMAGE, 1)),
                layers.Conv2D(32, 3, activation="relu"),
                layers.MaxPooling2D(2),
                layers.Conv2D(64, 3, activation="relu"),
                layers.MaxPooling2D(2),
                layers.Flatten(),
                layers.Dense(128, activation="relu"),
                layers.Dense(bench_cnn.CLASSES),
            ]
        )
        model.set_weights(weights)
        super().__init__(compiled_model(keras, model), batches)


class LSTMStep(TrainOnBatch):
    """The character LSTM of `bench_lstm.py`, from the same weights and batches."""

    def __init__(self, script="bench_lstm", seed=0):
        from benchmarks import bench_lstm as spec

        keras = load()
        layers = keras.layers
        batches, weights = spec.make_problem(seed)
        model = keras.Sequential(
            [
                keras.Input((spec.STEPS,), dtype="int64"),
                layers.Embedding(spec.VOCABULARY, spec.EMBEDDING),
                layers.LSTM(spec.UNITS, return_sequences=True),
                layers.Dense(spec.VOCABULARY),
            ]
        )
        model.set_weights(weights)
        super().__init__(compiled_model(keras, model), batches)


class OpCall(Calls):
    """A small op through `keras.ops` on backend tensors, eagerly; or the chain's gradient.

    The chain's gradient is taken the backend's own way: `jax.jit(jax.grad(...))`
    on JAX (what Keras's trainer does), torch's autograd on torch.
    """

    def __init__(self, op):
        keras = load()
        pin_backend_threads()
        ops = keras.ops
        a, b = (ops.convert_to_tensor(array) for array in problems.op_operands())
        if op == "chain_grad":
            self.call = self._chain_gradient(keras, a)
        else:
            functions = {
                "add": ops.add,
                "multiply": ops.multiply,
                "matmul": ops.matmul,
                "exp": ops.exp,
                "relu": ops.relu,
                "sum": ops.sum,
            }
            self.call = problems.bind_op(op, functions, a, b)
        self.block = self._blocker(keras)

    @staticmethod
    def _chain_gradient(keras, x):
        ops = keras.ops

        def chain(x):
            return problems.chain(x, ops.multiply, ops.add, ops.tanh, ops.sum)

        if keras.backend.backend() == "jax":
            import jax

            gradient = jax.jit(jax.grad(chain))
            return lambda: gradient(x)

        leaf = x.detach().clone().requires_grad_(True)

        def call():
            leaf.grad = None
            chain(leaf).backward()
            return leaf.grad

        return call

    @staticmethod
    def _blocker(keras):
        # JAX dispatches asynchronously: wait for the last result before reading the clock.
        if keras.backend.backend() == "jax":
            return lambda value: value.block_until_ready()
        return lambda value: value

    def run(self, calls):
        call, value = self.call, None
        start = time.perf_counter()
        for _ in range(calls):
            value = call()
        self.block(value)
        return time.perf_counter() - start


class Fit:
    """`model.fit` of the MLP (compilation included, as a user waits for it), then accuracy."""

    def __init__(self, config):
        self.keras = load()
        pin_backend_threads()
        self.config = config

    def fit(self, seed):
        keras, config = self.keras, self.config
        (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
        model = mlp_model(keras, weights)
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
        logits = keras.ops.convert_to_numpy(model.predict(x_test, verbose=0))
        return {"seconds": seconds, "accuracy": float(np.mean(logits.argmax(axis=1) == y_test))}
