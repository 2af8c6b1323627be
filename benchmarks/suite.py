"""The suite's runner: peers, cases timed side by side, the table, the JSON and the chart.

`python -m benchmarks` parses its flags and pins threads first (see
`benchmarks/__main__.py`), then calls `main` here. A workload module's
`run(suite)` describes its cases; the `Suite` builds their contenders (in this
process, or in a peer's worker process), checks that they compute the same
numbers, times them interleaved, and summarizes.
"""

import gc
import math
import os
import statistics
import sys
import time
from datetime import datetime, timezone

import numpy as np

from benchmarks import accuracy, cnn, common, inference, lstm, memory, mlp, ops, report
from benchmarks.worker import Remote, Worker, WorkerError, resolve

WORKLOADS = {
    "ops": ops,
    "mlp": mlp,
    "inference": inference,
    "cnn": cnn,
    "lstm": lstm,
    "accuracy": accuracy,
    "memory": memory,
}
# Peer name -> (module with version(), extra environment of its worker process, or None to
# run in the suite's process). torch gets a process of its own too: loaded beside minikeras it
# would slow minikeras's garbage collection (a full collection goes from ~1 ms to ~35 ms).
PEERS = {
    "autograd": ("benchmarks.peer_autograd", None),
    "torch": ("benchmarks.peer_torch", {}),
    "keras-jax": ("benchmarks.peer_keras", {"KERAS_BACKEND": "jax"}),
    "keras-torch": ("benchmarks.peer_keras", {"KERAS_BACKEND": "torch"}),
}
REFERENCE = "numpy"
# Untimed calls before each timed repeat, at most: after another contender ran
# on the same CPU, a step takes a few steps to run at its steady pace again
# (the MLP's first step after a switch is ~35% slower, the next ~20%, the
# fourth still ~5%), which a training loop never sees.
SETTLING_CALLS = 5
LOSS_RTOL = 1e-4


def peer_of(name):
    """The peer a contender belongs to ("keras-jax" for "keras-jax model(x)"), or None."""
    for peer in PEERS:
        if name == peer or name.startswith(peer + " "):
            return peer
    return None


