"""A contender's own process: Keras backends, and fresh processes for memory figures.

The suite starts `python -m benchmarks.worker` with the thread environment
(and `KERAS_BACKEND`) already set, and speaks JSON lines over its stdin and
stdout: build a contender from a factory path, call its methods, measure its
memory. The worker times itself, so the round trip costs no timed work, and
the suite can interleave a worker's contenders with its own, round by round.

Requests and replies (one JSON object a line):
    {"op": "version", "module": "benchmarks.peer_keras"}  -> {"ok": "keras 3..."}
    {"op": "make", "factory": "benchmarks.peer_keras:MLPStep", "config": {...}}
        -> {"ok": {"id": 1, "first_loss": 2.4}}
    {"op": "call", "id": 1, "method": "run", "args": [40]}   -> {"ok": 0.012}
    {"op": "memory", "factory": ..., "config": {...}, "steps": 20} -> {"ok": {...}}
A failure replies {"error": "...", "traceback": "..."}.
"""

import importlib
import json
import os
import subprocess
import sys
import traceback

from benchmarks import common


def resolve(path):
    """`"package.module:Name"` to the object it names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def measure_memory(contender, steps):
    """Peak numpy buffers over one step (tracemalloc), and the process's peak RSS.

    Two warm-up steps run first, so that the optimizer's slots and any
    compilation are in place; tracemalloc then follows one step, and
    `steps` more steps run before the peak RSS is read.
    """
    import tracemalloc

    contender.run(2)
    rss_ready = common.current_rss_mib()
    tracemalloc.start()
    contender.run(1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    contender.run(steps)
    return {
        "step_peak_traced_mib": peak / 2**20,
        "rss_ready_mib": rss_ready,
        "max_rss_mib": common.max_rss_mib(),
    }


def handle(request, objects):
    op = request["op"]
    if op == "version":
        return resolve(request["module"] + ":version")()
    if op == "make":
        contender = resolve(request["factory"])(**request["config"])
        objects[len(objects) + 1] = contender
        return {"id": len(objects), "first_loss": getattr(contender, "first_loss", None)}
    if op == "call":
        return getattr(objects[request["id"]], request["method"])(*request.get("args", ()))
    if op == "memory":
        contender = resolve(request["factory"])(**request["config"])
        return measure_memory(contender, request.get("steps", 20))
    raise ValueError(f"unknown request op {op!r}")


def serve():
    # Replies go to the real stdout; anything a library prints goes to stderr.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    objects = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "quit":
            break
        try:
            reply = {"ok": handle(request, objects)}
        except Exception as error:  # reported to the suite, which records the contender failed
            message = f"{type(error).__name__}: {error}".strip()
            reply = {"error": message, "traceback": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


class WorkerError(RuntimeError):
    """A worker's reply was an error, or the worker died."""


class Worker:
    """The suite's end of a worker process.

    Args:
        threads: the thread pinning to start the worker with.
        env: extra environment variables (e.g. `{"KERAS_BACKEND": "jax"}`).
        log_path: where the worker's stderr goes (library warnings, tracebacks).
    """

    def __init__(self, threads, env=None, log_path=os.devnull):
        environment = dict(os.environ)
        environment.update(common.thread_environment(threads))
        environment.update(env or {})
        path = environment.get("PYTHONPATH")
        environment["PYTHONPATH"] = common.REPO_ROOT + (os.pathsep + path if path else "")
        self.log = open(log_path, "a")  # noqa: SIM115 (open as long as the worker lives)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=common.REPO_ROOT,
            env=environment,
            text=True,
        )

    def request(self, **request):
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, OSError) as error:
            raise WorkerError(f"worker died ({error})") from error
        if not line:
            raise WorkerError(f"worker exited with code {self.process.wait()}")
        reply = json.loads(line)
        if "error" in reply:
            raise WorkerError(reply["error"])
        return reply["ok"]

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write('{"op": "quit"}\n')
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.log.close()


class Remote:
    """A contender living in a worker: `run` and the other methods are forwarded."""

    def __init__(self, worker, factory, config):
        self.worker = worker
        made = worker.request(op="make", factory=factory, config=config)
        self.id, self.first_loss = made["id"], made["first_loss"]

    def __getattr__(self, method):
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args: self.worker.request(op="call", id=self.id, method=method, args=args)


if __name__ == "__main__":
    serve()
