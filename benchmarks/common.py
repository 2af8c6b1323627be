"""What every benchmark shares: thread pinning, interleaved timing, summaries, machine facts.

This module imports numpy only inside the functions that need it, so that
`pin_threads` can run before numpy's first import: BLAS reads its thread
count once, when it is loaded.

Example (a script's first lines, before anything imports numpy):
    >>> from benchmarks.common import pin_threads
    >>> pin_threads(1)  # doctest: +SKIP
"""

import ctypes
import json
import os
import platform
import random
import resource
import statistics
import sys
import time
from importlib import metadata

THREAD_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_cpus_before_pinning = None  # what `nproc` said before `pin_cpus`, for machine_info
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------- threads


def thread_environment(threads):
    """The environment variables that hold BLAS, OpenMP and XLA to `threads` threads."""
    env = {name: str(threads) for name in THREAD_ENV_VARS}
    # XLA's CPU backend runs its own Eigen pool; this flag keeps it to the calling thread.
    if threads == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return env


def pin_threads(threads=1):
    """Sets the thread environment variables; call it before numpy is first imported.

    Args:
        threads: positive int, threads for BLAS (and OpenMP, XLA).

    Returns:
        True if numpy was not imported yet (the setting takes effect), else False.
    """
    os.environ.update(thread_environment(threads))
    return "numpy" not in sys.modules


def pin_cpus(threads):
    """Restricts this process, and the processes it starts, to `threads` of its CPUs.

    Thread-count settings are requests that not every library honours (XLA's
    CPU runtime runs its matrix products on two threads despite its flags);
    an affinity mask holds every thread of every library. Returns the CPUs
    kept, or None where the OS has no affinity call.
    """
    global _cpus_before_pinning
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    _cpus_before_pinning = _cpus_before_pinning or len(allowed)
    kept = allowed[:threads]
    os.sched_setaffinity(0, kept)
    return kept


def blas_thread_report(threads=1):
    """How BLAS threads are pinned: env vars, threadpoolctl if installed, OpenBLAS itself."""
    report = {"env": {name: os.environ.get(name) for name in THREAD_ENV_VARS}}
    try:
        import threadpoolctl
    except ImportError:
        report["threadpoolctl"] = "not importable"
    else:
        threadpoolctl.threadpool_limits(threads)
        report["threadpoolctl"] = [
            {key: info.get(key) for key in ("internal_api", "version", "num_threads")}
            for info in threadpoolctl.threadpool_info()
        ]
    report["openblas_num_threads"] = openblas_threads()
    if hasattr(os, "sched_getaffinity"):
        report["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    return report


def openblas_threads():
    """Asks the loaded OpenBLAS for its thread count (Linux only), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    symbols = (
        "scipy_openblas_get_num_threads64_",
        "openblas_get_num_threads64_",
        "openblas_get_num_threads",
    )
    for path in sorted(paths):
        library = ctypes.CDLL(path)
        for symbol in symbols:
            if hasattr(library, symbol):
                return int(getattr(library, symbol)())
    return None


# ----------------------------------------------------------------- timing


def summarize(seconds):
    """Median, quartiles and extremes of a list of durations, in microseconds.

    Quartiles interpolate linearly, as `numpy.percentile` does.

    Example:
        >>> summarize([1e-6, 2e-6, 3e-6])["median_us"]
        2.0
    """
    micros = [value * 1e6 for value in seconds]
    if len(micros) > 1:
        p25, median, p75 = statistics.quantiles(micros, n=4, method="inclusive")
    else:
        p25 = median = p75 = micros[0]
    return {
        "median_us": float(median),
        "p25_us": float(p25),
        "p75_us": float(p75),
        "iqr_us": float(p75 - p25),
        "min_us": float(min(micros)),
        "max_us": float(max(micros)),
        "n": len(micros),
    }


def interleave(contenders, repeats, warmup=0, shuffle_seed=None):
    """Runs each contender once per round, in an order that changes every round.

    By default the order rotates (A B C, B C A, C A B, ...), so that each
    contender runs first equally often and drift on a shared machine hits all
    alike. Rotation keeps neighbours, though: B follows A in most rounds. With
    `shuffle_seed`, each round is a fresh seeded permutation instead, so that
    whatever one contender leaves behind (evicted caches, a process winding
    down on the same CPU) falls on every other one by turns.

    Args:
        contenders: dict of name to a function of the round index returning
            seconds, or a dict of phase name to seconds.
        repeats: timed rounds.
        warmup: untimed rounds first.
        shuffle_seed: None to rotate, or an int seeding the per-round shuffle.

    Returns:
        Dict of sample lists: `name` for plain seconds, `name_phase` for phases.

    Example:
        >>> samples = interleave({"a": lambda r: 1.0, "b": lambda r: {"x": 2.0}}, 3)
        >>> samples["a"], samples["b_x"]
        ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    """
    names = list(contenders)
    shuffler = None if shuffle_seed is None else random.Random(shuffle_seed)
    samples = {}
    for round_index in range(warmup + repeats):
        if shuffler is None:
            shift = round_index % len(names)
            order = names[shift:] + names[:shift]
        else:
            order = shuffler.sample(names, len(names))
        for name in order:
            result = contenders[name](round_index)
            if round_index < warmup:
                continue
            if isinstance(result, dict):
                for phase, seconds in result.items():
                    samples.setdefault(f"{name}_{phase}", []).append(seconds)
            else:
                samples.setdefault(name, []).append(result)
    return samples


def calls_for(run, block_seconds, limit=1_000_000):
    """How many calls of `run(calls) -> seconds` fill about `block_seconds` (at least 1)."""
    calls = 1
    seconds = run(calls)
    while seconds < block_seconds / 10 and calls < limit:
        calls *= 10
        seconds = run(calls)
    return max(1, min(limit, int(block_seconds / max(seconds / calls, 1e-9))))


def per_call_us(function, number, repeat):
    """Median over `repeat` runs of `number` calls, in microseconds per call."""
    function()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs) * 1e6


def sgemm_gflops(size=512, seconds=0.3):
    """The machine's float32 matrix-product speed, GFLOP/s, on square `size` matrices."""
    import numpy as np

    rng = np.random.default_rng(0)
    left, right = (rng.random((size, size), dtype=np.float32) for _ in range(2))
    out = np.empty_like(left)
    np.matmul(left, right, out=out)
    runs, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(runs) < 3:
        begin = time.perf_counter()
        np.matmul(left, right, out=out)
        runs.append(time.perf_counter() - begin)
    return 2.0 * size**3 / statistics.median(runs) / 1e9


# ----------------------------------------------------------------- facts


def version_of(package):
    """The installed version of a distribution, or None."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def versions():
    """Python, numpy, autograd and minikeras versions, and the machine's basics."""
    import numpy as np

    import minikeras

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "autograd": version_of("autograd"),
        "minikeras": minikeras.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
    }


