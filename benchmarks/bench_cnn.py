"""One training step of a small CNN: minikeras against hand-written numpy (and PyTorch).

The model: Conv2D(32, 3, relu), MaxPooling2D(2), Conv2D(64, 3, relu),
MaxPooling2D(2), Flatten, Dense(128, relu), Dense(10), on 28x28x1 inputs,
batch 64, float32. The step: forward and SparseCategoricalCrossentropy
(from logits, averaged over the batch) inside a `GradientTape`,
`tape.gradient` of the eight weights, and `Adam.apply`.

The minikeras step is the public API as a user writes it (a `Sequential`, a
loss object, an optimizer). The numpy step does the same arithmetic by hand,
as a careful numpy programmer would: im2col convolutions (the same copies and
one matrix product each), bias and relu in place, max pooling by strided
views, col2im by strided slice-adds, and Keras's Adam in place. PyTorch (CPU,
one thread), if installed, runs the same model as a peer figure. All run
interleaved in one process, in an order that rotates every round, with BLAS
on one thread.

Before timing, the script checks that minikeras and numpy compute the same
loss, the same eight gradients and the same updated weights from the same
weights (and that PyTorch computes the same loss).

Usage (from the repo root):
    python benchmarks/bench_cnn.py [--repeats 300] [--json PATH] [--no-torch] [--profile STEPS]
"""

import os

# BLAS must be pinned to one thread before numpy is first imported.
THREAD_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
for _name in THREAD_ENV_VARS:
    os.environ[_name] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCHMARKS_DIR)
for _path in (REPO_ROOT, BENCHMARKS_DIR):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from bench_mlp_step import blas_thread_report, summarize, versions  # noqa: E402

from benchmarks.common import (  # noqa: E402
    ADAM_STEP_ROWS,
    TapeStep,
    print_stats_table,
    print_step_ratios,
)
from benchmarks.reference import EPSILON, Adam  # noqa: E402
from minikeras import Sequential, layers  # noqa: E402

BATCH, IMAGE, CLASSES = 64, 28, 10
LEARNING_RATE = 1e-3
TARGET_RATIO = 1.3
DISTINCT_BATCHES = 8
WEIGHT_NAMES = ("conv1/kernel", "conv1/bias", "conv2/kernel", "conv2/bias",
                "dense1/kernel", "dense1/bias", "dense2/kernel", "dense2/bias")  # fmt: skip
WEIGHT_SHAPES = ((3, 3, 1, 32), (32,), (3, 3, 32, 64), (64,), (1600, 128), (128,),
                 (128, 10), (10,))  # fmt: skip


# ----------------------------------------------------------------- problem


def make_problem(seed=0):
    """Seeded float32 images, int64 labels, Glorot-uniform weights and small biases."""
    rng = np.random.default_rng(seed)
    batches = [
        (
            rng.standard_normal((BATCH, IMAGE, IMAGE, 1), dtype=np.float32),
            rng.integers(0, CLASSES, size=BATCH),
        )
        for _ in range(DISTINCT_BATCHES)
    ]
    weights = []
    for shape in WEIGHT_SHAPES:
        if len(shape) == 1:
            weights.append(rng.uniform(-0.1, 0.1, shape).astype(np.float32))
            continue
        receptive = math.prod(shape[:-2])
        fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        weights.append(rng.uniform(-limit, limit, shape).astype(np.float32))
    return batches, weights


class MinikerasStep(TapeStep):
    """The step through minikeras's public API (`common.TapeStep`)."""

    def __init__(self, weights):
        model = Sequential(
            [
                layers.Input((IMAGE, IMAGE, 1)),
                layers.Conv2D(32, 3, activation="relu"),
                layers.MaxPooling2D(2),
                layers.Conv2D(64, 3, activation="relu"),
                layers.MaxPooling2D(2),
                layers.Flatten(),
                layers.Dense(128, activation="relu"),
                layers.Dense(CLASSES),
            ]
        )
        super().__init__(model, weights, LEARNING_RATE)


# ----------------------------------------------------------- numpy by hand


