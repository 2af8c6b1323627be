"""The benchmark suite runs end to end and says what it skipped (no timing is asserted)."""

import json
import os
import subprocess
import sys

import numpy as np

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
