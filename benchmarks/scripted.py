"""Contenders built from a benchmark script's own step classes (`bench_cnn.py`, `bench_lstm.py`).

Those scripts define the model, the hand-written numpy step, the PyTorch step
and the check that minikeras and numpy compute the same numbers; the suite
runs them as they are, so that there is one definition of each workload.
`script` names the script's module: "bench_cnn" or "bench_lstm".
"""

import importlib

from benchmarks import problems


def load(script):
    """The script's module, or ImportError if it is not in this checkout."""
    return importlib.import_module(f"benchmarks.{script}")


class Stepper:
    """Adapts a script's step object (`timed_step(x, labels)`) to `run(steps)`."""

    def __init__(self, step, batches):
        self.step = step
        self.batches = problems.BatchCycle(batches)

    def run(self, steps):
        return self.batches.time(self.step.timed_step, steps)


class NumpyStep(Stepper):
    def __init__(self, script, seed=0):
        module = load(script)
        batches, weights = module.make_problem(seed)
        super().__init__(module.NumpyStep(weights), batches)
        self.first_loss = float(self.step.forward_backward(*batches[0])[0])  # no update


class MinikerasStep(Stepper):
    def __init__(self, script, seed=0):
        module = load(script)
        batches, weights = module.make_problem(seed)
        super().__init__(module.MinikerasStep(weights), batches)
        x, labels = batches[0]
        self.first_loss = float(self.step.loss(labels, self.step.model(x)))


class TorchStep(Stepper):
    def __init__(self, script, seed=0):
        from benchmarks import peer_torch

        module, torch = load(script), peer_torch.load()
        batches, weights = module.make_problem(seed)
        super().__init__(module.TorchStep(torch, weights), batches)
        with torch.no_grad():
            self.first_loss = float(self.step.loss_of(*batches[0]))


def run_workload(suite, script, case_name, title, contenders, not_run, target):
    """Times the script's step as one case of the suite, or reports it skipped."""
    try:
        load(script)
    except ImportError as error:
        return suite.skipped_workload(f"benchmarks/{script}.py is not importable ({error})")
    case = suite.time_case(
        case_name,
        {"script": script},
        contenders,
        targets={"minikeras": target},
        check=lambda: check_minikeras_matches_numpy(script),
        not_run=not_run,
    )
    return {"title": title, "unit": "µs per step", "cases": [case]}


def check_minikeras_matches_numpy(script):
    """The script's own check: same loss, gradients and Adam update from the same weights."""
    module = load(script)
    batches, weights = module.make_problem()
    checks = module.check_same_arithmetic(weights, *batches[0], None)
    return {"loss": checks["loss"], "same_loss_gradients_and_update": True}
