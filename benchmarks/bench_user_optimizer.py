"""A user's own Adam, written as Keras 3 writes it, against minikeras's built-in Adam.

Issue #17: a subclass that writes only `build` and `update_step` should train
as fast as the built-ins. The user's Adam here is Keras 3's own
`update_step` (keras/src/optimizers/adam.py) in minikeras's ops: the step
count, the powers of the betas and `alpha` as float32 scalar ops, the moments
with `self.assign_add`, the weight with `self.assign_sub`. minikeras traces
it on each variable's second update and replays it after
(`minikeras/optimizers/_traced.py`), packing the small variables when their
programs are one elementwise program. The built-in is `optimizers.Adam`,
which runs its private fused path. A third contender is the same user Adam
with `elementwise_rule = True` on its class (the user's declaration that the
rule treats every element alike).

Three figures, each with the three optimizers interleaved in one process, in
an order that rotates every round, with BLAS on one thread:

- `apply` on the weights of the 784-256-128-10 MLP (235,146 values, two
  kernels too big to pack, four small arrays);
- `apply` on the weights of the 64-64-10 digits MLP (4,810 values, all
  small), the size at which per-call overhead decides;
- a whole `model.fit` of the 64-64-10 MLP on the bundled digits (10 epochs,
  batch 32, as `benchmarks/accuracy.py` runs it), compiled step as by default.

Before timing, every optimizer's weights and moments after a few steps are
checked against Adam by hand in float64 (to float32 rounding; the user's
Adam computes its `alpha` in float32, as Keras does).

Then the first four `apply` calls of a new optimizer on the 64-64-10
weights (for the user's Adam: eager, traced, the first packed one, replayed),
which a whole `fit` pays once. The process has compiled the rules' code by
then (it is cached by source), as for every fit but a process's first.

A second table times `apply` of three more rules as users write them
(`benchmarks/user_rules.py`: Adamax, a centred RMSprop with momentum,
Nesterov SGD) against their built-ins on both sets of weights, after
checking that the two agree to float32 rounding.

Usage (from the repo root):
    python benchmarks/bench_user_optimizer.py [--repeats 300] [--fit-repeats 5] [--json PATH]
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
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import problems  # noqa: E402
from benchmarks.accuracy import DIGITS_SMALL  # noqa: E402
from benchmarks.bench_optimizers import DISTINCT_GRADIENTS, make_problem  # noqa: E402
from benchmarks.common import THREAD_ENV_VARS, interleave, summarize, versions, write_json  # noqa: E402
from benchmarks.mlp import minikeras_model  # noqa: E402
from benchmarks.reference import BETA_1, BETA_2, EPSILON  # noqa: E402
from benchmarks.user_adam import KerasUserAdam  # noqa: E402
from benchmarks.user_rules import Adamax, CenteredRMSprop, NesterovSGD  # noqa: E402
from minikeras import Tensor, Variable, losses, optimizers  # noqa: E402

LEARNING_RATE = 1e-3
PROBLEMS = {"784-256-128-10": (784, 256, 128, 10), "64-64-10": (64, 64, 10)}


class PackedUserAdam(KerasUserAdam):
    """The same user Adam, declaring its rule elementwise: small variables run packed."""

    elementwise_rule = True


OPTIMIZERS = {"built-in": optimizers.Adam, "user": KerasUserAdam, "user packed": PackedUserAdam}


# Other rules as users write them (benchmarks/user_rules.py) against their built-ins:
# name -> (user class, built-in class, shared arguments, the built-in's own arguments).
OTHER_RULES = {
    "Adamax": (Adamax, optimizers.Adamax, {"learning_rate": 0.01}, {}),
    "RMSprop, centred, momentum": (
        CenteredRMSprop, optimizers.RMSprop,
        {"learning_rate": 0.01, "rho": 0.9, "momentum": 0.5}, {"centered": True},
    ),
    "SGD, Nesterov momentum": (
        NesterovSGD, optimizers.SGD, {"learning_rate": 0.01, "momentum": 0.9}, {"nesterov": True},
    ),
}  # fmt: skip


def adam_by_hand(weights, gradients, steps):
    """Adam in float64 for `steps` steps over the cycled gradient sets: weights, m, v."""
    params = [w.astype(np.float64) for w in weights]
    ms = [np.zeros_like(p) for p in params]
    vs = [np.zeros_like(p) for p in params]
    for step in range(1, steps + 1):
        alpha = LEARNING_RATE * math.sqrt(1 - BETA_2**step) / (1 - BETA_1**step)
        for p, g, m, v in zip(params, gradients[(step - 1) % DISTINCT_GRADIENTS], ms, vs):
            g = g.astype(np.float64)
            m += (g - m) * (1 - BETA_1)
            v += (g * g - v) * (1 - BETA_2)
            p -= alpha * m / (np.sqrt(v) + EPSILON)
    return params, ms, vs


class Stepper:
    """One optimizer on its own Variables, stepping through the gradient sets."""

    def __init__(self, kind, weights, gradients):
        self.variables = [Variable(w) for w in weights]
        self.optimizer = OPTIMIZERS[kind](
            learning_rate=LEARNING_RATE, beta_1=BETA_1, beta_2=BETA_2, epsilon=EPSILON
        )
        self.gradients = [[Tensor(g) for g in grads] for grads in gradients]

    def step(self, round_index):
        grads = self.gradients[round_index % DISTINCT_GRADIENTS]
        start = time.perf_counter()
        self.optimizer.apply(grads, self.variables)
        return time.perf_counter() - start


def check_against_float64(kind, weights, gradients, steps=6):
    """The optimizer's weights and moments after `steps` steps equal float64 Adam's."""
    stepper = Stepper(kind, weights, gradients)
    for round_index in range(steps):
        stepper.step(round_index)
    params, ms, vs = adam_by_hand(weights, gradients, steps)
    count = len(params)
    slots = [v.numpy() for v in stepper.optimizer.variables[2:]]  # iterations, rate, m..., v...
    ours = [v.numpy() for v in stepper.variables] + slots
    for index, (got, want) in enumerate(zip(ours, params + ms + vs)):
        what = ("weight", "momentum", "velocity")[index // count]
        assert got.dtype == np.float32, f"{kind}: {what} {index % count} is {got.dtype}"
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-7, err_msg=f"{kind}: {what} {index % count}"
        )


def time_first_updates(layers, rounds=5):
    """Milliseconds of each of the first four `apply` calls of a new optimizer, per kind
    (medians over `rounds` fresh optimizers): the user's are eager, traced, first packed."""
    weights, gradients = make_problem(layers=layers)
    grads = [Tensor(g) for g in gradients[0]]
    times = {kind: [] for kind in OPTIMIZERS}
    for _ in range(rounds):
        for kind, cls in OPTIMIZERS.items():
            variables = [Variable(w) for w in weights]
            optimizer = cls(learning_rate=LEARNING_RATE)
            each = []
            for _ in range(4):
                start = time.perf_counter()
                optimizer.apply(grads, variables)
                each.append((time.perf_counter() - start) * 1e3)
            times[kind].append(each)
    return {kind: np.median(np.asarray(rows), axis=0).tolist() for kind, rows in times.items()}


