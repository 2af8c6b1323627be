"""Workload: the forward pass of an MLP (inference), minikeras against numpy and the peers.

784-256-128-10 and the 64-64-10 MLP of the bundled digits (relu, relu,
linear), float32, batches of 1, 32 and 128: the logits of one batch, nothing
kept for a gradient.

minikeras runs it three ways on the same `Sequential` of `Dense` layers,
called on numpy batches outside any tape: `model(x)` and `predict_on_batch(x)`,
which replay the model's recorded forward pass (`Program.infer`, without the
Python of the layer calls), and `model(x)` on the model compiled with
`jit_compile=False`, which is eager as before the replay existed (the
before-figure; `predict_on_batch` eager is a row too). numpy is
`reference.NumpyMLP.predict`: one new array per layer, bias and relu added in
place. The GEMM floor is the three matrix products alone, into preallocated
outputs. Before timing, the minikeras rows must give numpy's logits on every
batch (rtol 1e-5), the replayed ones the eager call's bit for bit, and the
replayed rows must really replay (`Program.infer` counted) where the eager ones
must not; every contender, peers included, must give numpy's logits on the
first batch (the suite's result check).
"""

import numpy as np

from benchmarks import problems
from benchmarks.reference import NumpyMLP, assert_same, mlp_floor

ARCHITECTURES = {"784-256-128-10": (784, 256, 128, 10), "64-64-10": (64, 64, 10)}
BATCH_SIZES = (1, 32, 128)

CONTENDERS = {
    "gemm floor": "benchmarks.inference:FloorForward",
    "numpy": "benchmarks.inference:NumpyForward",
    "minikeras model(x)": "benchmarks.inference:MinikerasCall",
    "minikeras predict_on_batch": "benchmarks.inference:MinikerasPredictOnBatch",
    "minikeras eager": "benchmarks.inference:MinikerasEagerCall",
    "minikeras predict_on_batch eager": "benchmarks.inference:MinikerasEagerPredictOnBatch",
    "torch": "benchmarks.peer_torch:MLPForward",
    "keras-jax model(x)": "benchmarks.peer_keras:MLPCall",
    "keras-jax predict_on_batch": "benchmarks.peer_keras:MLPPredictOnBatch",
    "keras-torch model(x)": "benchmarks.peer_keras:MLPCall",
    "keras-torch predict_on_batch": "benchmarks.peer_keras:MLPPredictOnBatch",
}
CHECKED_CALLS = 4  # replayed calls counted per minikeras row, after its recording


def as_numpy(output):
    """A Tensor's (or torch tensor's) array; anything else as it is."""
    return output.numpy() if hasattr(output, "numpy") else output


class Forward:
    """`forward(x)` over cycled batches; `result()` is its output on the first batch."""

    def __init__(self, batches, forward):
        self.batches = problems.BatchCycle(batches)
        self.forward = forward
        self.first_loss = None  # the suite compares `result()` instead

    def to_numpy(self, output):
        return as_numpy(output)

    def result(self):
        output = self.forward(*self.batches.batches[0])
        return np.asarray(self.to_numpy(output), np.float32).tolist()

    def run(self, calls):
        return self.batches.time(self.forward, calls)


class NumpyForward(Forward):
    """The forward pass by hand: `reference.NumpyMLP.predict`."""

    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.inference_problem(layers, batch, seed)
        super().__init__(batches, NumpyMLP(weights).predict)


class FloorForward:
    """The forward pass's three matrix products alone, on the first batch's shapes."""

    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.inference_problem(layers, batch, seed)
        self.floor = mlp_floor(weights, batches[0][0], backward=False)
        self.first_loss = None
        self.flops = self.floor.flops

    def result(self):
        self.floor.run_forward()
        return None  # products without bias or relu: nothing to compare

    def run(self, calls):
        return self.floor.run(calls)


def minikeras_model(layers, batch, seed, **compile_arguments):
    """The `mlp.minikeras_model` Sequential and the batches; compiled if arguments are given."""
    from benchmarks.mlp import minikeras_model as sequential

    batches, weights = problems.inference_problem(layers, batch, seed)
    model = sequential(weights)
    if compile_arguments:
        model.compile(**compile_arguments)
    return model, batches


