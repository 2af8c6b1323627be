"""Plain autograd as a peer: the functional style, with no framework.

A loss is a function of a list of parameters, `autograd.value_and_grad`
differentiates it, and the update is the hand-written Adam of
`benchmarks.reference`. minikeras is built on autograd, so the gap between the
two is what minikeras's layers, tape and variables cost, or save (minikeras
fuses dense + bias + relu and the softmax cross-entropy into single
primitives with hand-written gradients).
"""

import time

import autograd
import autograd.numpy as anp
import numpy as np

from benchmarks import problems
from benchmarks.ops import Calls
from benchmarks.reference import Adam


def version():
    from benchmarks.common import version_of

    return version_of("autograd")


def mlp_loss(params, x, labels):
    """Mean sparse softmax cross-entropy of the MLP's logits, in autograd.numpy."""
    hidden = x
    for index in range(0, len(params) - 2, 2):
        hidden = anp.maximum(anp.dot(hidden, params[index]) + params[index + 1], 0.0)
    logits = anp.dot(hidden, params[-2]) + params[-1]
    shifted = logits - anp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
    return -anp.mean(log_probs[np.arange(len(labels)), labels])


def mlp_predict(params, x):
    hidden = x
    for index in range(0, len(params) - 2, 2):
        hidden = np.maximum(hidden @ params[index] + params[index + 1], 0)
    return hidden @ params[-2] + params[-1]


LOSS_AND_GRADIENT = autograd.value_and_grad(mlp_loss)


class MLPStep:
    """One training step: `value_and_grad` of the loss function, then Adam in place."""

    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.batches = problems.BatchCycle(batches)
        self.params = [np.array(w, copy=True) for w in weights]
        self.optimizer = Adam(self.params, problems.LEARNING_RATE)
        self.first_loss = float(mlp_loss(self.params, *batches[0]))

    def step(self, x, labels):
        loss, grads = LOSS_AND_GRADIENT(self.params, x, labels)
        self.optimizer.apply(grads)
        return loss

    def run(self, steps):
        return self.batches.time(self.step, steps)


class OpCall(Calls):
    """A small op through autograd.numpy on plain arrays, or the chain under `grad`."""

    def __init__(self, op):
        a, b = problems.op_operands()
        if op == "chain_grad":
            gradient = autograd.grad(
                lambda x: problems.chain(x, anp.multiply, anp.add, anp.tanh, anp.sum)
            )
            self.call = lambda: gradient(a)
            return
        functions = {
            "add": anp.add,
            "multiply": anp.multiply,
            "matmul": anp.matmul,
            "exp": anp.exp,
            "relu": lambda x: anp.maximum(x, 0.0),
            "sum": anp.sum,
        }
        self.call = problems.bind_op(op, functions, a, b)


class Fit:
    """A full training run of the MLP in the functional style, then its test accuracy."""

    def __init__(self, config):
        self.config = config

    def fit(self, seed):
        config = self.config
        (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
        params = [np.array(w, copy=True) for w in weights]
        optimizer = Adam(params, problems.LEARNING_RATE)
        slices = problems.batch_slices(len(x_train), config["batch"])
        start = time.perf_counter()
        for _ in range(config["epochs"]):
            for begin, end in slices:
                _, grads = LOSS_AND_GRADIENT(params, x_train[begin:end], y_train[begin:end])
                optimizer.apply(grads)
        seconds = time.perf_counter() - start
        predicted = mlp_predict(params, x_test).argmax(axis=1)
        return {"seconds": seconds, "accuracy": float(np.mean(predicted == y_test))}