def im2col(x, out_size):
    """3x3, stride 1, valid windows of `x` as rows `(batch * out * out, 9 * channels)`."""
    batch, channels = x.shape[0], x.shape[-1]
    if channels == 1:  # tap by tap: whole rows per copy instead of one value
        cols = np.empty((batch, out_size, out_size, 3, 3), x.dtype)
        for i in range(3):
            for j in range(3):
                cols[:, :, :, i, j] = x[:, i : i + out_size, j : j + out_size, 0]
        return cols.reshape(-1, 9)
    view = sliding_window_view(x, (3, 3), axis=(1, 2))  # (batch, out, out, channels, 3, 3)
    return np.ascontiguousarray(view.transpose(0, 1, 2, 4, 5, 3)).reshape(-1, 9 * channels)


def col2im(cols, batch, out_size, channels):
    """The transpose of `im2col`: each window's row added back, tap by tap."""
    cols = cols.reshape(batch, out_size, out_size, 3, 3, channels)
    image = np.zeros((batch, out_size + 2, out_size + 2, channels), cols.dtype)
    for i in range(3):
        for j in range(3):
            image[:, i : i + out_size, j : j + out_size] += cols[:, :, :, i, j]
    return image


def max_pool_2x2(x):
    """2x2 max pooling, stride 2 (an odd last row and column dropped), as 3 maxima of views."""
    half = x.shape[1] // 2
    taps = [x[:, i : 2 * half : 2, j : 2 * half : 2] for i in range(2) for j in range(2)]
    out = taps[0].copy()
    for tap in taps[1:]:
        np.maximum(out, tap, out=out)
    return out, taps


class NumpyStep:
    """The same step written by hand in numpy: float32, in place where natural, Keras's Adam."""

    def __init__(self, weights):
        self.params = [np.array(w, copy=True) for w in weights]
        self.optimizer = Adam(self.params, LEARNING_RATE)
        self.sections = None  # {name: seconds} when timing the sections

    def _mark(self, name, start):
        if self.sections is None:
            return 0.0
        now = time.perf_counter()
        self.sections[name] = self.sections.get(name, 0.0) + now - start
        return now

    def forward_backward(self, x, labels):
        kernel1, bias1, kernel2, bias2, kernel3, bias3, kernel4, bias4 = self.params
        batch, mark, t = x.shape[0], self._mark, time.perf_counter()
        cols1 = im2col(x, 26)
        t = mark("im2col", t)
        hidden1 = (cols1 @ kernel1.reshape(9, 32)).reshape(batch, 26, 26, 32)
        t = mark("GEMM", t)
        hidden1 += bias1
        np.maximum(hidden1, 0, out=hidden1)
        t = mark("bias, relu, masks", t)
        pooled1, taps1 = max_pool_2x2(hidden1)
        t = mark("max pool", t)
        cols2 = im2col(pooled1, 11)
        t = mark("im2col", t)
        hidden2 = (cols2 @ kernel2.reshape(288, 64)).reshape(batch, 11, 11, 64)
        t = mark("GEMM", t)
        hidden2 += bias2
        np.maximum(hidden2, 0, out=hidden2)
        t = mark("bias, relu, masks", t)
        pooled2, taps2 = max_pool_2x2(hidden2)
        t = mark("max pool", t)
        flat = pooled2.reshape(batch, -1)
        hidden3 = flat @ kernel3
        t = mark("GEMM", t)
        hidden3 += bias3
        np.maximum(hidden3, 0, out=hidden3)
        t = mark("bias, relu, masks", t)
        logits = hidden3 @ kernel4
        t = mark("GEMM", t)
        logits += bias4
        rows = np.arange(batch)
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        sums = probs.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(sums[:, 0]) - logits[rows, labels])
        probs /= sums
        probs[rows, labels] -= 1.0
        probs *= 1.0 / batch
        grad_logits = probs
        t = mark("loss, dense biases", t)
        grad_kernel4 = hidden3.T @ grad_logits
        grad_hidden3 = grad_logits @ kernel4.T
        t = mark("GEMM", t)
        grad_bias4 = grad_logits.sum(axis=0)
        grad_hidden3 *= hidden3 > 0
        grad_bias3 = grad_hidden3.sum(axis=0)
        t = mark("loss, dense biases", t)
        grad_kernel3 = flat.T @ grad_hidden3
        grad_flat = grad_hidden3 @ kernel3.T
        t = mark("GEMM", t)
        grad_hidden2 = _pool_backward(grad_flat.reshape(pooled2.shape), pooled2, taps2, hidden2)
        t = mark("max pool", t)
        grad_hidden2 *= hidden2 > 0
        grad_2d = grad_hidden2.reshape(-1, 64)
        grad_bias2 = grad_2d.sum(axis=0)
        t = mark("bias, relu, masks", t)
        grad_kernel2 = (cols2.T @ grad_2d).reshape(3, 3, 32, 64)
        grad_cols2 = grad_2d @ kernel2.reshape(288, 64).T
        t = mark("GEMM", t)
        grad_pooled1 = col2im(grad_cols2, batch, 11, 32)
        t = mark("col2im", t)
        grad_hidden1 = _pool_backward(grad_pooled1, pooled1, taps1, hidden1)
        t = mark("max pool", t)
        grad_hidden1 *= hidden1 > 0
        grad_1d = grad_hidden1.reshape(-1, 32)
        grad_bias1 = grad_1d.sum(axis=0)
        t = mark("bias, relu, masks", t)
        grad_kernel1 = (cols1.T @ grad_1d).reshape(3, 3, 1, 32)
        mark("GEMM", t)
        grads = [grad_kernel1, grad_bias1, grad_kernel2, grad_bias2,
                 grad_kernel3, grad_bias3, grad_kernel4, grad_bias4]  # fmt: skip
        return loss, grads

    def update(self, grads):
        """Keras's Adam, in place: `reference.Adam`, as in the suite and bench_fit."""
        start = time.perf_counter()
        self.optimizer.apply(grads)
        self._mark("Adam", start)

    def timed_step(self, x, labels, clock=time.perf_counter):
        t0 = clock()
        loss, grads = self.forward_backward(x, labels)
        t1 = clock()
        self.update(grads)
        del loss, grads
        t2 = clock()
        return {"forward_backward": t1 - t0, "update": t2 - t1, "step": t2 - t0}


