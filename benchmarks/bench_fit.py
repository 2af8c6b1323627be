"""`Model.fit` on a 784-256-128-10 MLP with Adam: minikeras against hand-written numpy.

The minikeras side is the public training API as a user calls it:
`model.fit(x, y, batch_size=128, epochs=E, shuffle=False, verbose=0)` on a
`Sequential` MLP compiled with `Adam(1e-3)` and
`SparseCategoricalCrossentropy(from_logits=True)`; its time per step is the
wall time of the whole `fit` call divided by its steps, nothing subtracted.
The numpy side is the same training loop written by hand, the way a careful
numpy programmer writes it: float32 throughout, Python-float scalars, the
forward pass, the softmax cross-entropy and its gradient, the backward pass,
and Adam with Keras's bias correction, updated in place (`out=`), over the
same batches (the same slices of the same arrays) in the same order.

To say where minikeras's time goes, the script also runs fit's step in its
pieces, as `fit` does them (forward and loss inside a `GradientTape`;
`tape.gradient`; `optimizer.apply`), each timed; what fit spends beyond those
three is its loop overhead. The numpy loop is timed in its pieces likewise.
Whole runs and piecewise runs of both sides alternate in one process, in an
order that rotates every round, with BLAS on one thread, so that a noisy
machine slows them alike.

Before timing, the script checks that from the same initial weights `fit` and
the numpy loop reach the same weights and Adam moments after a few steps, and
that the piecewise minikeras step reproduces `fit`.

Usage (from the repo root):
    python benchmarks/bench_fit.py [--epochs 2] [--repeats 30] [--json PATH] [--profile]
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
    blas_thread_report,
    interleave,
    summarize,
    versions,
    write_json,
)
from benchmarks.reference import BETA_1, BETA_2, EPSILON, Adam, NumpyMLP, dense_weights  # noqa: E402
from minikeras import GradientTape, Sequential, layers, losses, optimizers  # noqa: E402

LAYER_SIZES = (784, 256, 128, 10)
CLASSES = LAYER_SIZES[-1]
BATCH = 128
STEPS_PER_EPOCH = 40
LEARNING_RATE = 1e-3
TARGET_RATIO = 1.2
CHECK_STEPS = 5
WEIGHT_NAMES = ("kernel1", "bias1", "kernel2", "bias2", "kernel3", "bias3")


# ----------------------------------------------------------------- problem


def make_problem(samples, seed=0):
    """Seeded float32 inputs, int64 labels, and Glorot-uniform weights (non-zero biases)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, LAYER_SIZES[0]), dtype=np.float32)
    y = rng.integers(0, CLASSES, size=samples)
    return x, y, dense_weights(LAYER_SIZES, rng)


