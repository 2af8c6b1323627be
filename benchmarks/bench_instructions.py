"""Issue #17's overhead rows counted in CPU instructions, not timed: a figure noise cannot move.

On a shared machine the timed ratios move by 10-20% from one run to the next
(neighbours share the caches and the memory bus). This script runs each
contender under valgrind's cachegrind, which counts every instruction the
process executes, so the same tree gives the same figure on every run
(`PYTHONHASHSEED=0`, BLAS on one thread). Each figure is the difference of
two runs of one worker, `n` steps and none, divided by `n`: imports, data and
warm-up steps cancel out. Beside the instructions it gives the branches
cachegrind's simple predictor model mispredicts (interpreted Python branches
far more than BLAS does: most of a tape step's time over numpy's that
instructions do not show is there).

What instructions are not: time. A BLAS kernel retires two or three
instructions a cycle; the interpreter running minikeras's Python retires
fewer, stalls on mispredicted branches and on memory the matrix products
evicted. So a contender at 1.02x numpy's instructions may take 1.1-1.2x
its time: read this beside `bench_mlp_step.py`'s timings, never instead of
them.

Contenders (the same as `bench_mlp_step.py`'s and the suite's fit case):

- `numpy`: the 784-256-128-10 step by hand, SGD in place (`NumpyStep`);
- `closure`: numpy's arithmetic recorded as closures (`ClosureTapeStep`);
- `sequential`, `subclassed`: the model called in a `GradientTape`, the loss
  object, `SGD.apply_gradients` (`ModelStep`), issue #17's rows;
- `fit-numpy`, `fit-minikeras`: the suite's digits fit (64-64-10, batch
  32, Adam), a fresh model's whole `fit` against the hand-written loop,
  per step (45 steps an epoch); the difference of `epochs` and no epochs
  keeps `fit`'s one-off work (its first step, the recording of the compiled
  step) in, as the timed case does.

Usage (from the repo root; needs valgrind on the PATH, ~1 minute a run):
    python benchmarks/bench_instructions.py [--batch-sizes 32,128] [--steps 40]
        [--epochs 10] [--kinds numpy,closure,sequential,subclassed,fit] [--json PATH]
"""

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from benchmarks.common import pin_threads  # noqa: E402  (imports no numpy)

pin_threads(1)  # BLAS reads its thread count once, when numpy first loads it

import argparse  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

__all__ = [
    "count_per_step",
    "parse_cachegrind",
    "per_step",
    "run_worker",
    "step_contender",
    "table",
]

STEP_KINDS = ("numpy", "closure", "sequential", "subclassed")
MLP_SIZES = (784, 256, 128, 10)
FIT_KINDS = ("fit-numpy", "fit-minikeras")
LEARNING_RATE = 0.01
WARMUP_STEPS = 20
_COUNTS = {
    "instructions": re.compile(r"I\s+refs:\s+([\d,]+)"),
    "mispredicts": re.compile(r"Mispredicts:\s+([\d,]+)"),
}


def parse_cachegrind(text):
    """The counts in cachegrind's summary (its stderr).

    Args:
        text: what `valgrind --tool=cachegrind --branch-sim=yes` printed.

    Returns:
        A dict: `instructions`, and `mispredicts` when branches were simulated.

    Raises:
        ValueError: if the text holds no instruction count (valgrind failed).

    Example:
        >>> from benchmarks.bench_instructions import parse_cachegrind
        >>> parse_cachegrind("==1== I   refs:      4,024,177\\n==1== Mispredicts:  56,384  (x)")
        {'instructions': 4024177, 'mispredicts': 56384}
    """
    counts = {}
    for name, pattern in _COUNTS.items():
        match = pattern.search(text)
        if match:
            counts[name] = int(match.group(1).replace(",", ""))
    if "instructions" not in counts:
        raise ValueError(f"no instruction count in cachegrind's output: {text[-400:]!r}")
    return counts


def per_step(without, with_steps, steps):
    """Each count's increase per step, from runs of no steps and of `steps` steps.

    Args:
        without: the counts of the run that took no step.
        with_steps: the counts of the run that took `steps` steps.
        steps: how many steps the second run took (> 0).

    Returns:
        A dict of floats, one per count both runs have.

    Example:
        >>> from benchmarks.bench_instructions import per_step
        >>> per_step({"instructions": 100}, {"instructions": 700}, 3)
        {'instructions': 200.0}
    """
    return {
        name: (with_steps[name] - without[name]) / steps for name in without if name in with_steps
    }


def step_contender(kind, batch, sizes=MLP_SIZES):
    """One of `STEP_KINDS`, built on seeded data: its step function and its batches.

    Args:
        kind: one of `STEP_KINDS`.
        batch: the batch size.
        sizes: the MLP's layer widths, input first (the issue's 784-256-128-10).

    Returns:
        `(step, batches)`: `step(x, labels)` takes one SGD step; `batches` is
        a list of `(x, labels)`.

    Raises:
        ValueError: for an unknown kind.

    Example:
        >>> from benchmarks.bench_instructions import step_contender
        >>> step, batches = step_contender("sequential", 2, sizes=(8, 4, 2))
        >>> loss = step(*batches[0])  # one SGD step on the first batch
        >>> batches[0][0].shape, batches[0][1].shape
        ((2, 8), (2,))
    """
    from benchmarks.bench_mlp_step import ClosureTapeStep, ModelStep, NumpyStep
    from benchmarks.mlp import minikeras_model, subclassed_model
    from benchmarks.problems import mlp_problem

    if kind not in STEP_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {STEP_KINDS}")
    batches, weights = mlp_problem(tuple(sizes), batch, 0)
    if kind == "numpy":
        step = NumpyStep(weights, LEARNING_RATE).step
    elif kind == "closure":
        tape = ClosureTapeStep(weights, LEARNING_RATE)

        def step(x, labels):
            _, grads = tape.forward_backward(x, labels)
            tape.mlp.update(grads, LEARNING_RATE)

    else:
        make = minikeras_model if kind == "sequential" else subclassed_model
        step = ModelStep(make, weights, LEARNING_RATE).step
    return step, batches


