"""One training step of a character-level LSTM: minikeras against hand-written numpy (and PyTorch).

The model: Embedding(96, 64), LSTM(128, return_sequences=True), Dense(96) on
every step (next-character logits), on batches of 32 sequences of 50 ids,
float32. The step: forward and SparseCategoricalCrossentropy (from logits,
averaged over all 32 x 50 predictions) inside a `GradientTape`,
`tape.gradient` of the six weights, and `Adam.apply`.

The minikeras step is the public API as a user writes it (a `Sequential`, a
loss object, an optimizer). The numpy step does the same arithmetic by hand,
as a careful numpy programmer would: the embedding gather, the input
projection of all steps in one product, the four gate products of a step in
one product, activations in place, the softmax gradient in the softmax's
buffer, backpropagation through time, the recurrent and input kernels'
gradients in one product each, the embedding gradient as a one-hot product,
and Keras's Adam in place. PyTorch (CPU, one thread), if installed, runs the
same model as a peer figure. All run interleaved in one process, in an order
that rotates every round, with BLAS on one thread.

Before timing, the script checks that minikeras and numpy compute the same
loss, the same six gradients and the same updated weights from the same
weights (and that PyTorch computes the same loss and gradients).

Usage (from the repo root):
    python benchmarks/bench_lstm.py [--repeats 300] [--json PATH] [--no-torch] [--profile STEPS]
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

VOCABULARY, EMBEDDING, UNITS, STEPS, BATCH = 96, 64, 128, 50, 32
LEARNING_RATE = 1e-3
TARGET_RATIO = 1.3
DISTINCT_BATCHES = 8
WEIGHT_NAMES = ("embeddings", "lstm/kernel", "lstm/recurrent_kernel", "lstm/bias",
                "dense/kernel", "dense/bias")  # fmt: skip


# ----------------------------------------------------------------- problem


def make_problem(seed=0):
    """Seeded int64 id sequences, their next ids, and Keras-like initial weights."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(DISTINCT_BATCHES):
        text = rng.integers(0, VOCABULARY, size=(BATCH, STEPS + 1))
        batches.append((text[:, :-1].copy(), text[:, 1:].copy()))

    def glorot(fan_in, fan_out):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)

    recurrent, _ = np.linalg.qr(rng.standard_normal((4 * UNITS, UNITS)))
    bias = rng.uniform(-0.1, 0.1, 4 * UNITS).astype(np.float32)
    bias[UNITS : 2 * UNITS] += 1.0  # unit_forget_bias
    weights = [
        rng.uniform(-0.05, 0.05, (VOCABULARY, EMBEDDING)).astype(np.float32),
        glorot(EMBEDDING, 4 * UNITS),
        recurrent.T.astype(np.float32, order="C"),  # C-ordered like every other weight
        bias,
        glorot(UNITS, VOCABULARY),
        rng.uniform(-0.1, 0.1, VOCABULARY).astype(np.float32),
    ]
    return batches, weights


class MinikerasStep(TapeStep):
    """The step through minikeras's public API (`common.TapeStep`)."""

    def __init__(self, weights):
        model = Sequential(
            [
                layers.Input((STEPS,), dtype="int64"),
                layers.Embedding(VOCABULARY, EMBEDDING),
                layers.LSTM(UNITS, return_sequences=True),
                layers.Dense(VOCABULARY),
            ]
        )
        super().__init__(model, weights, LEARNING_RATE)


# ----------------------------------------------------------- numpy by hand


def sigmoid_in_place(x):
    """`1 / (1 + exp(-x))` as `0.5 tanh(x / 2) + 0.5`, in `x`'s buffer."""
    x *= 0.5
    np.tanh(x, out=x)
    x *= 0.5
    x += 0.5


