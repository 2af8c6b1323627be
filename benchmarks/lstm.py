"""Workload: one training step of the character LSTM of `bench_lstm.py`, with its peers.

Embedding(96, 64), LSTM(128, return_sequences=True), Dense(96) on every step,
on batches of 32 sequences of 50 character ids, float32, Adam. The model, the
hand-written numpy BPTT, the PyTorch step and the check that minikeras and
numpy compute the same loss, gradients and update are `bench_lstm.py`'s own;
this module adds the GEMM floor and the Keras peers. Plain autograd sits this
one out: a 50-step loop of autograd.numpy ops is the engine minikeras replaced
with one primitive and a hand-written BPTT, not a peer a user would pick.
"""

import numpy as np

from benchmarks import scripted
from benchmarks.reference import GemmFloor

CONTENDERS = {
    "gemm floor": "benchmarks.lstm:FloorStep",
    "numpy": "benchmarks.scripted:NumpyStep",
    "minikeras": "benchmarks.scripted:MinikerasStep",
    "torch": "benchmarks.scripted:TorchStep",
    "keras-jax": "benchmarks.peer_keras:LSTMStep",
    "keras-torch": "benchmarks.peer_keras:LSTMStep",
}
NOT_RUN = {"autograd": "a per-time-step loop of autograd ops, not a peer a user would pick"}
TARGET = 1.3


class FloorStep:
    """The LSTM step's matrix products: 2 + 50 forward, 6 + 50 backward, as numpy does them."""

    def __init__(self, script="bench_lstm", seed=0):
        module = scripted.load(script)
        batch, steps, units = module.BATCH, module.STEPS, module.UNITS
        vocabulary, embedding, rows = (
            module.VOCABULARY,
            module.EMBEDDING,
            module.BATCH * module.STEPS,
        )
        rng = np.random.default_rng(seed)

        def matrix(height, width):
            return rng.random((height, width), dtype=np.float32)

        x, kernel = matrix(rows, embedding), matrix(embedding, 4 * units)
        h, recurrent = matrix(batch, units), matrix(units, 4 * units)
        hidden, dense = matrix(rows, units), matrix(units, vocabulary)
        probs, dz = matrix(rows, vocabulary), matrix(batch, 4 * units)
        gates, one_hot = matrix(rows, 4 * units), matrix(vocabulary, rows)
        grad_x = matrix(rows, embedding)
        forward = [(x, kernel)] + [(h, recurrent)] * steps + [(hidden, dense)]
        backward = [(hidden.T, probs), (probs, dense.T)] + [(dz, recurrent.T)] * steps
        backward += [(x.T, gates), (hidden.T, gates), (gates, kernel.T), (one_hot, grad_x)]
        self.floor = GemmFloor(forward, backward)
        self.first_loss = None
        self.flops = self.floor.flops

    def run(self, steps):
        return self.floor.run(steps)


CASE = "Embedding64-LSTM128-Dense96, 50 steps, batch 32"
TITLE = "character LSTM training step (vocabulary 96), Adam"


def run(suite):
    return scripted.run_workload(suite, "bench_lstm", CASE, TITLE, CONTENDERS, NOT_RUN, TARGET)
