"""Where a tape step's time over numpy's goes: sampled by `perf`, split by shared object.

`bench_instructions.py` counts instructions: the Sequential step runs 1.02x
numpy's, yet takes 1.1-1.3x its time. This script measures the time itself
and says which code it is spent in. The contenders run interleaved in one
process (each round in turn, the order reversed every other round), so a
slow phase of a shared machine slows them all alike. The process runs under
`perf record` sampling the CPU clock, with the kernel's monotonic clock as
the samples' time stamps, and the worker logs when each step began and ended
on the same clock. Each sample is then given to the step it fell in and
summed by the shared object it was in:

- `BLAS`: OpenBLAS (the matrix products, and minikeras's SGD through saxpy);
- `numpy`: numpy's own extension modules (ufuncs, reductions, indexing);
- `Python`: the interpreter (libpython, or a `python` built without it);
- `libc`: the C library and libm (memset, memcpy, malloc);
- `ctypes`: `_ctypes` and libffi (how minikeras calls saxpy);
- `kernel` and `other`.

Read a group's microseconds per step against numpy's row: the difference
is where the step's extra time is. Sampling slows every step (the timings
under perf are not `bench_mlp_step.py`'s), but it slows the contenders
alike, so the shares hold. `--sizes 8,8,8,2 --batch 2` runs a model too
small for BLAS to matter: its Python row against the full-size row's says
how much slower the same interpreted code runs between matrix products.

Usage (from the repo root; Linux with `perf` on the PATH, ~30 s a run):
    python benchmarks/bench_time_split.py [--batch 32] [--rounds 1500]
        [--sizes 784,256,128,10] [--frequency 1000]
        [--kinds numpy,closure,sequential] [--json PATH]
"""

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from benchmarks.common import pin_threads  # noqa: E402  (imports no numpy)

pin_threads(1)  # BLAS reads its thread count once, when numpy first loads it

import argparse  # noqa: E402
import bisect  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

__all__ = ["GROUPS", "attribute", "group_of", "parse_perf_script", "run_worker", "table"]

GROUPS = ("BLAS", "numpy", "Python", "libc", "ctypes", "kernel", "other")
WARMUP_ROUNDS = 100
_GROUP_MARKS = (  # (group, what its object's path holds), the first match wins
    ("BLAS", ("openblas", "libblas", "mkl_")),
    ("ctypes", ("_ctypes", "libffi")),
    ("numpy", ("/numpy/", "/numpy.libs/")),
    ("Python", ("/libpython", "/python")),  # (the file's name begins so: not a directory's)
    ("libc", ("/libc.so", "/libc-", "/libm.so", "/libm-")),
    ("kernel", ("[kernel", "[vdso")),
)


def group_of(dso):
    """The group (one of `GROUPS`) a shared object's path belongs to.

    Args:
        dso: the object's path as `perf script` prints it.

    Returns:
        A name from `GROUPS`.

    Example:
        >>> from benchmarks.bench_time_split import group_of
        >>> group_of("/venv/lib/numpy.libs/libscipy_openblas64_-32a4b2a6.so")
        'BLAS'
        >>> group_of("/venv/lib/numpy/_core/_multiarray_umath.cpython-311.so")
        'numpy'
        >>> group_of("/usr/lib/x86_64-linux-gnu/libc.so.6"), group_of("[unknown]")
        ('libc', 'other')
        >>> group_of("/venv/lib/python3.11/libpython3.11.so.1.0"), group_of("/venv/bin/python3")
        ('Python', 'Python')
    """
    name = "/" + dso.rpartition("/")[2]  # (the file, for the marks that name one)
    for group, marks in _GROUP_MARKS:
        if any(mark in (name if mark.startswith(("/lib", "/python")) else dso) for mark in marks):
            return group
    return "other"