class Suite:
    """The run's settings, its peers and their workers, and the helpers workloads call."""

    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.threads = args.threads
        self.repeats = args.repeats or (5 if args.quick else 9)
        self.warmup = args.warmup
        self.block_seconds = args.block_seconds or (0.03 if args.quick else 0.2)
        self.batch_sizes = args.batch_sizes
        self.seeds = args.seeds or (1 if args.quick else 3)
        self.epochs = args.epochs or (2 if args.quick else None)
        self.mnist = args.mnist
        self.output = args.output
        self.peers = {}
        self.workers = {}
        self.failures = []

    # ------------------------------------------------------------- peers

    def detect_peers(self, wanted):
        """Finds each peer's version, or the reason it is skipped."""
        for name, (_, env) in PEERS.items():
            if name in wanted and env is not None:  # started together: they import in parallel
                self.workers[name] = Worker(self.threads, env, self.log_path(name))
        for name, (module, env) in PEERS.items():
            if name not in wanted:
                self.peers[name] = {"status": "skipped", "reason": "not selected (--peers)"}
                continue
            try:
                if env is None:
                    version = resolve(module + ":version")()
                else:
                    version = self.workers[name].request(op="version", module=module)
            except (ImportError, WorkerError) as error:
                reason = f"not installed or not importable ({error})"
                self.peers[name] = {"status": "skipped", "reason": reason}
                if name in self.workers:
                    self.workers.pop(name).close()
            else:
                self.peers[name] = {"status": "ok", "version": version}

    def log_path(self, name):
        os.makedirs(self.output, exist_ok=True)
        return os.path.join(self.output, f"worker-{name}.log")

    def close(self):
        for worker in self.workers.values():
            worker.close()

    def make(self, name, factory, config):
        """Builds a contender here, or in its peer's worker."""
        if peer_of(name) in self.workers:
            return Remote(self.workers[peer_of(name)], factory, config)
        return resolve(factory)(**config)

    def unavailable(self, name, not_run):
        """Why a contender does not run in a case, or None."""
        if name in not_run:
            return not_run[name]
        peer = self.peers.get(peer_of(name))
        if peer is not None and peer["status"] != "ok":
            return peer["reason"]
        return None

    def build(self, contenders, config, not_run, record):
        built = {}
        for name, factory in contenders.items():
            reason = self.unavailable(name, not_run)
            if reason is not None:
                record[name] = {"status": "skipped", "reason": reason}
                continue
            try:
                built[name] = self.make(name, factory, config)
            except Exception as error:  # a contender that cannot run here is reported, not fatal
                record[name] = {"status": "failed", "reason": f"{type(error).__name__}: {error}"}
        for name in not_run:
            record.setdefault(name, {"status": "skipped", "reason": not_run[name]})
        return built

    # ------------------------------------------------------------- cases

    def skipped_workload(self, reason):
        return {"status": "skipped", "reason": reason, "cases": []}

    def time_case(
        self,
        name,
        config,
        contenders,
        targets=None,
        check=None,
        not_run=None,
        unit="µs per step",
        compare_results=None,
    ):
        """Builds, checks and times one case's contenders; returns its record.

        Args:
            name: the case's label.
            config: keyword arguments of every contender's factory.
            contenders: dict of contender name to factory path.
            targets: dict of contender name to its largest allowed ratio to numpy.
            check: a function asserting minikeras computes what numpy does
                (returns facts to record), or "results" to compare each
                contender's `result()` with numpy's.
            not_run: dict of contender name to why it sits this case out.
            compare_results: compare each contender's `result()` with numpy's
                (a contender whose `result()` is None has nothing to compare);
                by default when `check` is "results", else their first losses.
        """
        print(f"  {name} ...", end="", flush=True, file=sys.stderr)
        started = time.perf_counter()
        record = {"name": name, "status": "ok", "unit": unit, "config": config, "checks": {}}
        entries = record["contenders"] = {}
        if callable(check):
            try:
                record["checks"]["minikeras_vs_numpy"] = check()
            except Exception as error:  # disagreeing numbers, or minikeras failing outright
                message = f"{type(error).__name__}: {error}"[:2000]
                record["checks"]["minikeras_vs_numpy"] = {"failed": message}
                self.failures.append(f"{name}: the minikeras vs numpy check failed")
        built = self.build(contenders, config, not_run or {}, entries)
        if compare_results is None:
            compare_results = check == "results"
        self.check_contenders(built, entries, compare_results=compare_results)
        gc.collect()
        calls = {}
        for contender_name, contender in list(built.items()):
            try:  # also the warm-up: compilation, first-call allocations
                calls[contender_name] = common.calls_for(contender.run, self.block_seconds)
            except Exception as error:
                self.fail(contender_name, error, built, entries)
        samples = common.interleave(
            {n: self.guarded(n, c, calls[n], built, entries) for n, c in built.items()},
            self.repeats,
            self.warmup,
            shuffle_seed=0,
        )
        for contender_name in built:
            values = samples.get(contender_name, [])
            if entries.get(contender_name, {}).get("status") == "failed" or not values:
                continue
            entry = entries.setdefault(contender_name, {"status": "ok"})
            entry.update(common.summarize(values), calls_per_sample=calls[contender_name])
            entry["samples_us"] = [value * 1e6 for value in values]
            contender = built[contender_name]
            flops = None if isinstance(contender, Remote) else getattr(contender, "flops", None)
            if flops:  # the GEMM floor's speed, beside the machine's sgemm figure
                entry["gflops"] = flops / entry["median_us"] / 1e3
        self.add_ratios(record, targets or {})
        record["seconds"] = time.perf_counter() - started
        print(f" {record['seconds']:.1f} s", file=sys.stderr)
        return record

    def check_contenders(self, built, entries, compare_results):
        """Each contender's first loss (or op result) against numpy's, from the same start."""
        reference = built.get(REFERENCE)
        if reference is None:
            return
        if compare_results:
            expected = np.asarray(reference.result(), np.float32)
        for name, contender in list(built.items()):  # a failing contender leaves `built`
            entry = entries.setdefault(name, {"status": "ok"})
            try:
                if compare_results:
                    got = contender.result()
                    if got is None:
                        continue
                    got = np.asarray(got, np.float32)
                    same = got.shape == expected.shape and np.allclose(
                        got, expected, rtol=LOSS_RTOL, atol=1e-5
                    )
                else:
                    loss = contender.first_loss
                    if loss is None:
                        continue
                    entry["first_loss"] = loss
                    same = math.isclose(loss, reference.first_loss, rel_tol=LOSS_RTOL)
            except Exception as error:
                self.fail(name, error, built, entries)
                continue
            entry["matches_numpy"] = bool(same)
            if not same:
                self.failures.append(f"{name}: computes other numbers than numpy")

    def fail(self, name, error, built, entries):
        entries[name] = {"status": "failed", "reason": f"{type(error).__name__}: {error}"}
        built.pop(name, None)
        if peer_of(name) is None:
            self.failures.append(f"{name}: {entries[name]['reason']}")

    def guarded(self, name, contender, calls, built, entries):
        """`round -> seconds per call`, recording a failure once and returning NaN after it.

        Untimed calls come first (`SETTLING_CALLS`, or fewer if a repeat has
        fewer): the contender before this one (on the same CPU) has just
        evicted this one's weights and code from the caches, which a training
        loop, step after step, never sees.
        """
        settling = max(1, min(calls, SETTLING_CALLS))

        def sample(round_index):
            if entries.get(name, {}).get("status") == "failed":
                return math.nan
            try:
                contender.run(settling)
                return contender.run(calls) / calls
            except Exception as error:
                self.fail(name, error, dict(built), entries)
                return math.nan

        return sample

    def add_ratios(self, record, targets):
        """Each contender's median over numpy's, and the median of the per-round ratios.

        The paired ratio divides samples of the same round, taken moments apart,
        so that it cancels drift the ratio of medians still carries.
        """
        entries = record["contenders"]
        reference = entries.get(REFERENCE, {})
        record["ratios_to_numpy"], record["paired_ratios_to_numpy"] = {}, {}
        record["targets"] = {}
        if not reference.get("median_us"):
            return
        for name, entry in entries.items():
            if "median_us" not in entry:
                continue
            record["ratios_to_numpy"][name] = entry["median_us"] / reference["median_us"]
            pairs = zip(entry.get("samples_us", ()), reference.get("samples_us", ()))
            paired = [ours / theirs for ours, theirs in pairs if theirs > 0]
            if paired:
                record["paired_ratios_to_numpy"][name] = statistics.median(paired)
        for name, limit in targets.items():
            ratio = record["ratios_to_numpy"].get(name)
            record["targets"][name] = {
                "limit": limit,
                "ratio": ratio,
                "paired_ratio": record["paired_ratios_to_numpy"].get(name),
                "met": ratio is not None and ratio <= limit,
            }

    def fit_case(self, name, config, contenders, seeds):
        """Every contender's whole fit and test accuracy, seed by seed, the order rotating."""
        print(f"  {name} ...", end="", flush=True, file=sys.stderr)
        started = time.perf_counter()
        record = {
            "name": name,
            "status": "ok",
            "unit": "s per fit",
            "config": config,
            "seeds": seeds,
        }
        entries = record["contenders"] = {}
        built = self.build(contenders, {"config": config}, {}, entries)
        runs = {contender_name: [] for contender_name in built}

        def fitter(contender_name):
            def fit(round_index):
                if entries.get(contender_name, {}).get("status") == "failed":
                    return math.nan
                try:
                    runs[contender_name].append(built[contender_name].fit(seeds[round_index]))
                except Exception as error:
                    self.fail(contender_name, error, dict(built), entries)
                return math.nan

            return fit

        gc.collect()
        common.interleave({n: fitter(n) for n in built}, len(seeds))
        for contender_name, results in runs.items():
            if entries.get(contender_name, {}).get("status") == "failed" or not results:
                continue
            seconds = [result["seconds"] for result in results]
            accuracies = [result["accuracy"] for result in results]
            entries[contender_name] = {
                "status": "ok",
                **common.summarize(seconds),
                "samples_us": [value * 1e6 for value in seconds],
                "fit_seconds": seconds,
                "accuracy_mean": float(np.mean(accuracies)),
                "accuracy_min": float(np.min(accuracies)),
                "accuracy_max": float(np.max(accuracies)),
                "accuracies": accuracies,
            }
        self.add_ratios(record, {})
        record["seconds"] = time.perf_counter() - started
        print(f" {record['seconds']:.1f} s", file=sys.stderr)
        return record

    def memory_case(self, name, config, contenders, steps=20):
        """Each contender's step memory, measured in a fresh worker process of its own."""
        print(f"  {name} ...", end="", flush=True, file=sys.stderr)
        started = time.perf_counter()
        record = {"name": name, "status": "ok", "unit": "MiB", "config": config}
        entries = record["contenders"] = {}
        for contender_name, factory in contenders.items():
            reason = self.unavailable(contender_name, {})
            if reason is not None:
                entries[contender_name] = {"status": "skipped", "reason": reason}
                continue
            env = PEERS.get(contender_name, (None, None))[1]
            worker = Worker(self.threads, env, self.log_path("memory"))
            try:
                result = worker.request(op="memory", factory=factory, config=config, steps=steps)
            except WorkerError as error:
                entries[contender_name] = {"status": "failed", "reason": str(error)}
            else:
                if contender_name in memory.NOT_NUMPY_BUFFERS:
                    result["step_peak_traced_mib"] = None  # its buffers are not Python's
                entries[contender_name] = {"status": "ok", **result}
            finally:
                worker.close()
        record["seconds"] = time.perf_counter() - started
        print(f" {record['seconds']:.1f} s", file=sys.stderr)
        return record


