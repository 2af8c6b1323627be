"""One training step of a 784-256-128-10 MLP: minikeras against hand-written numpy.

The step is forward (relu, relu, linear), sparse softmax cross-entropy averaged
over the batch, the gradient of all six weights, and a plain SGD update in
place. The minikeras step goes through the public API (`ops.dense`,
`ops.sparse_categorical_crossentropy`, `ops.mean`, `GradientTape`,
`Variable.assign_sub`); the numpy step does the same arithmetic by hand, the
way a careful numpy programmer writes it (scaling the gradients, its own, in
place). Two more contenders take issue #17's path: a model called in the tape
(a Sequential, and a subclassed Model holding three Dense layers), the loss
object, and `SGD.apply_gradients`, each timed by phase (the model's call,
the loss, the gradient, the update). All run interleaved in one process
with the floor (the step's eight matrix products alone), with BLAS on one
thread, so that a noisy machine slows them all alike. Each round runs them in
a fresh seeded order (as `python -m benchmarks` does), so that what one
contender leaves behind (evicted caches, garbage) falls on each other one by
turns; `--order rotate` keeps the older rotation (A B C, B C A, ...), in which
each contender follows the same neighbour in most rounds.

Before timing, the script checks that both steps compute the same loss,
gradients and updated weights from the same weights.

Usage (from the repo root):
    python benchmarks/bench_mlp_step.py [--batch 128] [--repeats 1500] [--json PATH]
"""

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from benchmarks.common import pin_threads  # noqa: E402  (imports no numpy)

pin_threads(1)  # BLAS reads its thread count once, when numpy first loads it

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

# blas_thread_report, summarize and versions are imported from here by bench_cnn/bench_lstm.
from benchmarks.common import (  # noqa: E402
    blas_thread_report,
    interleave,
    per_call_us,
    summarize,
    versions,
    write_json,
)
from benchmarks.mlp import minikeras_model, subclassed_model  # noqa: E402
from benchmarks.problems import DISTINCT_BATCHES, mlp_problem  # noqa: E402
from benchmarks.reference import (  # noqa: E402
    ClosureTapeMLP,
    NumpyMLP,
    assert_same,
    mlp_floor,
    sgd_in_place,
)
from minikeras import GradientTape, Tensor, Variable, ops  # noqa: E402

LAYER_SIZES = (784, 256, 128, 10)
CLASSES = LAYER_SIZES[-1]
LEARNING_RATE = 0.01
TARGET_RATIO = 1.15


# ----------------------------------------------------------------- problem


def make_problem(batch, seed=0):
    """Random float32 inputs, int64 labels and Glorot-uniform weights (non-zero biases)."""
    return mlp_problem(LAYER_SIZES, batch, seed)