def _digits_fit(kind, epochs):
    """One of the suite's digits fits (`accuracy.NumpyFit`, `accuracy.MinikerasFit`) for
    `epochs` epochs (none: everything but the loop, its test accuracy included); returns
    its steps."""
    from benchmarks.accuracy import DIGITS_SMALL, MinikerasFit, NumpyFit

    contender = NumpyFit if kind == "fit-numpy" else MinikerasFit
    contender(dict(DIGITS_SMALL, epochs=epochs)).fit(0)
    return epochs * _fit_steps_per_epoch()


def run_worker(kind, batch, count):
    """What one counted process does: set up `kind`, warm it up, then take `count` steps.

    Args:
        kind: one of `STEP_KINDS` or `FIT_KINDS`.
        batch: the step's batch size (a fit's is the suite's, 32).
        count: steps to take (epochs for a fit kind); 0 for the baseline run.

    Returns:
        The number of steps taken.

    Raises:
        ValueError: for an unknown kind.

    Example:
        >>> from benchmarks.bench_instructions import run_worker
        >>> run_worker("numpy", 4, 2)
        2
    """
    if kind in FIT_KINDS:
        _digits_fit(kind, 1)  # a throwaway model: the fit code's first run, in both runs
        return _digits_fit(kind, count)
    if kind not in STEP_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {STEP_KINDS + FIT_KINDS}")
    step, batches = step_contender(kind, batch)
    for index in range(WARMUP_STEPS + count):
        step(*batches[index % len(batches)])
    return count


def _counted(kind, batch, count):
    command = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--branch-sim=yes",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        kind,
        str(batch),
        str(count),
    ]
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"{kind} (batch {batch}, {count}) failed: {done.stderr[-2000:]}")
    return parse_cachegrind(done.stderr)


def count_per_step(kind, batch, count, jobs=2):
    """Per-step counts of `kind`: its run of `count` steps minus its run of none.

    Args:
        kind: one of `STEP_KINDS` or `FIT_KINDS`.
        batch: the step's batch size.
        count: steps (epochs for a fit kind) of the counted run.
        jobs: how many of the two runs go at once.

    Returns:
        A dict of per-step floats: `instructions`, `mispredicts`.

    Raises:
        RuntimeError: if valgrind or the worker failed.
    """
    with ThreadPoolExecutor(jobs) as pool:
        base, counted = pool.map(lambda n: _counted(kind, batch, n), (0, count))
    return per_step(base, counted, count * _fit_steps_per_epoch() if kind in FIT_KINDS else count)


def _fit_steps_per_epoch():
    from benchmarks import problems
    from benchmarks.accuracy import DIGITS_SMALL

    (x, _, _, _), _ = problems.fit_problem(dict(DIGITS_SMALL), 0)
    return len(problems.batch_slices(len(x), DIGITS_SMALL["batch"]))


def table(rows):
    """The report's lines: each row's per-step counts and their ratios to numpy's.

    Args:
        rows: `{name: counts}`, names `"<kind> B=<batch>"` or a fit kind; a
            row's reference is `numpy` at its batch size, or `fit-numpy`.

    Returns:
        A list of strings, a header first.

    Example:
        >>> from benchmarks.bench_instructions import table
        >>> rows = {"numpy B=32": {"instructions": 100.0}}
        >>> rows["sequential B=32"] = {"instructions": 102.0}
        >>> table(rows)[-1].split()
        ['sequential', 'B=32', '102', '1.020', 'nan', '-']
    """
    lines = [
        "per step (cachegrind, PYTHONHASHSEED=0, BLAS on one thread)",
        f"{'contender':24s} {'instructions':>14s} {'vs numpy':>9s} "
        f"{'mispredicts':>12s} {'vs numpy':>9s}",
    ]
    for name, counts in rows.items():
        fit = name.startswith("fit")
        reference = rows.get("fit-numpy" if fit else f"numpy {name.split()[-1]}", {})
        ratios = [
            f"{counts[key] / reference[key]:.3f}" if key in reference and key in counts else "-"
            for key in ("instructions", "mispredicts")
        ]
        lines.append(
            f"{name:24s} {counts['instructions']:14,.0f} {ratios[0]:>9s} "
            f"{counts.get('mispredicts', float('nan')):12,.0f} {ratios[1]:>9s}"
        )
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="32,128")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--kinds", default="numpy,closure,sequential,subclassed,fit")
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", nargs=3, metavar=("KIND", "BATCH", "COUNT"))
    args = parser.parse_args(argv)
    if args.worker:
        kind, batch, count = args.worker
        run_worker(kind, int(batch), int(count))
        return
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is not on the PATH (apt install valgrind)")
    kinds = [kind for kind in args.kinds.split(",") if kind]
    rows = {}
    for batch in [int(size) for size in args.batch_sizes.split(",")]:
        for kind in [kind for kind in kinds if kind in STEP_KINDS]:
            rows[f"{kind} B={batch}"] = count_per_step(kind, batch, args.steps)
            print(f"  {kind} B={batch}: {rows[f'{kind} B={batch}']}", file=sys.stderr)
    if "fit" in kinds:
        for kind in FIT_KINDS:
            rows[kind] = count_per_step(kind, 32, args.epochs)
    print("\n".join(table(rows)))
    if args.json:
        from benchmarks.common import write_json

        write_json(args.json, {"unit": "per step", "rows": rows})


if __name__ == "__main__":
    main()