# ----------------------------------------------------------------- report


def format_time(micros):
    if micros >= 1e6:
        return f"{micros / 1e6:.2f} s"
    if micros >= 1e4:
        return f"{micros / 1e3:.1f} ms"
    if micros >= 100:
        return f"{micros:.0f} µs"
    return f"{micros:.2f} µs"


def contender_note(entry, target):
    notes = [f"{entry['gflops']:.0f} GFLOP/s"] if "gflops" in entry else []
    if entry.get("matches_numpy") is False:
        notes.append("(!) computes other numbers than numpy")
    if target:
        verdict = "met" if target["met"] else "MISSED"
        notes.append(f"target <= {target['limit']}: {verdict}")
    return "; ".join(notes)


def print_workload(name, result, out=sys.stdout):
    print(f"\n== {name}: {result.get('title', '')} ==", file=out)
    if result.get("status") == "skipped":
        print(f"   skipped: {result['reason']}", file=out)
        return
    for case in result["cases"]:
        print(f"\n{case['name']}", file=out)
        if case.get("status") == "skipped":
            print(f"   skipped: {case['reason']}", file=out)
            continue
        check = case.get("checks", {}).get("minikeras_vs_numpy")
        if check:
            verdict = "FAILED: " + check["failed"][:200] if "failed" in check else "agree"
            print(f"   check, minikeras vs numpy from the same weights: {verdict}", file=out)
        if case["unit"] == "MiB":
            print_memory_case(case, out)
            continue
        fits = case["unit"] == "s per fit"
        header = f"   {'contender':<32}{'median':>10}{'IQR':>10}{'x numpy':>9}"
        header += f"{'accuracy':>10}" if fits else ""
        print(header, file=out)
        ratios, skipped = case.get("ratios_to_numpy", {}), []
        for contender, entry in case["contenders"].items():
            if entry["status"] != "ok" or "median_us" not in entry:
                skipped.append(f"{contender} ({entry['status']}: {entry.get('reason', '')})")
                continue
            ratio = ratios.get(contender)
            line = (
                f"   {contender:<32}{format_time(entry['median_us']):>10}"
                f"{format_time(entry['iqr_us']):>10}"
                f"{(f'{ratio:.2f}' if ratio else '-'):>9}"
            )
            if fits:
                line += f"{100 * entry['accuracy_mean']:>9.1f}%"
            note = contender_note(entry, case.get("targets", {}).get(contender))
            print(line + (f"  {note}" if note else ""), file=out)
        for text in skipped:
            print(f"   - {text}", file=out)


