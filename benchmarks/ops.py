"""Workload: op overhead, µs per call of small ops and of a 50-op chain with its gradient.

The operands are (16, 16) float32, small enough that a call costs its
dispatch, not its arithmetic: this is what a framework adds to numpy per op.
minikeras is timed outside a tape (`ops.add(a, b)` on Tensors), and inside
one with the operand watched (the op is recorded for a gradient). The chain
is 10 blocks of `* 0.9, + 0.1, tanh, * x, + x`, summed, differentiated with
respect to x; numpy's row is the same forward and backward by hand. There is
no GEMM floor here: these ops are not matrix products. Every contender's
result must match numpy's first.
"""

import time

import numpy as np

from benchmarks import problems

OPS = ("add", "multiply", "matmul", "exp", "relu", "sum", "chain_grad")
QUICK_OPS = ("add", "matmul", "chain_grad")
DESCRIPTIONS = {
    "add": "add(a, b)",
    "multiply": "multiply(a, b)",
    "matmul": "matmul(a, b)",
    "exp": "exp(a)",
    "relu": "relu(a)",
    "sum": "sum(a)",
    "chain_grad": "50-op chain + gradient",
}

CONTENDERS = {
    "numpy": "benchmarks.ops:NumpyCall",
    "minikeras": "benchmarks.ops:MinikerasCall",
    "minikeras in tape": "benchmarks.ops:MinikerasRecordedCall",
    "autograd": "benchmarks.peer_autograd:OpCall",
    "torch": "benchmarks.peer_torch:OpCall",
    "keras-jax": "benchmarks.peer_keras:OpCall",
    "keras-torch": "benchmarks.peer_keras:OpCall",
}


class Calls:
    """Times `calls` calls of `self.call`; `result()` is one call's value as a list."""

    def result(self):
        value = self.call()
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value).tolist()

    def run(self, calls):
        call = self.call
        start = time.perf_counter()
        for _ in range(calls):
            call()
        return time.perf_counter() - start


class NumpyCall(Calls):
    def __init__(self, op):
        a, b = problems.op_operands()
        if op == "chain_grad":
            self.call = lambda: problems.chain_gradient_numpy(a)[1]
            return
        functions = {
            "add": np.add,
            "multiply": np.multiply,
            "matmul": np.matmul,
            "exp": np.exp,
            "relu": lambda x: np.maximum(x, 0),
            "sum": np.sum,
        }
        self.call = problems.bind_op(op, functions, a, b)


def minikeras_function(op, a, b):
    from minikeras import ops

    functions = {
        "add": ops.add,
        "multiply": ops.multiply,
        "matmul": ops.matmul,
        "exp": ops.exp,
        "relu": ops.relu,
        "sum": ops.sum,
    }
    return problems.bind_op(op, functions, a, b)


def minikeras_chain_gradient(x):
    from minikeras import GradientTape, ops

    with GradientTape() as tape:
        tape.watch(x)
        total = problems.chain(x, ops.multiply, ops.add, ops.tanh, ops.sum)
    return tape.gradient(total, x)


class MinikerasCall(Calls):
    """The op on Tensors outside any tape (the chain records its own tape)."""

    def __init__(self, op):
        from minikeras import Tensor

        a, b = (Tensor(array) for array in problems.op_operands())
        if op == "chain_grad":
            self.call = lambda: minikeras_chain_gradient(a)
        else:
            self.call = minikeras_function(op, a, b)


class MinikerasRecordedCall(Calls):
    """The op inside a `GradientTape` that watches its operand, so each call is recorded."""

    def __init__(self, op):
        from minikeras import Tensor

        a, b = (Tensor(array) for array in problems.op_operands())
        if op == "chain_grad":
            raise NotImplementedError("the chain is recorded in the 'minikeras' row already")
        self.tensor = a
        self.call = minikeras_function(op, a, b)

    def run(self, calls):
        from minikeras import GradientTape

        call = self.call
        start = time.perf_counter()
        with GradientTape() as tape:  # a fresh tape per block, so it does not grow forever
            tape.watch(self.tensor)
            for _ in range(calls):
                call()
        return time.perf_counter() - start


def run(suite):
    cases = []
    for op in QUICK_OPS if suite.quick else OPS:
        contenders = dict(CONTENDERS)
        if op == "chain_grad":
            del contenders["minikeras in tape"]
        cases.append(
            suite.time_case(
                DESCRIPTIONS[op], {"op": op}, contenders, check="results", unit="µs per call"
            )
        )
    return {
        "title": f"op overhead on {problems.OP_SHAPE} float32",
        "unit": "µs per call",
        "cases": cases,
    }