class MinikerasStep:
    """The step through minikeras's public API."""

    def __init__(self, weights, learning_rate):
        self.variables = [Variable(value) for value in weights]
        self.learning_rate = learning_rate

    def forward(self, x, labels):
        """The forward pass and the mean loss, recorded; returns `(tape, loss)`."""
        kernel1, bias1, kernel2, bias2, kernel3, bias3 = self.variables
        with GradientTape() as tape:
            hidden = ops.dense(x, kernel1, bias1, "relu")
            hidden = ops.dense(hidden, kernel2, bias2, "relu")
            logits = ops.dense(hidden, kernel3, bias3)
            loss = ops.mean(ops.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return tape, loss

    def forward_backward(self, x, labels):
        tape, loss = self.forward(x, labels)
        return loss, tape.gradient(loss, self.variables)

    def update(self, grads):
        # The fastest public-API update (see "SGD update variants" in the output):
        # the gradient Tensor's array times a Python float, then assign_sub in place.
        learning_rate = self.learning_rate
        for variable, grad in zip(self.variables, grads):
            variable.assign_sub(grad.numpy() * learning_rate)

    def step(self, x, labels):
        loss, grads = self.forward_backward(x, labels)
        self.update(grads)
        return loss

    def timed_step(self, x, labels, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included)."""
        t0 = clock()
        tape, loss = self.forward(x, labels)
        t1 = clock()
        grads = tape.gradient(loss, self.variables)
        t2 = clock()
        self.update(grads)
        del tape, loss, grads
        t3 = clock()
        return {"forward": t1 - t0, "gradient": t2 - t1, "update": t3 - t2, "step": t3 - t0}


class ModelStep:
    """The issue's path: a model called in a `GradientTape`, `SGD.apply_gradients`.

    Args:
        make: `benchmarks.mlp.minikeras_model` (a Sequential, whose call a
            tape replays as one node) or `subclassed_model` (its plain
            `call` is replayed alike: `models.plain_calls`).
        weights: the starting weights.
        learning_rate: SGD's learning rate.
    """

    def __init__(self, make, weights, learning_rate):
        from minikeras import losses, optimizers

        self.model = make([w.copy() for w in weights])
        self.variables = self.model.trainable_weights
        self.loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
        self.optimizer = optimizers.SGD(learning_rate)

    def forward_backward(self, x, labels):
        with GradientTape() as tape:
            loss = self.loss_fn(labels, self.model(x, training=True))
        return loss, tape.gradient(loss, self.variables)

    def step(self, x, labels):
        loss, grads = self.forward_backward(x, labels)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return loss

    def timed_step(self, x, labels, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included).

        The phases: the model's call in the tape, the loss object, `tape.gradient`,
        and `apply_gradients` with the freeing of the step's graph and gradients.
        """
        t0 = clock()
        with GradientTape() as tape:
            outputs = self.model(x, training=True)
            t1 = clock()
            loss = self.loss_fn(labels, outputs)
        t2 = clock()
        grads = tape.gradient(loss, self.variables)
        t3 = clock()
        self.optimizer.apply_gradients(zip(grads, self.variables))
        del tape, outputs, loss, grads
        t4 = clock()
        return {
            "forward": t1 - t0,
            "loss": t2 - t1,
            "gradient": t3 - t2,
            "update": t4 - t3,
            "step": t4 - t0,
        }


class ClosureTapeStep:
    """`reference.ClosureTapeMLP`: the least Python a tape step can do, SGD not in place."""

    def __init__(self, weights, learning_rate):
        self.mlp = ClosureTapeMLP(weights)
        self.learning_rate = learning_rate

    def forward_backward(self, x, labels):
        return self.mlp.forward_backward(x, labels)

    def timed_step(self, x, labels, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included)."""
        t0 = clock()
        loss, tape = self.mlp.forward(x, labels)
        t1 = clock()
        grads = self.mlp.gradients(tape)
        t2 = clock()
        self.mlp.update(grads, self.learning_rate)
        del loss, tape, grads
        t3 = clock()
        return {"forward": t1 - t0, "gradient": t2 - t1, "update": t3 - t2, "step": t3 - t0}


class NumpyStep:
    """The same step written by hand in numpy (`reference.NumpyMLP`), SGD in place."""

    def __init__(self, weights, learning_rate):
        self.mlp = NumpyMLP(weights)
        self.params = self.mlp.params
        self.learning_rate = learning_rate

    def forward_backward(self, x, labels):
        return self.mlp.forward_backward(x, labels)

    def update(self, grads):
        sgd_in_place(self.params, grads, self.learning_rate)

    def step(self, x, labels):
        loss, grads = self.forward_backward(x, labels)
        self.update(grads)
        return loss

    def timed_step(self, x, labels, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included)."""
        t0 = clock()
        loss, grads = self.forward_backward(x, labels)
        t1 = clock()
        self.update(grads)
        del loss, grads
        t2 = clock()
        return {"forward_backward": t1 - t0, "update": t2 - t1, "step": t2 - t0}


# ----------------------------------------------------------------- checks


def check_same_arithmetic(weights, x, labels, learning_rate):
    """Asserts both steps give the same loss, gradients and updated weights."""
    mk_step, np_step = MinikerasStep(weights, learning_rate), NumpyStep(weights, learning_rate)
    mk_loss, mk_grads = mk_step.forward_backward(x, labels)
    np_loss, np_grads = np_step.forward_backward(x, labels)
    names = ["kernel1", "bias1", "kernel2", "bias2", "kernel3", "bias3"]
    assert mk_loss.dtype == np.float32 and np_loss.dtype == np.float32, "loss must be float32"
    np.testing.assert_allclose(mk_loss.numpy(), np_loss, rtol=1e-4, err_msg="loss")
    for name, mk_grad, np_grad in zip(names, mk_grads, np_grads):
        assert mk_grad is not None, f"minikeras gave no gradient for {name}"
        assert mk_grad.dtype == np.float32, f"minikeras grad {name} is {mk_grad.dtype}"
        assert np_grad.dtype == np.float32, f"numpy grad {name} is {np_grad.dtype}"
        scale = float(np.abs(np_grad).max())
        np.testing.assert_allclose(
            mk_grad.numpy(), np_grad, rtol=1e-4, atol=1e-6 * scale, err_msg=f"grad {name}"
        )
    mk_step.update(mk_grads)
    np_step.update(np_grads)
    for name, variable, param in zip(names, mk_step.variables, np_step.params):
        assert variable.dtype == np.float32 and param.dtype == np.float32, name
        np.testing.assert_allclose(variable.numpy(), param, rtol=1e-5, atol=1e-7, err_msg=name)
    return float(np_loss)


def check_closure_tape(weights, x, labels):
    """Asserts the closure tape gives numpy's loss and gradients (see `ClosureTapeMLP`)."""
    tape_loss, tape_grads = ClosureTapeMLP(weights).forward_backward(x, labels)
    np_loss, np_grads = NumpyMLP(weights).forward_backward(x, labels)
    pairs = [("loss", np.asarray(tape_loss), np.asarray(np_loss))]
    pairs += [(f"grad {i}", a, b) for i, (a, b) in enumerate(zip(tape_grads, np_grads))]
    assert_same(pairs, what="closure tape vs numpy")


def minikeras_updates_in_place(weights, x, labels, learning_rate):
    """How many Variables one minikeras step updates in their own buffer.

    `assign_sub` writes into a new buffer while anything else holds the old
    one; that would cost an allocation per weight and step, so we report it.
    """
    step = MinikerasStep(weights, learning_rate)
    # The buffers' addresses only: holding the buffers would itself force copies.
    before = [variable._value.ctypes.data for variable in step.variables]
    step.timed_step(x, labels)
    after = [variable._value.ctypes.data for variable in step.variables]
    return sum(old == new for old, new in zip(before, after)), len(before)


# ----------------------------------------------------------------- timing


def time_steps(weights, batches, repeats, warmup, learning_rate, shuffle_seed=0):
    """Runs minikeras, numpy and the GEMM floor interleaved; returns phase durations.

    Each round runs the contenders in a seeded random order (`shuffle_seed`;
    None rotates it: mk np gemm, np gemm mk, gemm mk np, ...), and each step
    gets its own fresh copy of the batch, as from a data pipeline: no
    contender finds the batch left warm in cache by another.
    """
    contenders = {
        "minikeras": MinikerasStep(weights, learning_rate),
        "sequential": ModelStep(minikeras_model, weights, learning_rate),
        "subclassed": ModelStep(subclassed_model, weights, learning_rate),
        "numpy": NumpyStep(weights, learning_rate),
        "closure_tape": ClosureTapeStep(weights, learning_rate),
        "gemm": mlp_floor(weights, batches[0][0]),
    }

    def timed(contender):
        def step(round_index):
            x, labels = batches[round_index % len(batches)]
            return contender.timed_step(x.copy(), labels.copy())

        return step

    gc.collect()
    samples = interleave(
        {name: timed(c) for name, c in contenders.items()}, repeats, warmup, shuffle_seed
    )
    final_losses = {
        name: float(contenders[name].forward_backward(*batches[0])[0])
        for name in ("minikeras", "numpy")
    }
    return samples, final_losses


def time_update_variants(weights, x, labels, learning_rate, number=200):
    """Per-step cost of SGD updates of all six weights through different routes."""
    mk_step = MinikerasStep(weights, learning_rate)
    _, grads = mk_step.forward_backward(x, labels)
    variables = mk_step.variables
    np_grads = [grad.numpy().copy() for grad in grads]
    params = [np.array(value) for value in weights]
    # Tiny learning rate so that `number` updates barely move the weights.
    rate = 1e-6

    def tensor_multiply():
        for variable, grad in zip(variables, grads):
            variable.assign_sub(rate * grad)

    def array_multiply():
        for variable, grad in zip(variables, grads):
            variable.assign_sub(grad.numpy() * rate)

    buffers = [np.empty(variable.shape, variable.dtype) for variable in variables]

    def array_multiply_into_buffer():
        for variable, grad, buffer in zip(variables, grads, buffers):
            variable.assign_sub(np.multiply(grad.numpy(), rate, out=buffer))

    def numpy_alloc():
        for param, grad in zip(params, np_grads):
            param -= rate * grad

    def numpy_in_place():
        for param, grad in zip(params, np_grads):
            grad *= 1.0  # costs what `*= rate` costs, without shrinking grads to denormals
            param -= grad

    variants = {
        "v.assign_sub(lr * g)  [Tensor op]": tensor_multiply,
        "v.assign_sub(g.numpy() * lr)  [used]": array_multiply,
        "v.assign_sub(np.multiply(g.numpy(), lr, out=buf))": array_multiply_into_buffer,
        "numpy: p -= lr * g": numpy_alloc,
        "numpy: g *= lr; p -= g  [used]": numpy_in_place,
    }
    return {
        name: per_call_us(function, number=number, repeat=7) for name, function in variants.items()
    }


def time_small_op_overhead(number=20000, repeat=7):
    """Microseconds per call of a (4, 4) float32 add: numpy, ops.add, `+`, inside tapes."""
    array = np.arange(16, dtype=np.float32).reshape(4, 4)
    tensor = Tensor(array)

    def loop(add, operand):
        def run():
            for _ in range(number):
                add(operand, operand)

        return run

    def numpy_add(a, b):
        return a + b

    def tensor_plus(a, b):
        return a + b

    def timed(name, run):
        run()
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            run()
            runs.append((time.perf_counter() - start) / number)
        results[name] = float(np.median(runs) * 1e6)

    results = {}
    timed("numpy a + a", loop(numpy_add, array))
    timed("ops.add(t, t)", loop(ops.add, tensor))
    timed("t + t", loop(tensor_plus, tensor))
    with GradientTape():
        timed("ops.add(t, t), tape, t unwatched", loop(ops.add, tensor))
        timed("t + t, tape, t unwatched", loop(tensor_plus, tensor))
    with GradientTape() as tape:
        tape.watch(tensor)
        timed("ops.add(t, t), tape, t watched", loop(ops.add, tensor))
        timed("t + t, tape, t watched", loop(tensor_plus, tensor))
    # The function-call cost of the loop itself, included in every row above.
    timed("(empty loop: call of a Python function)", loop(lambda a, b: None, array))
    return results


def profile_minikeras(weights, batches, steps):
    """Prints cProfile's top functions for `steps` minikeras steps."""
    import cProfile
    import pstats

    mk_step = MinikerasStep(weights, LEARNING_RATE)
    for index in range(20):
        mk_step.step(*batches[index % len(batches)])
    profiler = cProfile.Profile()
    profiler.enable()
    for index in range(steps):
        mk_step.step(*batches[index % len(batches)])
    profiler.disable()
    print(f"\ncProfile of {steps} minikeras steps (tottime includes the BLAS calls made inside):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


# ----------------------------------------------------------------- report


def print_report(args, info, threads, stats, ratios, update_variants, small_ops, losses, in_place):
    print(
        f"minikeras MLP training step: {'-'.join(map(str, LAYER_SIZES))}, batch {args.batch}, "
        f"float32, SGD lr={LEARNING_RATE}"
    )
    print(
        f"python {info['python']}, numpy {info['numpy']}, autograd {info['autograd']}, "
        f"minikeras {info['minikeras']}, {info['cpu_count']} CPUs"
    )
    env = ", ".join(f"{name}={value}" for name, value in threads["env"].items())
    tpc = threads["threadpoolctl"]
    tpc_text = tpc if isinstance(tpc, str) else f"limits set to 1 ({tpc})"
    print(f"BLAS threads: {env}; threadpoolctl: {tpc_text}; ", end="")
    print(f"OpenBLAS reports {threads['openblas_num_threads']} thread(s)")
    print(
        f"{args.repeats} interleaved rounds (minikeras, numpy, GEMMs; order: {args.order}) "
        f"after {args.warmup} warm-up; checked first: same loss, grads and update "
        f"(rtol 1e-4), loss {losses['check']:.4f}"
    )
    print()
    header = f"{'per step':<38}{'median µs':>11}{'p25':>9}{'p75':>9}{'IQR':>8}{'min':>9}"
    print(header)
    print("-" * len(header))
    rows = [
        ("minikeras step", "minikeras_step"),
        ("  forward + loss (in tape)", "minikeras_forward"),
        ("  tape.gradient", "minikeras_gradient"),
        ("  SGD update (6 x assign_sub)", "minikeras_update"),
        ("Sequential in tape, SGD.apply_gradients", "sequential_step"),
        ("  model call (in tape)", "sequential_forward"),
        ("  loss object (in tape)", "sequential_loss"),
        ("  tape.gradient", "sequential_gradient"),
        ("  SGD.apply_gradients", "sequential_update"),
        ("subclassed in tape, SGD.apply_gradients", "subclassed_step"),
        ("  model call (in tape)", "subclassed_forward"),
        ("closure tape (no checks), SGD", "closure_tape_step"),
        ("  forward + loss", "closure_tape_forward"),
        ("  gradient", "closure_tape_gradient"),
        ("  SGD update", "closure_tape_update"),
        ("numpy step (hand-written)", "numpy_step"),
        ("  forward + loss + backward", "numpy_forward_backward"),
        ("  SGD update (in place)", "numpy_update"),
        ("GEMM floor (8 matmuls, out=)", "gemm_step"),
        ("  3 forward GEMMs", "gemm_forward"),
        ("  5 backward GEMMs", "gemm_backward"),
    ]
    for label, key in rows:
        s = stats[key]
        print(
            f"{label:<38}{s['median_us']:>11.1f}{s['p25_us']:>9.1f}{s['p75_us']:>9.1f}"
            f"{s['iqr_us']:>8.1f}{s['min_us']:>9.1f}"
        )
    print()
    verdict = "OK" if ratios["minikeras_over_numpy"] <= TARGET_RATIO else "OVER TARGET"
    print(
        f"ratio minikeras / numpy (medians):     {ratios['minikeras_over_numpy']:.3f}  "
        f"(target <= {TARGET_RATIO}: {verdict})"
    )
    print(f"ratio minikeras / numpy (paired rounds, median): {ratios['paired_median']:.3f}")
    for name in ("sequential", "subclassed"):
        print(
            f"ratio {name} model + SGD.apply_gradients / numpy (medians): "
            f"{ratios[f'{name}_over_numpy']:.3f}  (issue #17's row, target <= 1.10)"
        )
    print(
        f"ratio closure tape / numpy (medians): {ratios['closure_tape_over_numpy']:.3f}  "
        "(the least Python a tape step can do: the rest of the rows' gap is minikeras's own)"
    )
    print(f"ratio numpy / GEMM floor (medians):    {ratios['numpy_over_gemm']:.3f}")
    print(f"ratio minikeras / GEMM floor (medians): {ratios['minikeras_over_gemm']:.3f}")
    print(
        f"minikeras overhead over numpy: {ratios['overhead_us']:.1f} µs per step; "
        f"final losses: minikeras {losses['minikeras']:.4f}, numpy {losses['numpy']:.4f}"
    )
    print(f"minikeras SGD updates in place (no new buffer): {in_place[0]}/{in_place[1]} Variables")
    print()
    print(f"{'SGD update variants (6 weights)':<52}{'µs/step':>9}")
    for name, micros in update_variants.items():
        print(f"{name:<52}{micros:>9.1f}")
    print()
    base = small_ops["numpy a + a"]
    print(f"{'small op, (4, 4) float32':<44}{'µs/call':>9}{'vs numpy':>10}")
    for name, micros in small_ops.items():
        print(f"{name:<44}{micros:>9.2f}{micros - base:>+10.2f}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=128, help="batch size (default 128)")
    parser.add_argument(
        "--repeats", type=int, default=1500, help="timed rounds of each step (default 1500)"
    )
    parser.add_argument("--warmup", type=int, default=50, help="untimed rounds first (default 50)")
    parser.add_argument(
        "--order",
        choices=("shuffle", "rotate"),
        default="shuffle",
        help="each round's order of the contenders: seeded shuffle (default) or rotation",
    )
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    parser.add_argument(
        "--profile",
        type=int,
        metavar="STEPS",
        default=0,
        help="afterwards, cProfile this many minikeras steps and print the top functions",
    )
    args = parser.parse_args(argv)
    if args.batch < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--batch and --repeats must be positive, --warmup non-negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    threads = blas_thread_report()
    info = versions()
    batches, weights = make_problem(args.batch)
    check_loss = check_same_arithmetic(weights, *batches[0], LEARNING_RATE)
    check_closure_tape(weights, *batches[0])
    in_place = minikeras_updates_in_place(weights, *batches[0], LEARNING_RATE)

    shuffle_seed = 0 if args.order == "shuffle" else None
    samples, final_losses = time_steps(
        weights, batches, args.repeats, args.warmup, LEARNING_RATE, shuffle_seed
    )
    stats = {key: summarize(values) for key, values in samples.items()}
    paired = np.asarray(samples["minikeras_step"]) / np.asarray(samples["numpy_step"])
    mk_median, np_median = stats["minikeras_step"]["median_us"], stats["numpy_step"]["median_us"]
    gemm_median = stats["gemm_step"]["median_us"]
    ratios = {
        "minikeras_over_numpy": mk_median / np_median,
        "paired_median": float(np.median(paired)),
        "paired_p25": float(np.percentile(paired, 25)),
        "paired_p75": float(np.percentile(paired, 75)),
        "numpy_over_gemm": np_median / gemm_median,
        "minikeras_over_gemm": mk_median / gemm_median,
        "overhead_us": mk_median - np_median,
        "sequential_over_numpy": stats["sequential_step"]["median_us"] / np_median,
        "subclassed_over_numpy": stats["subclassed_step"]["median_us"] / np_median,
        "closure_tape_over_numpy": stats["closure_tape_step"]["median_us"] / np_median,
        "target": TARGET_RATIO,
    }
    update_variants = time_update_variants(weights, *batches[0], LEARNING_RATE)
    small_ops = time_small_op_overhead()
    losses = {"check": check_loss, **final_losses}
    print_report(args, info, threads, stats, ratios, update_variants, small_ops, losses, in_place)

    if args.json:
        record = {
            "benchmark": "mlp_step",
            "config": {
                "layers": LAYER_SIZES,
                "batch": args.batch,
                "repeats": args.repeats,
                "order": args.order,
                "warmup": args.warmup,
                "learning_rate": LEARNING_RATE,
                "dtype": "float32",
                "distinct_batches": DISTINCT_BATCHES,
            },
            "versions": info,
            "threads": threads,
            "stats_us": stats,
            "ratios": ratios,
            "sgd_update_variants_us": update_variants,
            "small_op_us_per_call": small_ops,
            "losses": losses,
            "minikeras_updates_in_place": {"in_place": in_place[0], "variables": in_place[1]},
            "samples_us": {key: [v * 1e6 for v in values] for key, values in samples.items()},
        }
        write_json(args.json, record)
        print(f"\nwrote {args.json}")

    if args.profile:
        profile_minikeras(weights, batches, args.profile)


if __name__ == "__main__":
    main()