def machine_info():
    """CPU model, cores, memory, OS and numpy's BLAS, as far as the machine says."""
    import numpy as np

    info = {
        "cpu_model": None,
        "nproc": _cpus_before_pinning
        or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None),
        "cpu_count": os.cpu_count(),
        "memory_gib": None,
        "platform": platform.platform(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            info["cpu_model"] = next(
                (
                    line.split(":", 1)[1].strip()
                    for line in cpuinfo
                    if line.startswith("model name")
                ),
                None,
            )
        with open("/proc/meminfo") as meminfo:
            total_kib = int(meminfo.readline().split()[1])
            info["memory_gib"] = round(total_kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info["numpy_blas"] = {key: blas.get(key) for key in ("name", "version")}
        info["numpy_blas"]["config"] = blas.get("openblas configuration")
    except (TypeError, KeyError):
        info["numpy_blas"] = None
    return info


def max_rss_mib():
    """The process's peak resident memory so far, in MiB.

    Linux's `VmHWM` belongs to the process's own memory map; `ru_maxrss`
    would carry over the parent's peak through fork and exec, so it is only
    the fallback.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except (OSError, ValueError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def current_rss_mib():
    """The process's resident memory now, in MiB, or None where /proc is missing."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return None


# ------------------------------------------------------- a minikeras step


class TapeStep:
    """A custom training step through minikeras's public API, timed phase by phase.

    The standalone CNN and LSTM scripts' minikeras contender: `model` (given
    `weights`), sparse cross-entropy from logits, Adam, `GradientTape`.
    """

    def __init__(self, model, weights, learning_rate):
        from minikeras import losses, optimizers

        model.set_weights(weights)
        self.model = model
        self.loss = losses.SparseCategoricalCrossentropy(from_logits=True)
        self.optimizer = optimizers.Adam(learning_rate=learning_rate)
        self.variables = model.trainable_weights

    def forward(self, x, labels):
        from minikeras import GradientTape

        with GradientTape() as tape:
            logits = self.model(x, training=True)
            loss = self.loss(labels, logits)
        return tape, loss

    def forward_backward(self, x, labels):
        tape, loss = self.forward(x, labels)
        return loss, tape.gradient(loss, self.variables)

    def update(self, grads):
        self.optimizer.apply(grads, self.variables)

    def timed_step(self, x, labels, clock=time.perf_counter):
        """One step; returns the seconds its phases took (freeing included)."""
        t0 = clock()
        tape, loss = self.forward(x, labels)
        t1 = clock()
        grads = tape.gradient(loss, self.variables)
        t2 = clock()
        self.update(grads)
        t3 = clock()
        del tape, loss, grads
        t4 = clock()
        return {
            "forward": t1 - t0,
            "gradient": t2 - t1,
            "update": t3 - t2,
            "free": t4 - t3,
            "step": t4 - t0,
        }


# ----------------------------------------------------------------- output


# The rows of a training step timed with Adam, for the standalone CNN and LSTM scripts.
ADAM_STEP_ROWS = (
    ("minikeras step", "minikeras_step"),
    ("  forward + loss (in tape)", "minikeras_forward"),
    ("  tape.gradient", "minikeras_gradient"),
    ("  Adam.apply", "minikeras_update"),
    ("  freeing the step's graph", "minikeras_free"),
    ("numpy step (hand-written)", "numpy_step"),
    ("  forward + loss + backward", "numpy_forward_backward"),
    ("  Adam (in place)", "numpy_update"),
    ("torch step (1 thread)", "torch_step"),
    ("  forward + loss", "torch_forward"),
    ("  backward", "torch_gradient"),
    ("  Adam", "torch_update"),
)


def print_stats_table(rows, stats, unit="ms", label_width=34):
    """Prints median, quartiles, IQR and minimum per row; rows missing from `stats` are left out.

    Example:
        >>> print_stats_table([("a", "a")], {"a": summarize([1e-3, 2e-3, 3e-3])})
        per step                           median ms     p25     p75    IQR     min
        ---------------------------------------------------------------------------
        a                                       2.00    1.50    2.50   1.00    1.00
    """
    scale, digits = (1e3, 2) if unit == "ms" else (1.0, 1)
    header = (
        f"{'per step':<{label_width}}{'median ' + unit:>10}{'p25':>8}{'p75':>8}{'IQR':>7}{'min':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, key in rows:
        if key not in stats:
            continue
        s = stats[key]
        print(
            f"{label:<{label_width}}{s['median_us'] / scale:>10.{digits}f}"
            f"{s['p25_us'] / scale:>8.{digits}f}{s['p75_us'] / scale:>8.{digits}f}"
            f"{s['iqr_us'] / scale:>7.{digits}f}{s['min_us'] / scale:>8.{digits}f}"
        )


def print_step_ratios(ratios, target):
    """Prints minikeras / numpy against its target, and torch / numpy when measured.

    Example:
        >>> print_step_ratios({"minikeras_over_numpy": 1.1, "paired_median": 1.1}, 1.3)
        ratio minikeras / numpy (medians): 1.100  (target <= 1.3: OK); paired rounds, median 1.100
    """
    verdict = "OK" if ratios["minikeras_over_numpy"] <= target else "OVER TARGET"
    print(
        f"ratio minikeras / numpy (medians): {ratios['minikeras_over_numpy']:.3f}  "
        f"(target <= {target}: {verdict}); paired rounds, median "
        f"{ratios['paired_median']:.3f}"
    )
    if "torch_over_numpy" in ratios:
        print(f"ratio torch / numpy (medians):     {ratios['torch_over_numpy']:.3f}")


def write_json(path, record):
    """Writes `record` as indented JSON, creating the folder."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as file:
        json.dump(record, file, indent=1)


def write_chart(path, record):
    """A PNG of every timed case's ratios to numpy, one panel per workload.

    Returns `{"path": path}`, or `{"skipped": reason}` without matplotlib (an
    optional extra: `pip install .[bench]`).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        return {"skipped": f"matplotlib is not installed ({error})"}
    panels = []
    for workload, result in record["workloads"].items():
        cases = [case for case in result.get("cases", []) if case.get("ratios_to_numpy")]
        if cases:
            panels.append((workload, result.get("title", workload), cases))
    if not panels:
        return {"skipped": "no timed case to draw"}
    figure, axes = plt.subplots(len(panels), 1, figsize=(11, 3.2 * len(panels)), squeeze=False)
    colours = {}  # one colour per contender in every panel
    for _, _, cases in panels:
        for case in cases:
            for name in case["ratios_to_numpy"]:
                colours.setdefault(name, plt.get_cmap("tab10")(len(colours) % 10))
    for axis, (workload, title, cases) in zip(axes[:, 0], panels):
        names = []
        for case in cases:
            names += [name for name in case["ratios_to_numpy"] if name not in names]
        width = 0.8 / len(names)
        for index, name in enumerate(names):
            ratios = [case["ratios_to_numpy"].get(name, float("nan")) for case in cases]
            positions = [position + index * width for position in range(len(cases))]
            axis.bar(positions, ratios, width, label=name, color=colours[name])
        for case_index, case in enumerate(cases):
            for target in case.get("targets", {}).values():
                axis.hlines(
                    target["limit"],
                    case_index - 0.1,
                    case_index + 0.9,
                    colors="red",
                    linestyles="dashed",
                )
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_yscale("log")
        axis.set_xticks([position + 0.4 - width / 2 for position in range(len(cases))])
        axis.set_xticklabels([case["name"] for case in cases], fontsize=7)
        axis.set_ylabel("time / numpy's")
        axis.set_title(f"{workload}: {title} (lower is faster; dashed: target)", fontsize=9)
        axis.legend(fontsize=7, ncol=4)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return {"path": path}