def time_apply(layers, repeats, warmup):
    weights, gradients = make_problem(layers=layers)
    for kind in OPTIMIZERS:
        check_against_float64(kind, weights, gradients)
    steppers = {kind: Stepper(kind, weights, gradients) for kind in OPTIMIZERS}
    gc.collect()
    return interleave({kind: s.step for kind, s in steppers.items()}, repeats, warmup)


def fit_once(kind, seed=0):
    """One whole fit of the 64-64-10 MLP on the digits; returns (seconds, test accuracy)."""
    config = DIGITS_SMALL
    (x_train, y_train, x_test, y_test), weights = problems.fit_problem(config, seed)
    model = minikeras_model(weights)
    model.compile(
        optimizer=OPTIMIZERS[kind](learning_rate=problems.LEARNING_RATE),
        loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    start = time.perf_counter()
    model.fit(
        x_train, y_train, batch_size=config["batch"], epochs=config["epochs"],
        shuffle=False, verbose=0,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    logits = model.predict(x_test, verbose=0)
    return seconds, float(np.mean(logits.argmax(axis=1) == y_test))


def time_fit(repeats):
    accuracies = {}

    def timed(kind):
        def run(round_index):
            seconds, accuracies[kind] = fit_once(kind)
            return seconds

        return run

    gc.collect()
    samples = interleave({kind: timed(kind) for kind in OPTIMIZERS}, repeats, warmup=1)
    return samples, accuracies


def time_other_rule(name, layers, repeats, warmup):
    """`apply` of a user rule and of its built-in, interleaved; after a few steps the two
    must agree to float32 rounding (their orders of operations differ)."""
    user, built_in, shared, own = OTHER_RULES[name]
    weights, gradients = make_problem(layers=layers)
    grads = [[Tensor(g) for g in each] for each in gradients]
    steppers = {}
    for kind, optimizer in (("built-in", built_in(**shared, **own)), ("user", user(**shared))):
        variables = [Variable(w) for w in weights]

        def step(round_index, optimizer=optimizer, variables=variables):
            these = grads[round_index % DISTINCT_GRADIENTS]
            start = time.perf_counter()
            optimizer.apply(these, variables)
            return time.perf_counter() - start

        steppers[kind] = (step, variables)
    for round_index in range(6):
        for step, _ in steppers.values():
            step(round_index)
    for got, want in zip(steppers["user"][1], steppers["built-in"][1]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=1e-6, err_msg=name)
    gc.collect()
    return interleave({kind: step for kind, (step, _) in steppers.items()}, repeats, warmup)


def ratio_row(label, samples, unit):
    """Prints medians and each user Adam's ratio to the built-in; returns the figures."""
    stats = {kind: summarize(samples[kind]) for kind in OPTIMIZERS}
    scale = 1e-3 if unit == "ms" else 1.0
    ours = stats["built-in"]["median_us"]
    row = {"stats": stats}
    cells = f"{label:<34}{ours * scale:>10.1f}"
    for kind in ("user", "user packed"):
        theirs = stats[kind]["median_us"]
        paired = float(np.median(np.asarray(samples[kind]) / np.asarray(samples["built-in"])))
        row[kind] = {"ratio": theirs / ours, "paired_ratio": paired}
        cells += f"{theirs * scale:>10.1f}{theirs / ours:>7.2f}x"
    print(f"{cells}  {unit}")
    return row


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=300, help="timed apply rounds (300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed apply rounds (30)")
    parser.add_argument("--fit-repeats", type=int, default=5, help="timed fits of each (5)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0 or args.fit_repeats < 1:
        parser.error("--repeats and --fit-repeats must be positive, --warmup non-negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    info = versions()
    print(
        f"A user's Adam (Keras 3's update_step in mk.ops) against the built-in Adam; "
        f"python {info['python']}, numpy {info['numpy']}; BLAS threads: "
        + ", ".join(f"{name}={os.environ.get(name)}" for name in THREAD_ENV_VARS)
    )
    print("all three checked against float64 Adam by hand before timing")
    print()
    print(f"{'':<34}{'built-in':>10}{'user':>10}{'ratio':>8}{'packed':>10}{'ratio':>8}")
    results = {}
    for name, layers in PROBLEMS.items():
        samples = time_apply(layers, args.repeats, args.warmup)
        results[f"apply {name}"] = ratio_row(f"apply, {name} MLP weights", samples, "us")
    first = time_first_updates(PROBLEMS["64-64-10"])
    results["first updates 64-64-10"] = first
    for kind, each in first.items():
        cells = "".join(f"{t:>7.2f}" for t in each)
        print(f"first 4 applies, 64-64-10, {kind:<14}{cells}  ms")
    samples, accuracies = time_fit(args.fit_repeats)
    results["fit digits 64-64-10"] = ratio_row("fit, digits 64-64-10, 10 epochs", samples, "ms")
    results["fit digits 64-64-10"]["accuracy"] = accuracies
    print()
    print(f"{'other rules as users write them, apply':<50}{'built-in':>10}{'user':>10}{'ratio':>8}")
    for name in OTHER_RULES:
        for problem, layers in PROBLEMS.items():
            samples = time_other_rule(name, layers, args.repeats, args.warmup)
            ours, theirs = (summarize(samples[kind])["median_us"] for kind in ("built-in", "user"))
            results[f"apply {name} {problem}"] = {"built-in": ours, "user": theirs}
            label = f"{name}, {problem}"
            print(f"{label:<50}{ours:>10.1f}{theirs:>10.1f}{theirs / ours:>7.2f}x  us")
    print()
    print(
        f"medians of {args.repeats} apply rounds ({args.warmup} warm-up) and "
        f"{args.fit_repeats} fits (1 warm-up); test accuracy after the fit: "
        + ", ".join(f"{kind} {value:.3f}" for kind, value in accuracies.items())
    )
    if args.json:
        write_json(
            args.json,
            {"benchmark": "user_optimizer", "versions": info, "results": results},
        )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