def parse_perf_script(text):
    """The samples in `perf script -F time,ip,sym,dso --ns` output.

    Args:
        text: that output, one sample a line:
            `<seconds>.<ns>: <ip> <symbol> (<object path>)`.

    Returns:
        A list of `(time_ns, symbol, dso)`, in the text's order; lines that
        are not samples are skipped.

    Example:
        >>> from benchmarks.bench_time_split import parse_perf_script
        >>> parse_perf_script("  12.000000005:  7f01 sgemm_kernel (/lib/libopenblas.so)\\n")
        [(12000000005, 'sgemm_kernel', '/lib/libopenblas.so')]
    """
    samples = []
    for line in text.splitlines():
        stamp, _, rest = line.strip().partition(": ")
        seconds, dot, nanoseconds = stamp.partition(".")
        if not (dot and seconds.isdigit() and nanoseconds.isdigit()):
            continue
        fields = rest.split(None, 1)  # (the ip, then the symbol and the object)
        if len(fields) < 2:
            continue
        symbol, _, dso = fields[1].rpartition(" (")
        samples.append(
            (int(seconds) * 10**9 + int(nanoseconds.ljust(9, "0")[:9]), symbol, dso[:-1])
        )
    return samples


def attribute(samples, steps):
    """Each contender's samples by group, from the samples and the logged steps.

    Args:
        samples: `(time_ns, symbol, dso)`, as `parse_perf_script` returns.
        steps: `(kind, start_ns, end_ns)`, one per step taken, not overlapping.

    Returns:
        `{kind: Counter(group -> samples)}`; a sample outside every step
        (set-up, warm-up, the worker's own logging) is in none.

    Example:
        >>> from benchmarks.bench_time_split import attribute
        >>> steps = [("numpy", 0, 10), ("sequential", 20, 40)]
        >>> samples = [(5, "f", "/lib/libopenblas.so"), (15, "g", "/lib/libc.so.6"),
        ...            (25, "h", "/lib/libpython3.11.so"), (40, "h", "/lib/libc.so.6")]
        >>> {kind: dict(groups) for kind, groups in attribute(samples, steps).items()}
        {'numpy': {'BLAS': 1}, 'sequential': {'Python': 1, 'libc': 1}}
    """
    steps = sorted(steps, key=lambda step: step[1])
    starts = [start for _, start, _ in steps]
    counts = {kind: Counter() for kind, _, _ in steps}
    for stamp, _, dso in samples:
        index = bisect.bisect_right(starts, stamp) - 1
        if index >= 0 and stamp <= steps[index][2]:
            counts[steps[index][0]][group_of(dso)] += 1
    return counts


def run_worker(kinds, batch, rounds, sizes, log_path, clock=time.clock_gettime_ns):
    """The sampled process: warm the contenders up, then time `rounds` interleaved rounds.

    Args:
        kinds: contender names (`bench_instructions.STEP_KINDS`).
        batch: the batch size.
        rounds: timed rounds; each takes one step of every contender.
        sizes: the MLP's layer widths, input first.
        log_path: where to write one line per step, `kind start_ns end_ns`.
        clock: `clock(clock_id)` in ns; `time.CLOCK_MONOTONIC` is asked for,
            the clock `perf record -k CLOCK_MONOTONIC` stamps samples with.

    Returns:
        The steps taken, `(kind, start_ns, end_ns)`, as written.

    Example:
        >>> import tempfile, os
        >>> from benchmarks.bench_time_split import run_worker
        >>> path = os.path.join(tempfile.mkdtemp(), "steps.log")
        >>> steps = run_worker(["numpy", "sequential"], 2, 3, (8, 4, 2), path)
        >>> [kind for kind, _, _ in steps]
        ['sequential', 'numpy', 'numpy', 'sequential', 'sequential', 'numpy']
        >>> len(open(path).read().splitlines())
        6
    """
    from benchmarks.bench_instructions import step_contender

    contenders = []
    for kind in kinds:
        step, batches = step_contender(kind, batch, sizes)
        contenders.append((kind, step, batches))
    for index in range(WARMUP_ROUNDS):
        for _, step, batches in contenders:
            step(*batches[index % len(batches)])
    monotonic, steps = time.CLOCK_MONOTONIC, []
    for index in range(rounds):
        for kind, step, batches in contenders if index % 2 else contenders[::-1]:
            data = batches[index % len(batches)]
            start = clock(monotonic)
            step(*data)
            steps.append((kind, start, clock(monotonic)))
    with open(log_path, "w") as log:
        log.writelines(f"{kind} {start} {end}\n" for kind, start, end in steps)
    return steps