def make_model(weights):
    """The MLP as a user writes it, compiled for training, starting from `weights`."""
    model = Sequential(
        [
            layers.Input((LAYER_SIZES[0],)),
            layers.Dense(LAYER_SIZES[1], activation="relu"),
            layers.Dense(LAYER_SIZES[2], activation="relu"),
            layers.Dense(LAYER_SIZES[3]),
        ]
    )
    model.compile(
        optimizer=optimizers.Adam(learning_rate=LEARNING_RATE),
        loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.set_weights(weights)
    return model


# ----------------------------------------------------------------- minikeras


class MinikerasFit:
    """`model.fit` as a user calls it; `run` returns (seconds, steps)."""

    def __init__(self, weights):
        self.model = make_model(weights)

    def run(self, x, y, epochs, clock=time.perf_counter):
        start = clock()
        self.model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0)
        seconds = clock() - start
        return seconds, epochs * -(-len(x) // BATCH)


class MinikerasPieces:
    """fit's training loop reduced to its step, with each piece of the step timed.

    The pieces are what the default `train_step` does, in its order: forward and
    loss inside a `GradientTape`, `tape.gradient`, `optimizer.apply`, then
    `float(loss)`; the predictions live on until the next step, as in fit.
    """

    def __init__(self, weights):
        self.model = make_model(weights)
        self.weights = self.model.trainable_weights

    def run(self, x, y, epochs, samples, clock=time.perf_counter):
        model, weights = self.model, self.weights
        loss_function, optimizer = model.loss, model.optimizer
        y_pred = None
        for _ in range(epochs):
            for start in range(0, len(x), BATCH):
                batch_x, batch_y = x[start : start + BATCH], y[start : start + BATCH]
                t0 = clock()
                with GradientTape() as tape:
                    y_pred = model(batch_x, training=True)
                    loss = loss_function(batch_y, y_pred, sample_weight=None)
                t1 = clock()
                grads = tape.gradient(loss, weights)
                t2 = clock()
                optimizer.apply(grads, weights)
                t3 = clock()
                float(loss)
                del tape, loss, grads
                samples["forward"].append(t1 - t0)
                samples["backward"].append(t2 - t1)
                samples["optimizer"].append(t3 - t2)
                samples["pieces"].append(t3 - t0)


# ----------------------------------------------------------------- numpy


class NumpyTraining:
    """The same training loop by hand: `reference.NumpyMLP` and `reference.Adam`.

    Adam, per weight, with t the step (1 on the first) and Python-float scalars:
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        w -= lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)
    in that order of operations, as minikeras's `Adam._update_step` does it,
    in place, the update built in the gradient's own buffer.
    """

    def __init__(self, weights):
        self.mlp = NumpyMLP(weights)
        self.params = self.mlp.params
        # The rate as minikeras holds it, as Keras 3 does: in a float32 Variable.
        self.optimizer = Adam(self.params, float(np.float32(LEARNING_RATE)))
        self.momentums = self.optimizer.momentums
        self.velocities = self.optimizer.velocities
        self.forward = self.mlp.forward
        self.backward = self.mlp.backward
        self.adam = self.optimizer.apply

    def run(self, x, y, epochs, clock=time.perf_counter):
        """The whole loop, like fit; returns (seconds, steps)."""
        start = clock()
        steps = 0
        for _ in range(epochs):
            loss_total, count = 0.0, 0
            for begin in range(0, len(x), BATCH):
                batch_x, batch_y = x[begin : begin + BATCH], y[begin : begin + BATCH]
                loss, saved = self.forward(batch_x, batch_y)
                self.adam(self.backward(saved))
                loss_total += float(loss) * len(batch_y)
                count += len(batch_y)
                steps += 1
            self.epoch_loss = loss_total / count
        return clock() - start, steps

    def run_pieces(self, x, y, epochs, samples, clock=time.perf_counter):
        """The loop again, with forward (and loss), backward and Adam each timed."""
        for _ in range(epochs):
            for begin in range(0, len(x), BATCH):
                batch_x, batch_y = x[begin : begin + BATCH], y[begin : begin + BATCH]
                t0 = clock()
                loss, saved = self.forward(batch_x, batch_y)
                t1 = clock()
                grads = self.backward(saved)
                del saved
                t2 = clock()
                self.adam(grads)
                t3 = clock()
                float(loss)
                samples["forward"].append(t1 - t0)
                samples["backward"].append(t2 - t1)
                samples["optimizer"].append(t3 - t2)
                samples["pieces"].append(t3 - t0)


# ----------------------------------------------------------------- checks


def adam_state(model):
    """minikeras's Adam moments per weight, from the optimizer's public `variables`."""
    state = {"momentum": [], "velocity": []}
    for variable in model.optimizer.variables:
        for kind in state:
            if variable.name.endswith("_" + kind):
                state[kind].append(variable.numpy())
    return state["momentum"], state["velocity"]


def check_same_training(x, y, weights, steps=CHECK_STEPS):
    """Asserts fit, fit's pieces and the numpy loop reach the same weights and moments."""
    x, y = x[: steps * BATCH], y[: steps * BATCH]
    fitted = MinikerasFit(weights)
    history = fitted.model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    pieces = MinikerasPieces(weights)
    pieces.run(x, y, 1, {key: [] for key in ("forward", "backward", "optimizer", "pieces")})
    reference = NumpyTraining(weights)
    reference.run(x, y, 1)

    assert int(fitted.model.optimizer.iterations.numpy()) == steps, "fit made the wrong steps"
    fit_loss = history.history["loss"][0]
    np.testing.assert_allclose(fit_loss, reference.epoch_loss, rtol=1e-4, err_msg="epoch loss")
    fit_weights = [w.numpy() for w in fitted.model.trainable_weights]
    piece_weights = [w.numpy() for w in pieces.model.trainable_weights]
    momentums, velocities = adam_state(fitted.model)
    worst = 0.0
    for index, name in enumerate(WEIGHT_NAMES):
        start, ours, theirs = weights[index], fit_weights[index], reference.params[index]
        for array in (ours, theirs, momentums[index], velocities[index]):
            assert array.dtype == np.float32, f"{name}: {array.dtype}, expected float32"
        for array in (reference.momentums[index], reference.velocities[index]):
            assert array.dtype == np.float32, f"numpy {name} state: {array.dtype}"
        assert not np.array_equal(ours, start), f"fit did not change {name}"
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-7, err_msg=name)
        for kind, ours_state, theirs_state in (
            ("momentum", momentums, reference.momentums),
            ("velocity", velocities, reference.velocities),
        ):
            # Near zero, a few float32 steps at the moment's scale (an element that
            # cancels to 1e-7 differs in its third digit after as many roundings).
            atol = 4 * np.finfo(np.float32).eps * float(np.abs(theirs_state[index]).max())
            np.testing.assert_allclose(
                ours_state[index],
                theirs_state[index],
                rtol=1e-4,
                atol=atol,
                err_msg=f"{name} {kind}",
            )
        np.testing.assert_allclose(
            piece_weights[index], ours, rtol=1e-6, atol=0, err_msg=f"{name}: pieces vs fit"
        )
        moved = np.abs(ours - start).max()
        worst = max(worst, float(np.abs(ours - theirs).max() / moved))
    return {"steps": steps, "epoch_loss": fit_loss, "worst_difference_over_change": worst}