class MinikerasCall(Forward):
    """`model(x)` on a numpy batch, outside any tape: replayed from the third call on."""

    def __init__(self, layers, batch, seed=0):
        self.model, batches = minikeras_model(layers, batch, seed)
        super().__init__(batches, self.model)


class MinikerasPredictOnBatch(Forward):
    """`model.predict_on_batch(x)`: the replayed forward pass, as a numpy array."""

    def __init__(self, layers, batch, seed=0):
        self.model, batches = minikeras_model(layers, batch, seed)
        super().__init__(batches, self.model.predict_on_batch)


class MinikerasEagerCall(Forward):
    """`model(x)` with the model compiled `jit_compile=False`: every call eager."""

    def __init__(self, layers, batch, seed=0):
        self.model, batches = minikeras_model(layers, batch, seed, jit_compile=False)
        super().__init__(batches, self.model)


class MinikerasEagerPredictOnBatch(Forward):
    """`predict_on_batch(x)` with the model compiled `jit_compile=False`: eager."""

    def __init__(self, layers, batch, seed=0):
        self.model, batches = minikeras_model(layers, batch, seed, jit_compile=False)
        super().__init__(batches, self.model.predict_on_batch)


def count_replays(forward, batches):
    """`forward` on `batches` after three warm-up calls, and how often it ran `Program.infer`."""
    from minikeras.engine.replay import Program

    for _ in range(3):  # eager, recorded, then replayed
        forward(batches[0])
    original, count = Program.infer, [0]

    def counted(self, *args):
        count[0] += 1
        return original(self, *args)

    Program.infer = counted
    try:
        outputs = [np.asarray(as_numpy(forward(x))) for x in batches]
    finally:
        Program.infer = original
    return outputs, count[0]


def check_minikeras_matches_numpy(layers, batch):
    """Every minikeras row gives numpy's logits; the replayed rows replay, bit for bit eager's."""
    batches = [x for (x,) in problems.inference_problem(layers, batch)[0]][:CHECKED_CALLS]
    numpy_forward = NumpyForward(layers, batch).forward
    expected = [numpy_forward(x) for x in batches]
    rows = {
        "model(x)": MinikerasCall,
        "predict_on_batch": MinikerasPredictOnBatch,
        "eager": MinikerasEagerCall,
        "predict_on_batch eager": MinikerasEagerPredictOnBatch,
    }
    outputs, replays = {}, {}
    for name, factory in rows.items():
        outputs[name], replays[name] = count_replays(factory(layers, batch).forward, batches)
        pairs = [
            (f"batch {index}", ours, reference)
            for index, (ours, reference) in enumerate(zip(outputs[name], expected))
        ]
        assert_same(pairs, rtol=1e-5, atol_scale=1e-6, what=f"minikeras {name} vs numpy:")
    wanted = {name: 0 if "eager" in name else len(batches) for name in rows}
    assert replays == wanted, f"Program.infer calls per row: {replays}, expected {wanted}"
    for name in ("model(x)", "predict_on_batch"):
        for index, (replayed, eager) in enumerate(zip(outputs[name], outputs["eager"])):
            assert np.array_equal(replayed, eager), (
                f"minikeras {name} differs from the eager call on batch {index}: largest "
                f"difference {np.abs(replayed - eager).max()}"
            )
    return {"batches": len(batches), "replays": replays, "replayed_equals_eager": True}


def run(suite):
    """Times every (architecture, batch) case the suite's flags select."""
    architectures = ["784-256-128-10"] if suite.quick else list(ARCHITECTURES)
    batch_sizes = suite.batch_sizes or ([32] if suite.quick else list(BATCH_SIZES))
    cases = []
    for name in architectures:
        layers = ARCHITECTURES[name]
        for batch in batch_sizes:
            cases.append(
                suite.time_case(
                    f"{name}, batch {batch}",
                    {"layers": list(layers), "batch": batch},
                    CONTENDERS,
                    check=lambda layers=layers, batch=batch: check_minikeras_matches_numpy(
                        layers, batch
                    ),
                    compare_results=True,
                    unit="µs per call",
                )
            )
    return {
        "title": "MLP forward pass (inference), float32",
        "unit": "µs per call",
        "cases": cases,
    }