def print_memory_case(case, out):
    print(f"   {'contender':<32}{'step peak (tracemalloc)':>24}{'max RSS':>10}", file=out)
    for contender, entry in case["contenders"].items():
        if entry["status"] != "ok":
            print(f"   - {contender} ({entry['status']}: {entry.get('reason', '')})", file=out)
            continue
        traced = entry["step_peak_traced_mib"]
        traced_text = "not visible" if traced is None else f"{traced:.1f} MiB"
        print(f"   {contender:<32}{traced_text:>24}{entry['max_rss_mib']:>6.0f} MiB", file=out)


def print_header(record, out=sys.stdout):
    machine, versions = record["machine"], record["versions"]
    print(
        f"minikeras benchmark suite: {machine['cpu_model']}, {machine['nproc']} CPUs available, "
        f"{machine['memory_gib']} GiB",
        file=out,
    )
    print(
        f"python {versions['python']}, numpy {versions['numpy']} "
        f"({(machine.get('numpy_blas') or {}).get('name')} "
        f"{(machine.get('numpy_blas') or {}).get('version')}), "
        f"autograd {versions['autograd']}, minikeras {versions['minikeras']}",
        file=out,
    )
    threads = record["threads"]
    print(
        f"threads: {record['settings']['threads']} (OpenBLAS reports "
        f"{threads['openblas_num_threads']}; CPUs {threads.get('cpu_affinity')}); "
        f"sgemm {record['sgemm']['size']}^3: "
        f"{record['sgemm']['gflops']:.1f} GFLOP/s",
        file=out,
    )
    for name, peer in record["peers"].items():
        state = peer.get("version") if peer["status"] == "ok" else f"skipped: {peer['reason']}"
        print(f"peer {name}: {state}", file=out)
    settings = record["settings"]
    print(
        f"{settings['repeats']} repeats of ~{settings['block_seconds']} s per contender, "
        "interleaved (a seeded shuffle every round), each repeat after up to "
        f"{SETTLING_CALLS} untimed steps, after calibration and {settings['warmup']} "
        "warm-up round; median and IQR of the repeats",
        file=out,
    )