# ----------------------------------------------------------------- timing

PIECES = ("forward", "backward", "optimizer", "pieces")


def time_training(x, y, weights, epochs, repeats):
    """Whole and piecewise runs of both sides, interleaved; returns seconds per step.

    Each round runs the four contenders once each (E epochs), in an order that
    rotates every round. A whole run gives one sample, its seconds per step
    (`"minikeras_fit"`, `"numpy_loop"`). A piecewise run gives one sample per
    step and piece (`"minikeras_forward"`, ...) and, per piece, the run's mean
    per step (`"minikeras_forward_run_mean"`, ...), comparable with a whole run.
    """
    fit, pieces = MinikerasFit(weights), MinikerasPieces(weights)
    whole_numpy, pieces_numpy = NumpyTraining(weights), NumpyTraining(weights)
    samples = {"minikeras_fit": [], "numpy_loop": []}
    for side in ("minikeras", "numpy"):
        for key in PIECES:
            samples[f"{side}_{key}"] = []
            samples[f"{side}_{key}_run_mean"] = []

    def whole(name, run):
        def contender():
            seconds, steps = run(x, y, epochs)
            samples[name].append(seconds / steps)

        return contender

    def piecewise(side, run):
        def contender():
            per_step = {key: [] for key in PIECES}
            run(x, y, epochs, per_step)
            for key, values in per_step.items():
                samples[f"{side}_{key}"].extend(values)
                samples[f"{side}_{key}_run_mean"].append(sum(values) / len(values))

        return contender

    contenders = [
        whole("minikeras_fit", fit.run),
        piecewise("minikeras", pieces.run),
        whole("numpy_loop", whole_numpy.run),
        piecewise("numpy", pieces_numpy.run_pieces),
    ]
    # Warm-up: one epoch of each, untimed (the first fit also builds Adam's state).
    fit.run(x, y, 1)
    pieces.run(x, y, 1, {key: [] for key in PIECES})
    whole_numpy.run(x, y, 1)
    pieces_numpy.run_pieces(x, y, 1, {key: [] for key in PIECES})
    gc.collect()
    interleave({index: (lambda _, run=run: run()) for index, run in enumerate(contenders)}, repeats)
    return samples


