"""Workload: peak memory of a training step, each contender in a fresh process.

Per contender, a new worker process builds the step and runs two warm-up
steps; tracemalloc then follows one step (numpy registers its buffers with
tracemalloc, so this is the peak of the numpy buffers the step allocates:
activations, gradients, temporaries), and the process's peak RSS is read
after 20 more steps. PyTorch and XLA allocate outside Python's allocator, so
tracemalloc sees nothing of theirs and only their RSS is comparable; RSS
includes each library's own import (torch, jax).
"""

from benchmarks import cnn, lstm, mlp, scripted

NOT_NUMPY_BUFFERS = ("torch", "keras-jax", "keras-torch")
QUICK = ("numpy", "minikeras")  # a fresh process each costs seconds: --quick keeps two


def run(suite):
    contenders = {name: factory for name, factory in mlp.CONTENDERS.items() if name != "gemm floor"}
    if suite.quick:
        contenders = {name: contenders[name] for name in QUICK}
    cases = [
        suite.memory_case(
            "MLP 784-256-128-10, batch 128",
            {"layers": [784, 256, 128, 10], "batch": 128},
            contenders,
        )
    ]
    if not suite.quick:
        for module, script, name in (
            (cnn, "bench_cnn", "small CNN, batch 64"),
            (lstm, "bench_lstm", "char LSTM, batch 32"),
        ):
            try:
                scripted.load(script)
            except ImportError as error:
                cases.append({"name": name, "status": "skipped", "reason": str(error)})
                continue
            contenders = {n: f for n, f in module.CONTENDERS.items() if n != "gemm floor"}
            cases.append(suite.memory_case(name, {"script": script}, contenders))
    return {
        "title": "peak memory of a training step (fresh process each)",
        "unit": "MiB",
        "cases": cases,
    }