class NumpyStep:
    """The same step written by hand in numpy: float32, time-major, in place where natural.

    Time-major throughout: the logits' rows are in (time, batch) order, so the
    Dense gradient arrives at the recurrence without a transpose (the mean
    loss does not care about the order of its terms).
    """

    def __init__(self, weights):
        self.params = [np.array(value, copy=True) for value in weights]
        self.optimizer = Adam(self.params, LEARNING_RATE)
        self.sections = None  # {name: seconds}, when timing sections

    def _mark(self, name, since):
        now = time.perf_counter()
        if self.sections is not None:
            self.sections[name] = self.sections.get(name, 0.0) + now - since
        return now

    def forward_backward(self, ids, targets):
        embeddings, kernel, recurrent_kernel, bias, dense_kernel, dense_bias = self.params
        steps, batch, units = ids.shape[1], ids.shape[0], UNITS
        rows = steps * batch
        mark = time.perf_counter()
        ids_tm = ids.T.reshape(-1)  # (time, batch) order
        x = np.take(embeddings, ids_tm, axis=0)  # (rows, embedding)
        gates = (x @ kernel).reshape(steps, batch, 4 * units)
        gates += bias
        mark = self._mark("embedding + input projection", mark)

        h = np.zeros((steps + 1, batch, units), np.float32)
        c = np.zeros((steps + 1, batch, units), np.float32)
        tanh_c = np.empty((steps, batch, units), np.float32)
        scratch = np.empty((batch, 4 * units), np.float32)
        for t in range(steps):
            z = gates[t]
            z += np.matmul(h[t], recurrent_kernel, out=scratch)
            sigmoid_in_place(z[:, : 2 * units])
            np.tanh(z[:, 2 * units : 3 * units], out=z[:, 2 * units : 3 * units])
            sigmoid_in_place(z[:, 3 * units :])
            i, f = z[:, :units], z[:, units : 2 * units]
            g, o = z[:, 2 * units : 3 * units], z[:, 3 * units :]
            np.multiply(f, c[t], out=c[t + 1])
            c[t + 1] += i * g
            np.tanh(c[t + 1], out=tanh_c[t])
            np.multiply(o, tanh_c[t], out=h[t + 1])
        mark = self._mark("LSTM forward loop", mark)

        hidden = h[1:].reshape(rows, units)
        logits = hidden @ dense_kernel
        logits += dense_bias
        labels = targets.T.reshape(-1)
        every = np.arange(rows)
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        sums = probs.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(sums[:, 0]) - logits[every, labels])
        probs /= sums
        probs[every, labels] -= 1.0
        probs *= 1.0 / rows
        grad_dense_kernel = hidden.T @ probs
        grad_dense_bias = probs.sum(axis=0)
        grad_h = (probs @ dense_kernel.T).reshape(steps, batch, units)
        mark = self._mark("Dense + loss, both ways", mark)

        grad_gates = np.empty_like(gates)
        dh = np.zeros((batch, units), np.float32)
        dc = np.zeros((batch, units), np.float32)
        through = np.empty((batch, units), np.float32)
        recurrent_t = recurrent_kernel.T
        for t in reversed(range(steps)):
            dh += grad_h[t]
            z, dz = gates[t], grad_gates[t]
            i, f = z[:, :units], z[:, units : 2 * units]
            g, o = z[:, 2 * units : 3 * units], z[:, 3 * units :]
            di, df = dz[:, :units], dz[:, units : 2 * units]
            dg, do = dz[:, 2 * units : 3 * units], dz[:, 3 * units :]
            np.multiply(dh, tanh_c[t], out=do)
            do *= o * (1.0 - o)
            np.multiply(dh, o, out=through)
            through *= 1.0 - tanh_c[t] * tanh_c[t]
            dc += through
            np.multiply(dc, g, out=di)
            di *= i * (1.0 - i)
            np.multiply(dc, i, out=dg)
            dg *= 1.0 - g * g
            np.multiply(dc, c[t], out=df)
            df *= f * (1.0 - f)
            dc *= f
            np.matmul(dz, recurrent_t, out=dh)
        mark = self._mark("LSTM backward loop (BPTT)", mark)

        flat_gates = grad_gates.reshape(rows, 4 * units)
        grad_kernel = x.T @ flat_gates
        grad_recurrent = h[:-1].reshape(rows, units).T @ flat_gates
        grad_bias = flat_gates.sum(axis=0)
        grad_x = flat_gates @ kernel.T
        mark = self._mark("LSTM weight gradients", mark)
        one_hot = (np.arange(VOCABULARY)[:, None] == ids_tm).astype(np.float32)
        grad_embeddings = one_hot @ grad_x
        self._mark("embedding gradient", mark)
        grads = [grad_embeddings, grad_kernel, grad_recurrent, grad_bias,
                 grad_dense_kernel, grad_dense_bias]  # fmt: skip
        return loss, grads

    def update(self, grads):
        """Keras's Adam, in place: `reference.Adam`, as in the suite and bench_fit."""
        mark = time.perf_counter()
        self.optimizer.apply(grads)
        self._mark("Adam", mark)

    def timed_step(self, ids, targets, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included)."""
        t0 = clock()
        loss, grads = self.forward_backward(ids, targets)
        t1 = clock()
        self.update(grads)
        del loss, grads
        t2 = clock()
        return {"forward_backward": t1 - t0, "update": t2 - t1, "step": t2 - t0}


# ------------------------------------------------------------------ torch


class TorchStep:
    """The same model in PyTorch, one thread, torch's Adam with eps 1e-7.

    A peer figure: torch's LSTM has Keras's gate order (i, f, g, o) with two
    biases (the second is set to zero); its Adam adds epsilon after the bias
    correction, Keras before, so the updates differ in the last digits.
    """

    def __init__(self, torch, weights):
        self.torch = torch
        nn = torch.nn
        self.embedding = nn.Embedding(VOCABULARY, EMBEDDING)
        self.lstm = nn.LSTM(EMBEDDING, UNITS, batch_first=True)
        self.dense = nn.Linear(UNITS, VOCABULARY)
        embeddings, kernel, recurrent_kernel, bias, dense_kernel, dense_bias = weights
        values = {
            self.embedding.weight: embeddings,
            self.lstm.weight_ih_l0: kernel.T,
            self.lstm.weight_hh_l0: recurrent_kernel.T,
            self.lstm.bias_ih_l0: bias,
            self.lstm.bias_hh_l0: np.zeros_like(bias),
            self.dense.weight: dense_kernel.T,
            self.dense.bias: dense_bias,
        }
        with torch.no_grad():
            for parameter, value in values.items():
                parameter.copy_(torch.from_numpy(np.ascontiguousarray(value)))
        self.parameters = list(values)
        self.loss = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.parameters, lr=LEARNING_RATE, eps=EPSILON)

    def loss_of(self, ids, targets):
        torch = self.torch
        hidden, _ = self.lstm(self.embedding(torch.from_numpy(ids)))
        logits = self.dense(hidden)
        return self.loss(logits.reshape(-1, VOCABULARY), torch.from_numpy(targets).reshape(-1))

    def gradients(self, ids, targets):
        """The loss and the gradients, in minikeras's weight order and layouts."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_of(ids, targets)
        loss.backward()
        embedding, kernel, recurrent, bias, _, dense_kernel, dense_bias = (
            p.grad.numpy() for p in self.parameters
        )
        return loss.item(), [embedding, kernel.T, recurrent.T, bias, dense_kernel.T, dense_bias]

    def timed_step(self, ids, targets, clock=time.perf_counter):
        t0 = clock()
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_of(ids, targets)
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