def _pool_backward(grad, pooled, taps, hidden):
    """Each window's gradient to the positions holding its maximum."""
    tiled = hidden.shape[1] % 2 == 0  # every position in a window: no zeros needed
    dx = (np.empty if tiled else np.zeros)(hidden.shape, grad.dtype)
    half = pooled.shape[1]
    hit = np.empty(pooled.shape, bool)
    for (i, j), tap in zip(((0, 0), (0, 1), (1, 0), (1, 1)), taps):
        np.equal(tap, pooled, out=hit)
        np.multiply(grad, hit, out=dx[:, i : 2 * half : 2, j : 2 * half : 2])
    return dx


# ------------------------------------------------------------------ torch


class TorchStep:
    """The same model in PyTorch (NCHW inside), one thread, torch's Adam with eps 1e-7.

    A peer figure, not a check of the update: torch adds epsilon after the
    bias correction, Keras before.
    """

    def __init__(self, torch, weights):
        self.torch = torch
        nn = torch.nn
        self.model = nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, CLASSES),
        )  # fmt: skip
        kernel1, bias1, kernel2, bias2, kernel3, bias3, kernel4, bias4 = weights
        # NHWC kernels to OIHW; the flattened features come in (c, h, w) order, not (h, w, c).
        kernel3 = kernel3.reshape(5, 5, 64, 128).transpose(3, 2, 0, 1).reshape(128, 1600)
        values = [kernel1.transpose(3, 2, 0, 1), bias1, kernel2.transpose(3, 2, 0, 1), bias2,
                  kernel3, bias3, kernel4.T, bias4]  # fmt: skip
        with torch.no_grad():
            for parameter, value in zip(self.model.parameters(), values):
                parameter.copy_(torch.from_numpy(np.ascontiguousarray(value)))
        self.loss = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=LEARNING_RATE, eps=EPSILON)

    def inputs(self, x, labels):
        torch = self.torch
        return torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(labels)

    def loss_of(self, x, labels):
        with self.torch.no_grad():
            return float(
                self.loss(self.model(self.inputs(x, labels)[0]), self.inputs(x, labels)[1])
            )

    def timed_step(self, x, labels, clock=time.perf_counter):
        t0 = clock()
        images, targets = self.inputs(x, labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss(self.model(images), targets)
        t1 = clock()
        loss.backward()
        t2 = clock()
        self.optimizer.step()
        t3 = clock()
        return {"forward": t1 - t0, "gradient": t2 - t1, "update": t3 - t2, "step": t3 - t0}


def load_torch(wanted):
    if not wanted:
        return None
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


# ----------------------------------------------------------------- checks


def check_same_arithmetic(weights, x, labels, torch):
    """Asserts minikeras and numpy give the same loss, gradients and updated weights."""
    mk_step, np_step = MinikerasStep(weights), NumpyStep(weights)
    mk_loss, mk_grads = mk_step.forward_backward(x, labels)
    np_loss, np_grads = np_step.forward_backward(x, labels)
    assert mk_loss.dtype == np.float32 and np_loss.dtype == np.float32, "loss must be float32"
    np.testing.assert_allclose(mk_loss.numpy(), np_loss, rtol=1e-5, err_msg="loss")
    for name, mk_grad, np_grad in zip(WEIGHT_NAMES, mk_grads, np_grads):
        assert mk_grad.dtype == np.float32 and np_grad.dtype == np.float32, name
        scale = float(np.abs(np_grad).max())
        np.testing.assert_allclose(
            mk_grad.numpy(), np_grad, rtol=1e-4, atol=1e-5 * scale, err_msg=f"grad {name}"
        )
    mk_step.update(mk_grads)
    np_step.update([g.copy() for g in np_grads])
    for name, variable, param in zip(WEIGHT_NAMES, mk_step.variables, np_step.params):
        assert variable.dtype == np.float32, name
        np.testing.assert_allclose(variable.numpy(), param, rtol=1e-5, atol=1e-6, err_msg=name)
    checks = {"loss": float(np_loss)}
    if torch is not None:
        checks["torch_loss"] = TorchStep(torch, weights).loss_of(x, labels)
        np.testing.assert_allclose(checks["torch_loss"], np_loss, rtol=1e-5, err_msg="torch")
    return checks


# ----------------------------------------------------------------- timing


def time_steps(weights, batches, repeats, warmup, torch):
    """Runs the contenders interleaved, the order rotating every round; returns durations."""
    contenders = [("minikeras", MinikerasStep(weights)), ("numpy", NumpyStep(weights))]
    if torch is not None:
        contenders.append(("torch", TorchStep(torch, weights)))
    samples = {}
    gc.collect()
    for round_index in range(warmup + repeats):
        x, labels = batches[round_index % len(batches)]
        shift = round_index % len(contenders)
        for name, contender in contenders[shift:] + contenders[:shift]:
            phases = contender.timed_step(x.copy(), labels.copy())
            if round_index >= warmup:
                for phase, seconds in phases.items():
                    samples.setdefault(f"{name}_{phase}", []).append(seconds)
    return samples


def numpy_sections(weights, batches, steps=40):
    """Milliseconds per step of each kind of work in the numpy step (where the time goes)."""
    step = NumpyStep(weights)
    for index in range(5):
        step.timed_step(*batches[index % len(batches)])
    step.sections = {}
    for index in range(steps):
        step.timed_step(*batches[index % len(batches)])
    return {name: seconds / steps * 1e3 for name, seconds in step.sections.items()}


def profile_minikeras(weights, batches, steps):
    """Prints cProfile's top functions for `steps` minikeras steps."""
    import cProfile
    import pstats

    step = MinikerasStep(weights)
    for index in range(5):
        step.timed_step(*batches[index % len(batches)])
    profiler = cProfile.Profile()
    profiler.enable()
    for index in range(steps):
        step.timed_step(*batches[index % len(batches)])
    profiler.disable()
    print(f"\ncProfile of {steps} minikeras steps (tottime includes BLAS inside primitives):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


# ----------------------------------------------------------------- report


def print_report(args, info, threads, stats, ratios, sections, checks, torch):
    print(
        "minikeras CNN training step: Conv2D(32,3,relu) MaxPool2 Conv2D(64,3,relu) MaxPool2 "
        f"Flatten Dense(128,relu) Dense(10); 28x28x1, batch {BATCH}, float32, Adam"
    )
    print(
        f"python {info['python']}, numpy {info['numpy']}, autograd {info['autograd']}, "
        f"minikeras {info['minikeras']}, torch {torch.__version__ if torch else 'not used'}, "
        f"{info['cpu_count']} CPUs"
    )
    env = ", ".join(f"{name}={value}" for name, value in threads["env"].items())
    print(f"BLAS threads: {env}; OpenBLAS reports {threads['openblas_num_threads']} thread(s)")
    torch_check = f", torch loss {checks['torch_loss']:.5f}" if "torch_loss" in checks else ""
    print(
        f"{args.repeats} interleaved rounds after {args.warmup} warm-up; checked first: same "
        f"loss ({checks['loss']:.5f}{torch_check}), gradients and Adam update (rtol 1e-4)"
    )
    print()
    print_stats_table(ADAM_STEP_ROWS, stats)
    print()
    print_step_ratios(ratios, TARGET_RATIO)
    print()
    total = sum(sections.values())
    print(f"where the numpy step's time goes ({total:.2f} ms, sections timed apart):")
    for name, millis in sorted(sections.items(), key=lambda item: -item[1]):
        print(f"  {name:<22}{millis:>7.2f} ms  {100 * millis / total:>5.1f}%")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=300, help="timed rounds (default 300)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed rounds first (default 10)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    parser.add_argument(
        "--profile", type=int, metavar="STEPS", default=0, help="cProfile this many minikeras steps"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0:
        parser.error("--repeats must be positive, --warmup non-negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    threads = blas_thread_report()
    info = versions()
    torch = load_torch(not args.no_torch)
    batches, weights = make_problem()
    checks = check_same_arithmetic(weights, *batches[0], torch)

    samples = time_steps(weights, batches, args.repeats, args.warmup, torch)
    stats = {key: summarize(values) for key, values in samples.items()}
    medians = {key: value["median_us"] for key, value in stats.items()}
    paired = np.asarray(samples["minikeras_step"]) / np.asarray(samples["numpy_step"])
    ratios = {
        "minikeras_over_numpy": medians["minikeras_step"] / medians["numpy_step"],
        "paired_median": float(np.median(paired)),
        "paired_p25": float(np.percentile(paired, 25)),
        "paired_p75": float(np.percentile(paired, 75)),
        "overhead_us": medians["minikeras_step"] - medians["numpy_step"],
        "target": TARGET_RATIO,
    }
    if "torch_step" in medians:
        ratios["torch_over_numpy"] = medians["torch_step"] / medians["numpy_step"]
    sections = numpy_sections(weights, batches)
    print_report(args, info, threads, stats, ratios, sections, checks, torch)

    if args.json:
        record = {
            "benchmark": "cnn_step",
            "config": {
                "batch": BATCH,
                "image": IMAGE,
                "repeats": args.repeats,
                "warmup": args.warmup,
                "learning_rate": LEARNING_RATE,
                "dtype": "float32",
                "distinct_batches": DISTINCT_BATCHES,
            },  # fmt: skip
            "versions": {**info, "torch": torch.__version__ if torch else None},
            "threads": threads,
            "checks": checks,
            "stats_us": stats,
            "ratios": ratios,
            "numpy_sections_ms": sections,
            "samples_us": {key: [v * 1e6 for v in values] for key, values in samples.items()},
        }
        directory = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(directory, exist_ok=True)
        with open(args.json, "w") as file:
            json.dump(record, file, indent=1)
        print(f"\nwrote {args.json}")

    if args.profile:
        profile_minikeras(weights, batches, args.profile)


if __name__ == "__main__":
    main()