def table(counts, steps, frequency):
    """The report's lines: each contender's median step and its sampled time by group.

    Args:
        counts: `{kind: Counter(group -> samples)}`, as `attribute` returns.
        steps: the logged `(kind, start_ns, end_ns)`.
        frequency: samples a second `perf` took.

    Returns:
        A list of strings: a header, a row per contender (microseconds per
        step: the median step, then each group), and for each contender but
        `numpy` a row of its difference from numpy's, when numpy ran.

    Example:
        >>> from collections import Counter
        >>> from benchmarks.bench_time_split import table
        >>> steps = [("numpy", 0, 3_000_000), ("sequential", 4_000_000, 7_500_000)]
        >>> counts = {"numpy": Counter(BLAS=2), "sequential": Counter(BLAS=2, Python=1)}
        >>> lines = table(counts, steps, 1000.0)  # (a sample stands for 1,000 us)
        >>> lines[-1].split()[:5]  # step, BLAS, numpy, Python
        ['sequential-numpy', '500', '0', '0', '1000']
    """
    per_step = 1e6 / frequency  # microseconds a sample stands for
    durations = {}
    for kind, start, end in steps:
        durations.setdefault(kind, []).append(end - start)
    rows = {}
    for kind, taken in durations.items():
        rows[kind] = [statistics.median(taken) / 1e3] + [
            counts.get(kind, Counter())[group] * per_step / len(taken) for group in GROUPS
        ]
    lines = [
        f"microseconds per step, sampled at {frequency:g} Hz (median step, then each group)",
        f"{'contender':18s} {'step':>8s}" + "".join(f"{group:>8s}" for group in GROUPS),
    ]
    for kind, row in rows.items():
        lines.append(f"{kind:18s}" + "".join(f"{value:8.0f}" for value in row))
    if "numpy" in rows:
        for kind, row in rows.items():
            if kind != "numpy":
                difference = [mine - theirs for mine, theirs in zip(row, rows["numpy"])]
                lines.append(f"{kind + '-numpy':18s}" + "".join(f"{v:8.0f}" for v in difference))
    return lines


def _sampled(args):
    with tempfile.TemporaryDirectory() as scratch:
        data, log = os.path.join(scratch, "perf.data"), os.path.join(scratch, "steps.log")
        worker = [sys.executable, os.path.abspath(__file__), "--worker", log]
        worker += ["--batch", str(args.batch), "--rounds", str(args.rounds)]
        worker += ["--sizes", args.sizes, "--kinds", args.kinds]
        record = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency)]
        record += ["-k", "CLOCK_MONOTONIC", "-o", data, "--"]
        done = subprocess.run(record + worker, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"bench_time_split: perf record failed: {done.stderr[-2000:]}")
        script = ["perf", "script", "-i", data, "-F", "time,ip,sym,dso", "--ns"]
        done = subprocess.run(script, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"bench_time_split: perf script failed: {done.stderr[-2000:]}")
        with open(log) as lines:
            steps = [(kind, int(a), int(b)) for kind, a, b in map(str.split, lines)]
    return parse_perf_script(done.stdout), steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1500)
    parser.add_argument("--sizes", default="784,256,128,10")
    parser.add_argument("--frequency", type=int, default=1000)
    parser.add_argument("--kinds", default="numpy,closure,sequential")
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", metavar="LOG", default=None)
    args = parser.parse_args(argv)
    kinds = [kind for kind in args.kinds.split(",") if kind]
    sizes = tuple(int(width) for width in args.sizes.split(","))
    if args.worker:
        run_worker(kinds, args.batch, args.rounds, sizes, args.worker)
        return
    if shutil.which("perf") is None:
        sys.exit("bench_time_split: perf is not on the PATH (apt install linux-perf)")
    samples, steps = _sampled(args)
    counts = attribute(samples, steps)
    print(f"MLP {args.sizes}, batch {args.batch}, {args.rounds} interleaved rounds")
    print("\n".join(table(counts, steps, args.frequency)))
    if args.json:
        from benchmarks.common import write_json

        options = {key: value for key, value in vars(args).items() if key not in ("json", "worker")}
        record = {kind: dict(groups) for kind, groups in counts.items()}
        taken = Counter(kind for kind, _, _ in steps)
        write_json(args.json, {"options": options, "samples": record, "steps": dict(taken)})


if __name__ == "__main__":
    main()