def assert_gradients_close(got, expected, who):
    for name, mine, theirs in zip(WEIGHT_NAMES, got, expected):
        assert mine.dtype == np.float32 and theirs.dtype == np.float32, f"{who}: {name} dtype"
        scale = float(np.abs(theirs).max())
        np.testing.assert_allclose(
            mine, theirs, rtol=1e-4, atol=1e-4 * scale, err_msg=f"{who}: grad {name}"
        )


def check_same_arithmetic(weights, ids, targets, torch):
    """Asserts minikeras and numpy (and torch) give the same loss and gradients, and
    minikeras and numpy the same updated weights."""
    mk_step, np_step = MinikerasStep(weights), NumpyStep(weights)
    mk_loss, mk_grads = mk_step.forward_backward(ids, targets)
    np_loss, np_grads = np_step.forward_backward(ids, targets)
    assert mk_loss.dtype == np.float32 and np_loss.dtype == np.float32, "loss must be float32"
    np.testing.assert_allclose(mk_loss.numpy(), np_loss, rtol=1e-5, err_msg="loss")
    assert_gradients_close([g.numpy() for g in mk_grads], np_grads, "minikeras")
    mk_step.update(mk_grads)
    np_step.update([g.copy() for g in np_grads])
    for name, variable, param in zip(WEIGHT_NAMES, mk_step.variables, np_step.params):
        assert variable.dtype == np.float32, name
        np.testing.assert_allclose(variable.numpy(), param, rtol=1e-5, atol=1e-6, err_msg=name)
    checks = {"loss": float(np_loss)}
    if torch is not None:
        torch_loss, torch_grads = TorchStep(torch, weights).gradients(ids, targets)
        np.testing.assert_allclose(torch_loss, np_loss, rtol=1e-5, err_msg="torch loss")
        assert_gradients_close(torch_grads, np_grads, "torch")
        checks["torch_loss"] = torch_loss
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
        ids, targets = batches[round_index % len(batches)]
        shift = round_index % len(contenders)
        for name, contender in contenders[shift:] + contenders[:shift]:
            phases = contender.timed_step(ids.copy(), targets.copy())
            if round_index >= warmup:
                for phase, seconds in phases.items():
                    samples.setdefault(f"{name}_{phase}", []).append(seconds)
    return samples


