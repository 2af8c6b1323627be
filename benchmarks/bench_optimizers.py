"""One Adam step on the weights of a 784-256-128-10 MLP: minikeras against hand-written numpy.

The parameters are the MLP's three kernels and three biases (235,146 float32
values). The minikeras step is `optimizers.Adam.apply(grads, variables)` with
the gradients as Tensors, as a tape returns them; the numpy step does the same
arithmetic in the same order by hand, in place, with one preallocated scratch
pair per shape, the way a careful numpy programmer writes it. A third variant
runs minikeras while a read of every weight is held across the step (as a
Tensor taken before the update), which makes the optimizer write into its
spare arrays instead of in place. Two more run the rule as `update_step`
(the Keras 3 contract, no fused fast path): the built-in Adam's own
`update_step`, and a user's Adam written from scratch on `Optimizer` with
`build` and `update_step` only. All run interleaved in one process, in an
order that rotates every round, with BLAS on one thread, so that a noisy
machine slows them alike.

Before timing, the script checks that minikeras and numpy give the same
updated weights and moments (bit for bit for the fast path, to float32
rounding for the update_step ones); after timing, that all variants still agree.

Usage (from the repo root):
    python benchmarks/bench_optimizers.py [--repeats 1000] [--warmup 100] [--json PATH]
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

from benchmarks.common import (  # noqa: E402
    THREAD_ENV_VARS,
    interleave,
    summarize,
    versions,
    write_json,
)
from benchmarks.reference import BETA_1, BETA_2, EPSILON, Adam, dense_weights  # noqa: E402
from minikeras import Tensor, Variable, ops, optimizers  # noqa: E402

LAYER_SIZES = (784, 256, 128, 10)
LEARNING_RATE = 1e-3
# Several gradient sets, cycled, so that no step sees the same input twice in a row.
DISTINCT_GRADIENTS = 4


def make_problem(seed=0, layers=LAYER_SIZES):
    """Glorot-uniform kernels, small biases, and gradient sets of their shapes (float32)."""
    rng = np.random.default_rng(seed)
    weights = dense_weights(layers, rng)
    gradients = [
        [(rng.standard_normal(w.shape) * 0.01).astype(np.float32) for w in weights]
        for _ in range(DISTINCT_GRADIENTS)
    ]
    return weights, gradients


class UserAdam(optimizers.Optimizer):
    """Adam as a user writes it, Keras 3's way: `build` and `update_step`, nothing else."""

    def __init__(self, learning_rate, beta_1, beta_2, epsilon):
        super().__init__(learning_rate)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def build(self, variables):
        super().build(variables)
        self.momentums = [self.add_variable_from_reference(v, "momentum") for v in variables]
        self.velocities = [self.add_variable_from_reference(v, "velocity") for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self.momentums[index], self.velocities[index]
        t = int(self.iterations.numpy()) + 1
        alpha = learning_rate * (1 - self.beta_2**t) ** 0.5 / (1 - self.beta_1**t)
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign_add(v, (gradient * gradient - v) * (1 - self.beta_2))
        self.assign_sub(variable, m / (ops.sqrt(v) + self.epsilon) * alpha)


class AdamByUpdateStep(optimizers.Adam):
    """The built-in Adam running its own `update_step` (declaring it turns the fast path off)."""

    update_step = optimizers.Adam.update_step


OPTIMIZERS = {"fused": optimizers.Adam, "update_step": AdamByUpdateStep, "user": UserAdam}


class MinikerasAdam:
    """Adam through the public API: Variables, Tensors, `apply`."""

    def __init__(self, weights, hold_reads=False, kind="fused"):
        self.variables = [Variable(w) for w in weights]
        self.optimizer = OPTIMIZERS[kind](
            learning_rate=LEARNING_RATE, beta_1=BETA_1, beta_2=BETA_2, epsilon=EPSILON
        )
        self.hold_reads = hold_reads
        self.held = None

    def step(self, grads):
        if self.hold_reads:
            # Like a Tensor read before the update and still alive after it.
            self.held = [variable.value for variable in self.variables]
        self.optimizer.apply(grads, self.variables)

    def weights(self):
        return [variable.numpy() for variable in self.variables]

    def moments(self):
        # optimizer.variables: iterations, the learning rate, then all momentums, then all
        # velocities.
        return [variable.numpy() for variable in self.optimizer.variables[2:]]


class NumpyAdam:
    """The same Adam by hand (`reference.Adam`): in place, Python-float scalars.

    The gradient sets are reused round after round, so the update is built in
    a buffer of its own rather than in the gradient's.
    """

    def __init__(self, weights):
        self.params = [np.array(w, copy=True) for w in weights]
        # The rate as minikeras holds it, as Keras 3 does: in a float32 Variable.
        self.optimizer = Adam(self.params, float(np.float32(LEARNING_RATE)))

    def step(self, grads):
        self.optimizer.apply(grads)

    def weights(self):
        return self.params

    def moments(self):
        return self.optimizer.momentums + self.optimizer.velocities


def check_same_values(minikeras_step, numpy_step, what, exact=True):
    """Asserts both give the same weights and moments: bit for bit (same arithmetic) if `exact`."""
    pairs = [("weight", minikeras_step.weights(), numpy_step.weights())]
    pairs.append(("moment", minikeras_step.moments(), numpy_step.moments()))
    for kind, ours, theirs in pairs:
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert a.dtype == np.float32 and b.dtype == np.float32, f"{what}: {kind} {index}"
            if exact:
                np.testing.assert_array_equal(a, b, err_msg=f"{what}: {kind} {index}")
            else:
                np.testing.assert_allclose(
                    a, b, rtol=1e-4, atol=1e-7, err_msg=f"{what}: {kind} {index}"
                )


def time_steps(weights, gradients, repeats, warmup):
    """Runs the three variants interleaved on the same gradients; returns durations and steps."""
    tensor_gradients = [[Tensor(g) for g in grads] for grads in gradients]
    variants = {
        "minikeras": MinikerasAdam(weights),
        "numpy": NumpyAdam(weights),
        "minikeras_reads_held": MinikerasAdam(weights, hold_reads=True),
        "update_step": MinikerasAdam(weights, kind="update_step"),
        "user": MinikerasAdam(weights, kind="user"),
    }
    inputs = {name: tensor_gradients for name in variants}
    inputs["numpy"] = gradients

    def timed(name, variant):
        def step(round_index):
            grads = inputs[name][round_index % DISTINCT_GRADIENTS]
            start = time.perf_counter()
            variant.step(grads)
            return time.perf_counter() - start

        return step

    gc.collect()
    samples = interleave({name: timed(name, v) for name, v in variants.items()}, repeats, warmup)
    return samples, variants


def print_report(args, info, parameter_count, stats, ratios):
    print(
        f"minikeras Adam step on the {'-'.join(map(str, LAYER_SIZES))} MLP's weights "
        f"({parameter_count:,} float32 values in 6 arrays)"
    )
    print(
        f"python {info['python']}, numpy {info['numpy']}, minikeras {info['minikeras']}, "
        f"{info['cpu_count']} CPUs; BLAS threads: "
        + ", ".join(f"{name}={os.environ.get(name)}" for name in THREAD_ENV_VARS)
    )
    print(
        f"{args.repeats} interleaved rounds after {args.warmup} warm-up; minikeras and numpy "
        "checked bit-equal (weights and moments) before and after timing"
    )
    print()
    header = f"{'per Adam step':<44}{'median µs':>11}{'p25':>9}{'p75':>9}{'IQR':>8}{'min':>9}"
    print(header)
    print("-" * len(header))
    rows = [
        ("minikeras Adam.apply", "minikeras"),
        ("numpy by hand (in place)", "numpy"),
        ("minikeras Adam.apply, reads held (spares)", "minikeras_reads_held"),
        ("minikeras Adam by its update_step", "update_step"),
        ("a user's Adam (build + update_step)", "user"),
    ]
    for label, key in rows:
        s = stats[key]
        print(
            f"{label:<44}{s['median_us']:>11.1f}{s['p25_us']:>9.1f}{s['p75_us']:>9.1f}"
            f"{s['iqr_us']:>8.1f}{s['min_us']:>9.1f}"
        )
    print()
    print(f"ratio minikeras / numpy (medians):               {ratios['minikeras_over_numpy']:.3f}")
    print(
        f"ratio minikeras / numpy (paired rounds, median): {ratios['paired_median']:.3f} "
        f"(p25 {ratios['paired_p25']:.3f}, p75 {ratios['paired_p75']:.3f})"
    )
    print(f"ratio reads-held / numpy (medians):              {ratios['held_over_numpy']:.3f}")
    for label, key in [("Adam.update_step", "update_step"), ("user Adam", "user")]:
        print(f"{f'ratio {label} / numpy (medians):':<49}{ratios[key + '_over_numpy']:.3f}")
    print(f"minikeras overhead over numpy: {ratios['overhead_us']:.1f} µs per step")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=1000, help="timed rounds of each variant (default 1000)"
    )
    parser.add_argument(
        "--warmup", type=int, default=100, help="untimed rounds first (default 100)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0:
        parser.error("--repeats must be positive, --warmup non-negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    info = versions()
    weights, gradients = make_problem()
    parameter_count = sum(w.size for w in weights)

    ours, theirs = MinikerasAdam(weights), NumpyAdam(weights)
    for grads in gradients:
        ours.step([Tensor(g) for g in grads])
        theirs.step(grads)
    check_same_values(ours, theirs, "before timing")
    for kind in ("update_step", "user"):
        rule = MinikerasAdam(weights, kind=kind)
        for grads in gradients:
            rule.step([Tensor(g) for g in grads])
        check_same_values(rule, theirs, f"before timing, {kind}", exact=False)

    samples, variants = time_steps(weights, gradients, args.repeats, args.warmup)
    check_same_values(variants["minikeras"], variants["numpy"], "after timing")
    check_same_values(variants["minikeras_reads_held"], variants["numpy"], "after timing, held")
    for name in ("update_step", "user"):
        check_same_values(variants[name], variants["numpy"], f"after timing, {name}", exact=False)

    stats = {key: summarize(values) for key, values in samples.items()}
    paired = np.asarray(samples["minikeras"]) / np.asarray(samples["numpy"])
    mk_median, np_median = stats["minikeras"]["median_us"], stats["numpy"]["median_us"]
    ratios = {
        "minikeras_over_numpy": mk_median / np_median,
        "paired_median": float(np.median(paired)),
        "paired_p25": float(np.percentile(paired, 25)),
        "paired_p75": float(np.percentile(paired, 75)),
        "held_over_numpy": stats["minikeras_reads_held"]["median_us"] / np_median,
        "update_step_over_numpy": stats["update_step"]["median_us"] / np_median,
        "user_over_numpy": stats["user"]["median_us"] / np_median,
        "overhead_us": mk_median - np_median,
    }
    print_report(args, info, parameter_count, stats, ratios)

    if args.json:
        record = {
            "benchmark": "optimizers_adam_step",
            "config": {
                "layers": LAYER_SIZES,
                "parameters": parameter_count,
                "repeats": args.repeats,
                "warmup": args.warmup,
                "learning_rate": LEARNING_RATE,
                "threads": {name: os.environ.get(name) for name in THREAD_ENV_VARS},
            },
            "versions": info,
            "stats": stats,
            "ratios": ratios,
        }
        write_json(args.json, record)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
