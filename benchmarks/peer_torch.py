"""PyTorch on CPU as a peer: an eager training loop, as a PyTorch user writes it.

Optional: `pip install torch==2.13.0` (a CPU build; a plain `pip install
torch` may pull a multi-GB CUDA build). Without it the suite reports the peer
as skipped. Torch's Adam adds epsilon after the bias correction, Keras's
before: the same work, not the same numbers, so only the first loss is
checked against numpy.
"""

import os
import time

import numpy as np

from benchmarks import problems
from benchmarks.ops import Calls


def load():
    """Imports torch, pinned to the suite's thread count; raises ImportError if missing."""
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    return torch


def version():
    return load().__version__


def mlp_model(torch, weights):
    """An `nn.Sequential` MLP (relu hidden layers) holding `weights` (kernels transposed)."""
    nn = torch.nn
    modules = []
    for index in range(0, len(weights), 2):
        fan_in, fan_out = weights[index].shape
        linear = nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(weights[index].T)))
            linear.bias.copy_(torch.from_numpy(weights[index + 1]))
        modules += [linear, nn.ReLU()]
    return nn.Sequential(*modules[:-1])


class MLPStep:
    """One training step of the MLP: zero_grad, forward, cross-entropy, backward, Adam."""

    def __init__(self, layers, batch, seed=0):
        self.torch = torch = load()
        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.batches = problems.BatchCycle(
            [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches]
        )
        self.model = mlp_model(torch, weights)
        self.loss = torch.nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=problems.LEARNING_RATE, eps=1e-7
        )
        x0, y0 = self.batches.batches[0]
        with torch.no_grad():
            self.first_loss = float(self.loss(self.model(x0), y0))

    def step(self, x, y):
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()

    def run(self, steps):
        return self.batches.time(self.step, steps)


class MLPForward:
    """The MLP's forward pass under `torch.inference_mode()`, as a torch prediction loop runs it.

    The mode is entered once per timed block, around the calls (`with
    torch.inference_mode(): for x in batches: model(x)`), not per call.
    """

    def __init__(self, layers, batch, seed=0):
        self.torch = torch = load()
        batches, weights = problems.inference_problem(layers, batch, seed)
        self.batches = problems.BatchCycle([(torch.from_numpy(x),) for (x,) in batches])
        self.model = mlp_model(torch, weights).eval()
        self.first_loss = None  # the suite compares `result()`

    def result(self):
        with self.torch.inference_mode():
            return self.model(*self.batches.batches[0]).numpy().tolist()

    def run(self, calls):
        with self.torch.inference_mode():
            return self.batches.time(self.model, calls)


class OpCall(Calls):
    """A small op on `OP_SHAPE` tensors, or the 50-op chain with its gradient."""

    def __init__(self, op):
        torch = load()
        a, b = (torch.from_numpy(array) for array in problems.op_operands())
        if op == "chain_grad":
            x = a.clone().requires_grad_(True)

            def call():
                x.grad = None
                problems.chain(x, torch.mul, torch.add, torch.tanh, torch.sum).backward()
                return x.grad

            self.call = call
            return
        functions = {
            "add": torch.add,
            "multiply": torch.mul,
            "matmul": torch.matmul,
            "exp": torch.exp,
            "relu": torch.relu,
            "sum": torch.sum,
        }
        self.call = problems.bind_op(op, functions, a, b)


class Fit:
    """A full training run of the MLP by hand in PyTorch, then its test accuracy."""

    def __init__(self, config):
        self.torch = load()
        self.config = config

    def fit(self, seed):
        torch, config = self.torch, self.config
        (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
        model = mlp_model(torch, weights)
        loss_function = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=problems.LEARNING_RATE, eps=1e-7)
        x, y = torch.from_numpy(x_train), torch.from_numpy(y_train)
        slices = problems.batch_slices(len(x_train), config["batch"])
        start = time.perf_counter()
        for _ in range(config["epochs"]):
            for begin, end in slices:
                optimizer.zero_grad(set_to_none=True)
                loss = loss_function(model(x[begin:end]), y[begin:end])
                loss.backward()
                optimizer.step()
        seconds = time.perf_counter() - start
        with torch.no_grad():
            predicted = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
        return {"seconds": seconds, "accuracy": float(np.mean(predicted == y_test))}