def numpy_sections(weights, batches, steps=30):
    """Milliseconds per step of each kind of work in the numpy step."""
    step = NumpyStep(weights)
    for index in range(3):
        step.timed_step(*batches[index % len(batches)])
    step.sections = {}
    for index in range(steps):
        step.timed_step(*batches[index % len(batches)])
    return {name: seconds / steps * 1e3 for name, seconds in step.sections.items()}


def minikeras_sections(weights, batches, steps=30):
    """Milliseconds per step inside minikeras's fused kernels, and the rest.

    Wraps the plain-numpy functions the primitives call (module attributes, so
    the wrappers cost a timer call each); "the rest" is the step's time
    outside them: the Dense and loss primitives, the tape, layers and ops.
    """
    from minikeras.ops import gather
    from minikeras.ops import recurrent_kernels as kernels
    from minikeras.ops import recurrent_layout as layout

    targets = [
        (kernels, "lstm_forward", "LSTM forward loop (incl. input projection)"),
        (kernels, "lstm_backward", "LSTM backward loop (BPTT)"),
        (layout, "project_backward", "LSTM kernel/input gradients"),
        (gather, "scatter_rows", "embedding gradient"),
    ]
    totals = {label: 0.0 for _, _, label in targets}
    originals = []

    def timed(function, label):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                totals[label] += time.perf_counter() - start

        return wrapper

    step = MinikerasStep(weights)
    for index in range(3):
        step.timed_step(*batches[index % len(batches)])
    for module, name, label in targets:
        originals.append((module, name, getattr(module, name)))
        setattr(module, name, timed(getattr(module, name), label))
    adam = free = total = 0.0
    try:
        for index in range(steps):
            phases = step.timed_step(*batches[index % len(batches)])
            adam += phases["update"]
            free += phases["free"]
            total += phases["step"]
    finally:
        for module, name, function in originals:
            setattr(module, name, function)
    sections = {label: seconds / steps * 1e3 for label, seconds in totals.items()}
    sections["Adam.apply"] = adam / steps * 1e3
    sections["freeing the step's graph"] = free / steps * 1e3
    sections["the rest: Dense, loss, tape, layers"] = total / steps * 1e3 - sum(sections.values())
    return sections


def profile_minikeras(weights, batches, steps):
    """Prints cProfile's top functions for `steps` minikeras steps."""
    import cProfile
    import pstats

    step = MinikerasStep(weights)
    for index in range(3):
        step.timed_step(*batches[index % len(batches)])
    profiler = cProfile.Profile()
    profiler.enable()
    for index in range(steps):
        step.timed_step(*batches[index % len(batches)])
    profiler.disable()
    print(f"\ncProfile of {steps} minikeras steps (tottime includes BLAS inside primitives):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


# ----------------------------------------------------------------- report


def _print_sections(title, sections):
    total = sum(sections.values())
    print(f"{title} ({total:.2f} ms, sections timed apart):")
    for name, millis in sorted(sections.items(), key=lambda item: -item[1]):
        print(f"  {name:<44}{millis:>7.2f} ms  {100 * millis / total:>5.1f}%")


def print_report(args, info, threads, stats, ratios, sections, checks, torch):
    print(
        f"minikeras char-LSTM training step: Embedding({VOCABULARY}, {EMBEDDING}) "
        f"LSTM({UNITS}, return_sequences) Dense({VOCABULARY}) on every step; "
        f"batch {BATCH} x {STEPS} steps, float32, Adam"
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
        f"loss ({checks['loss']:.5f}{torch_check}), gradients (rtol 1e-4) and Adam update"
    )
    print()
    print_stats_table(ADAM_STEP_ROWS, stats)
    print()
    print_step_ratios(ratios, TARGET_RATIO)
    print()
    _print_sections("where the numpy step's time goes", sections["numpy"])
    _print_sections("where the minikeras step's time goes", sections["minikeras"])


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=300, help="timed rounds (default 300)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first (default 5)")
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
    sections = {
        "numpy": numpy_sections(weights, batches),
        "minikeras": minikeras_sections(weights, batches),
    }
    print_report(args, info, threads, stats, ratios, sections, checks, torch)

    if args.json:
        record = {
            "benchmark": "lstm_step",
            "config": {
                "vocabulary": VOCABULARY,
                "embedding": EMBEDDING,
                "units": UNITS,
                "steps": STEPS,
                "batch": BATCH,
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
            "sections_ms": sections,
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
