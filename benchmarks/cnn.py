"""Workload: one training step of the small CNN of `bench_cnn.py`, with its peers.

Conv2D(32, 3, relu), MaxPooling2D(2), Conv2D(64, 3, relu), MaxPooling2D(2),
Flatten, Dense(128, relu), Dense(10) on 28x28x1 float32 images, batch 64,
Adam. The model, the hand-written numpy step, the PyTorch step and the check
that minikeras and numpy compute the same loss, gradients and update are
`bench_cnn.py`'s own; this module adds the GEMM floor and the Keras peers.
Plain autograd has no convolution of its own worth timing (its `convolve`
goes through scipy, one image and channel at a time), so it sits this one out.
"""

import numpy as np

from benchmarks import scripted
from benchmarks.reference import GemmFloor

CONTENDERS = {
    "gemm floor": "benchmarks.cnn:FloorStep",
    "numpy": "benchmarks.scripted:NumpyStep",
    "minikeras": "benchmarks.scripted:MinikerasStep",
    "torch": "benchmarks.scripted:TorchStep",
    "keras-jax": "benchmarks.peer_keras:CNNStep",
    "keras-torch": "benchmarks.peer_keras:CNNStep",
}
NOT_RUN = {"autograd": "no convolution primitive worth timing in plain autograd"}
TARGET = 1.3


class FloorStep:
    """The CNN step's eleven matrix products, with the numpy step's shapes and layouts."""

    def __init__(self, script="bench_cnn", seed=0):
        batch = scripted.load(script).BATCH
        rng = np.random.default_rng(seed)

        def matrix(rows, columns):
            return rng.random((rows, columns), dtype=np.float32)

        cols1, cols2 = matrix(batch * 26 * 26, 9), matrix(batch * 11 * 11, 288)
        flat, hidden3 = matrix(batch, 1600), matrix(batch, 128)
        kernel1, kernel2, kernel3, kernel4 = (
            matrix(9, 32),
            matrix(288, 64),
            matrix(1600, 128),
            matrix(128, 10),
        )
        grad_logits, grad_hidden3 = matrix(batch, 10), matrix(batch, 128)
        grad_2d, grad_1d = matrix(batch * 11 * 11, 64), matrix(batch * 26 * 26, 32)
        self.floor = GemmFloor(
            [(cols1, kernel1), (cols2, kernel2), (flat, kernel3), (hidden3, kernel4)],
            [
                (hidden3.T, grad_logits),
                (grad_logits, kernel4.T),
                (flat.T, grad_hidden3),
                (grad_hidden3, kernel3.T),
                (cols2.T, grad_2d),
                (grad_2d, kernel2.T),
                (cols1.T, grad_1d),
            ],
        )
        self.first_loss = None
        self.flops = self.floor.flops

    def run(self, steps):
        return self.floor.run(steps)


CASE = "Conv32-Pool-Conv64-Pool-Dense128-Dense10, batch 64"
TITLE = "small CNN training step on 28x28x1, Adam"


def run(suite):
    return scripted.run_workload(suite, "bench_cnn", CASE, TITLE, CONTENDERS, NOT_RUN, TARGET)
