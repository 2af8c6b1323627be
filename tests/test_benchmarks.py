"""The benchmark suite runs end to end and says what it skipped (no timing is asserted)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import common, report

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIDDEN_PEERS = ("torch", "jax", "keras")


def hide_packages(folder, names):
    """Packages in `folder` that fail to import, to be put first on PYTHONPATH."""
    for name in names:
        os.makedirs(folder / name)
        (folder / name / "__init__.py").write_text(
            f"raise ImportError('{name} hidden by tests/test_benchmarks.py')\n"
        )


def test_quick_ops_run_writes_every_figure_and_reports_missing_peers_as_skipped(tmp_path):
    hide_packages(tmp_path / "hidden", HIDDEN_PEERS)
    output = tmp_path / "results"
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "hidden"))
    command = [sys.executable, "-m", "benchmarks", "--quick", "--workloads", "ops"]
    command += ["--repeats", "2", "--block-seconds", "0.002", "--output", str(output)]
    run = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr

    record = json.loads((output / "benchmarks.json").read_text())
    for key in ("command", "settings", "machine", "versions", "threads", "sgemm", "peers"):
        assert key in record, key
    assert record["settings"]["threads"] == 1
    assert record["threads"]["env"]["OPENBLAS_NUM_THREADS"] == "1"
    assert record["sgemm"]["gflops"] > 0
    assert record["versions"]["numpy"] == np.__version__
    assert record["failures"] == []
    assert "path" in record["chart"] or "skipped" in record["chart"]

    for peer in ("torch", "keras-jax", "keras-torch"):
        assert record["peers"][peer]["status"] == "skipped", record["peers"][peer]
        assert "hidden by tests/test_benchmarks.py" in record["peers"][peer]["reason"]
    assert record["peers"]["autograd"]["status"] == "ok"

    cases = record["workloads"]["ops"]["cases"]
    assert [case["name"] for case in cases] == [
        "add(a, b)",
        "matmul(a, b)",
        "50-op chain + gradient",
    ]
    for case in cases:
        contenders = case["contenders"]
        for name in ("numpy", "minikeras", "autograd"):
            entry = contenders[name]
            assert entry["status"] == "ok", (case["name"], name, entry)
            assert entry["matches_numpy"] is True
            assert entry["n"] == 2 and entry["median_us"] > 0 and entry["iqr_us"] >= 0
        assert case["ratios_to_numpy"]["numpy"] == 1.0
        for peer in ("torch", "keras-jax", "keras-torch"):
            assert contenders[peer]["status"] == "skipped"
    assert "peer torch: skipped: not installed or not importable" in run.stdout
    assert record["commit"] == report.git_commit()

    # The docs' results page is this run, rendered: its figures are the JSON's.
    markdown = tmp_path / "results.md"
    command = [sys.executable, "-m", "benchmarks.report", "--json", str(output / "benchmarks.json")]
    command += ["--markdown", str(markdown), "--chart", str(tmp_path / "chart.png")]
    rendered = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    text = markdown.read_text()
    assert f"| date | {record['started_at']} |" in text
    assert f"| commit | {record['commit'] or 'not recorded'} |" in text
    assert "OPENBLAS_NUM_THREADS=1" in text
    add = cases[0]
    ratio = add["ratios_to_numpy"]["minikeras"]
    assert f"| minikeras | {report._time(add['contenders']['minikeras']['median_us'])} " in text
    assert f"| {ratio:.2f}x |" in text
    assert "- torch: not installed or not importable" in text


def test_summaries_match_numpy_percentiles():
    seconds = list(np.random.default_rng(0).uniform(1e-6, 1e-3, 11))
    summary = common.summarize(seconds)
    p25, median, p75 = np.percentile(np.asarray(seconds) * 1e6, [25, 50, 75])
    np.testing.assert_allclose(
        [summary["p25_us"], summary["median_us"], summary["p75_us"]], [p25, median, p75]
    )
    assert summary["n"] == 11


def test_interleave_rotates_the_order_every_round():
    order = []
    common.interleave({name: lambda _, name=name: order.append(name) or 0.0 for name in "abc"}, 3)
    assert order == list("abcbcacab")


def test_interleave_with_a_seed_shuffles_each_round_reproducibly():
    def orders(seed):
        order = []
        contenders = {name: lambda _, name=name: order.append(name) or 0.0 for name in "abcd"}
        common.interleave(contenders, 6, shuffle_seed=seed)
        return ["".join(order[index : index + 4]) for index in range(0, 24, 4)]

    rounds = orders(0)
    assert all(sorted(one_round) == list("abcd") for one_round in rounds)
    assert len(set(rounds)) > 1
    assert orders(0) == rounds


# ----------------------------------------------------------------- inference workload

TINY_MLP = (5, 4, 3)


def test_inference_rows_give_numpys_logits_and_the_replayed_ones_replay():
    from benchmarks import inference
    from benchmarks.worker import resolve

    facts = inference.check_minikeras_matches_numpy(TINY_MLP, 2)
    assert facts["replays"] == {
        "model(x)": inference.CHECKED_CALLS,
        "predict_on_batch": inference.CHECKED_CALLS,
        "eager": 0,
        "predict_on_batch eager": 0,
    }
    expected = inference.NumpyForward(TINY_MLP, 2).result()
    for name in ("minikeras model(x)", "minikeras predict_on_batch", "minikeras eager"):
        contender = resolve(inference.CONTENDERS[name])(TINY_MLP, 2)
        np.testing.assert_allclose(contender.result(), expected, rtol=1e-6)
        assert contender.run(3) > 0
    floor = inference.FloorForward(TINY_MLP, 2)
    assert floor.result() is None and floor.flops == 2 * 2 * (5 * 4 + 4 * 3)


def test_inference_check_fails_on_wrong_replayed_numbers(monkeypatch):
    from benchmarks import inference
    from minikeras.engine.replay import Program

    original = Program.infer

    def off_by_a_little(self, inputs, sources):
        return [value * np.float32(1.001) for value in original(self, inputs, sources)]

    monkeypatch.setattr(Program, "infer", off_by_a_little)
    with pytest.raises(AssertionError, match="minikeras model\\(x\\) vs numpy"):
        inference.check_minikeras_matches_numpy(TINY_MLP, 2)


def test_inference_check_fails_when_nothing_is_replayed(monkeypatch):
    from benchmarks import inference
    from minikeras.models import replayed_call

    monkeypatch.setattr(replayed_call, "inference_call", lambda model, inputs, kwargs: None)
    with pytest.raises(AssertionError, match="Program.infer calls per row"):
        inference.check_minikeras_matches_numpy(TINY_MLP, 2)


def test_a_contender_named_after_a_peer_runs_in_its_worker():
    from benchmarks.suite import peer_of

    assert peer_of("keras-jax predict_on_batch") == "keras-jax"
    assert peer_of("keras-torch") == "keras-torch"
    assert peer_of("torch") == "torch"
    assert peer_of("minikeras model(x)") is None
    assert peer_of("torchvision") is None


def test_torch_inference_gives_numpys_logits():
    pytest.importorskip("torch")
    from benchmarks import inference, peer_torch

    expected = inference.NumpyForward(TINY_MLP, 3).result()
    contender = peer_torch.MLPForward(TINY_MLP, 3)
    np.testing.assert_allclose(contender.result(), expected, rtol=1e-5, atol=1e-6)
    assert contender.run(2) > 0


def test_quick_inference_run_checks_and_times_every_minikeras_row(tmp_path):
    output = tmp_path / "results"
    command = [sys.executable, "-m", "benchmarks", "--quick", "--workloads", "inference"]
    command += ["--peers", "none", "--batch-sizes", "1", "--repeats", "2"]
    command += ["--block-seconds", "0.002", "--output", str(output)]
    run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    record = json.loads((output / "benchmarks.json").read_text())
    assert record["failures"] == []
    (case,) = record["workloads"]["inference"]["cases"]
    assert case["name"] == "784-256-128-10, batch 1"
    assert case["checks"]["minikeras_vs_numpy"]["replayed_equals_eager"] is True
    contenders = case["contenders"]
    for name in ("numpy", "minikeras model(x)", "minikeras predict_on_batch", "minikeras eager"):
        assert contenders[name]["status"] == "ok", (name, contenders[name])
        assert contenders[name]["matches_numpy"] is True
        assert contenders[name]["n"] == 2 and contenders[name]["median_us"] > 0
    assert "matches_numpy" not in contenders["gemm floor"]  # products alone: nothing to compare
    for peer in ("torch", "keras-jax model(x)", "keras-torch predict_on_batch"):
        assert contenders[peer]["status"] == "skipped"


def test_the_closure_tape_gives_numpys_step_and_leaves_the_gradients_alone():
    from benchmarks.bench_mlp_step import ClosureTapeStep, check_closure_tape
    from benchmarks.reference import NumpyMLP, dense_weights, sgd_in_place

    rng = np.random.default_rng(0)
    weights = dense_weights((6, 5, 4, 3), rng)
    x = rng.standard_normal((7, 6), dtype=np.float32)
    labels = rng.integers(0, 3, size=7)
    check_closure_tape(weights, x, labels)  # (raises if a loss or gradient differs)
    step, numpy = ClosureTapeStep(weights, 0.1), NumpyMLP(weights)
    _, grads = step.forward_backward(x, labels)
    kept = [g.copy() for g in grads]
    step.mlp.update(grads, 0.1)
    for grad, copy in zip(grads, kept):
        np.testing.assert_array_equal(grad, copy)  # (the caller's: not scaled in place)
    _, np_grads = numpy.forward_backward(x, labels)
    sgd_in_place(numpy.params, np_grads, 0.1)
    for ours, theirs in zip(step.mlp.params, numpy.params):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    phases = step.timed_step(x, labels)
    assert set(phases) == {"forward", "gradient", "update", "step"}