def target_lines(record):
    lines = []
    for workload, result in record["workloads"].items():
        for case in result.get("cases", []):
            for contender, target in case.get("targets", {}).items():
                ratio = target["ratio"]
                verdict = "met" if target["met"] else "MISSED"
                ratio_text = "n/a" if ratio is None else f"{ratio:.3f}"
                paired = target.get("paired_ratio")
                paired_text = "" if paired is None else f", paired rounds {paired:.3f}"
                lines.append(
                    f"{workload} {case['name']}: {contender} / numpy = {ratio_text}{paired_text} "
                    f"(target <= {target['limit']}): {verdict}"
                )
    return lines


# ----------------------------------------------------------------- main


def main(args):
    started = time.perf_counter()
    suite = Suite(args)
    os.makedirs(args.output, exist_ok=True)
    record = {
        "suite": "minikeras benchmarks",
        "command": "python -m benchmarks " + " ".join(args.argv),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": report.git_commit(),
        "settings": {
            "workloads": args.workloads,
            "peers": args.peers,
            "threads": suite.threads,
            "repeats": suite.repeats,
            "warmup": suite.warmup,
            "settling_calls": SETTLING_CALLS,
            "block_seconds": suite.block_seconds,
            "batch_sizes": suite.batch_sizes,
            "seeds": suite.seeds,
            "epochs": suite.epochs,
            "quick": suite.quick,
            "mnist": suite.mnist,
        },
        "machine": common.machine_info(),
        "versions": common.versions(),
        "threads": {
            **common.blas_thread_report(suite.threads),
            "env": common.thread_environment(suite.threads),
        },
        "sgemm": {"size": 512, "gflops": common.sgemm_gflops(512)},
    }
    try:
        suite.detect_peers(args.peers)
        record["peers"] = suite.peers
        print_header(record)
        record["workloads"] = {}
        for name in args.workloads:
            print(f"{name}:", file=sys.stderr)
            result = WORKLOADS[name].run(suite)
            result.setdefault("status", "ok")
            record["workloads"][name] = result
            print_workload(name, result)
    finally:
        suite.close()
    record["targets"] = target_lines(record)
    record["failures"] = suite.failures
    record["seconds"] = time.perf_counter() - started
    json_path = os.path.join(args.output, "benchmarks.json")
    chart_path = os.path.join(args.output, "benchmarks.png")
    record["chart"] = common.write_chart(chart_path, record)
    common.write_json(json_path, record)
    print()
    for line in record["targets"]:
        print(line)
    for failure in suite.failures:
        print(f"FAILED: {failure}")
    chart = record["chart"]
    chart_text = chart["path"] if "path" in chart else f"not drawn ({chart['skipped']})"
    print(f"\nwrote {json_path}; chart: {chart_text}; {record['seconds']:.0f} s in all")
    return 1 if suite.failures else 0