def breakdown(stats, side, whole_key):
    """Where a side's step goes: its pieces and its loop overhead, in µs per step.

    Medians over rounds of each run's mean per step, so that the loop overhead
    (the whole run's time per step minus its pieces') compares like with like.
    """
    parts = {"step": stats[whole_key]["median_us"]}
    for key in PIECES:
        parts[key] = stats[f"{side}_{key}_run_mean"]["median_us"]
    parts["loop_overhead"] = parts["step"] - parts["pieces"]
    return parts


def profile_fit(x, y, weights, epochs):
    """Prints cProfile's top functions for one fit of `epochs` epochs."""
    import cProfile
    import pstats

    fit = MinikerasFit(weights)
    fit.run(x, y, 1)
    profiler = cProfile.Profile()
    profiler.enable()
    fit.run(x, y, epochs)
    profiler.disable()
    steps = epochs * -(-len(x) // BATCH)
    print(f"\ncProfile of fit, {epochs} epoch(s), {steps} steps (tottime includes BLAS calls):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


# ----------------------------------------------------------------- report


def print_report(args, info, threads, check, stats, parts, ratios):
    steps = args.epochs * STEPS_PER_EPOCH
    print(
        f"minikeras fit: {'-'.join(map(str, LAYER_SIZES))} MLP (relu, relu, linear), "
        f"batch {BATCH}, Adam lr={LEARNING_RATE}, sparse CE from logits, float32"
    )
    print(
        f"python {info['python']}, numpy {info['numpy']}, autograd {info['autograd']}, "
        f"minikeras {info['minikeras']}, {info['cpu_count']} CPUs"
    )
    env = ", ".join(f"{name}={value}" for name, value in threads["env"].items())
    tpc = threads["threadpoolctl"]
    tpc_text = tpc if isinstance(tpc, str) else "limits set to 1"
    print(f"BLAS threads: {env}; threadpoolctl: {tpc_text}; ", end="")
    print(f"OpenBLAS reports {threads['openblas_num_threads']} thread(s)")
    print(
        f"data: {STEPS_PER_EPOCH * BATCH} samples ({STEPS_PER_EPOCH} steps an epoch); "
        f"{args.repeats} rounds of fit(epochs={args.epochs}) = {steps} steps, numpy loop, "
        "and both in timed pieces, interleaved (order rotating), after one warm-up epoch each"
    )
    print(
        f"checked first: after {check['steps']} steps from the same weights, fit and numpy agree "
        f"on weights and Adam moments (rtol 1e-4; largest difference "
        f"{check['worst_difference_over_change']:.1e} of the change), epoch loss "
        f"{check['epoch_loss']:.4f}; fit's pieces reproduce fit"
    )
    print()
    header = f"{'per step':<40}{'median µs':>11}{'p25':>9}{'p75':>9}{'IQR':>8}{'n':>7}"
    print(header)
    print("-" * len(header))
    rows = [
        ("minikeras: fit / steps", "minikeras_fit"),
        ("  forward + loss (in tape)", "minikeras_forward"),
        ("  tape.gradient", "minikeras_backward"),
        ("  optimizer.apply (Adam)", "minikeras_optimizer"),
        ("  the three pieces together", "minikeras_pieces"),
        ("numpy: whole loop / steps", "numpy_loop"),
        ("  forward + loss", "numpy_forward"),
        ("  backward", "numpy_backward"),
        ("  Adam (in place)", "numpy_optimizer"),
        ("  the three pieces together", "numpy_pieces"),
    ]
    for label, key in rows:
        s = stats[key]
        print(
            f"{label:<40}{s['median_us']:>11.1f}{s['p25_us']:>9.1f}{s['p75_us']:>9.1f}"
            f"{s['iqr_us']:>8.1f}{s['n']:>7}"
        )
    print()
    mk, ref = parts["minikeras"], parts["numpy"]
    print(f"where the step goes: µs per step (a run's mean), median over {args.repeats} rounds")
    header = f"{'':<34}{'minikeras':>10}{'numpy':>9}{'ratio':>8}{'extra':>9}{'share':>8}"
    print(header)
    print("-" * len(header))
    labels = {
        "forward": "forward + loss",
        "backward": "backward (tape.gradient)",
        "optimizer": "optimizer (Adam)",
        "loop_overhead": "loop overhead (whole - pieces)",
        "step": "whole step",
    }
    extra_total = mk["step"] - ref["step"]
    for key, label in labels.items():
        extra = mk[key] - ref[key]
        # A ratio of two near-zero loop overheads says nothing.
        meaningful = key != "loop_overhead" and ref[key] > 0
        ratio = f"{mk[key] / ref[key]:>8.2f}" if meaningful else f"{'-':>8}"
        share = f"{100 * extra / extra_total:>7.0f}%" if extra_total > 0 else f"{'-':>8}"
        print(f"{label:<34}{mk[key]:>10.1f}{ref[key]:>9.1f}{ratio}{extra:>+9.1f}{share}")
    print()
    verdict = "OK" if ratios["fit_over_numpy"] <= TARGET_RATIO else "OVER TARGET"
    print(
        f"ratio fit / numpy loop (medians):        {ratios['fit_over_numpy']:.3f}  "
        f"(target <= {TARGET_RATIO}: {verdict})"
    )
    print(
        f"ratio fit / numpy loop (paired rounds):  median {ratios['paired_median']:.3f}, "
        f"quartiles {ratios['paired_p25']:.3f}-{ratios['paired_p75']:.3f}"
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--epochs", type=int, default=2, help="epochs of each timed fit (default 2)"
    )
    parser.add_argument(
        "--repeats", type=int, default=30, help="timed rounds of each contender (default 30)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="afterwards, cProfile one fit of --epochs epochs and print the top functions",
    )
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.repeats < 1:
        parser.error("--epochs and --repeats must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    threads = blas_thread_report()
    info = versions()
    x, y, weights = make_problem(STEPS_PER_EPOCH * BATCH)
    check = check_same_training(x, y, weights)

    samples = time_training(x, y, weights, args.epochs, args.repeats)
    stats = {key: summarize(values) for key, values in samples.items()}
    parts = {
        "minikeras": breakdown(stats, "minikeras", "minikeras_fit"),
        "numpy": breakdown(stats, "numpy", "numpy_loop"),
    }
    paired = np.asarray(samples["minikeras_fit"]) / np.asarray(samples["numpy_loop"])
    ratios = {
        "fit_over_numpy": parts["minikeras"]["step"] / parts["numpy"]["step"],
        "paired_median": float(np.median(paired)),
        "paired_p25": float(np.percentile(paired, 25)),
        "paired_p75": float(np.percentile(paired, 75)),
        "target": TARGET_RATIO,
    }
    print_report(args, info, threads, check, stats, parts, ratios)

    if args.json:
        record = {
            "benchmark": "fit",
            "config": {
                "layers": LAYER_SIZES,
                "batch": BATCH,
                "samples": len(x),
                "epochs": args.epochs,
                "repeats": args.repeats,
                "learning_rate": LEARNING_RATE,
                "beta_1": BETA_1,
                "beta_2": BETA_2,
                "epsilon": EPSILON,
                "dtype": "float32",
            },
            "versions": info,
            "threads": threads,
            "check": check,
            "stats_us": stats,
            "breakdown_us": parts,
            "ratios": ratios,
            "samples_us": {key: [v * 1e6 for v in values] for key, values in samples.items()},
        }
        write_json(args.json, record)
        print(f"\nwrote {args.json}")

    if args.profile:
        profile_fit(x, y, weights, args.epochs)


if __name__ == "__main__":
    main()
