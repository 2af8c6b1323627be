"""benchmarks/bench_time_split.py: samples go to the step they fell in, by shared object.

`perf` itself is not run here (it samples a whole process for seconds, and
is not on every machine); its output's parsing, the attribution, the table
and the worker it samples are.
"""

import doctest
import json
import os
from collections import Counter

import pytest

from benchmarks import bench_time_split
from benchmarks.bench_time_split import attribute, group_of, parse_perf_script, run_worker, table

BLAS = "/venv/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so"
UMATH = "/venv/lib/python3.11/site-packages/numpy/_core/_multiarray_umath.cpython-311.so"
LIBPYTHON = "/opt/python/lib/libpython3.11.so.1.0"

PERF_SCRIPT = f"""\
60223.847640862:  ffffffff821f2fa7 exc_page_fault ([kernel.kallsyms])
60223.848639937:      7effe289190b sgemm_kernel_HASWELL ({BLAS})
60223.849643329:      7effe3b5dccb FLOAT_maximum_X86_V3 ({UMATH})

60223.850000000:      7effe3b5dccc [unknown] ([unknown])
not a sample: a warning perf printed
60224.000000001:      7f0000000001 _PyEval_EvalFrameDefault ({LIBPYTHON})
"""


def test_perf_script_lines_become_stamped_samples_and_the_rest_is_skipped():
    assert parse_perf_script(PERF_SCRIPT) == [
        (60223_847640862, "exc_page_fault", "[kernel.kallsyms]"),
        (60223_848639937, "sgemm_kernel_HASWELL", BLAS),
        (60223_849643329, "FLOAT_maximum_X86_V3", UMATH),
        (60223_850000000, "[unknown]", "[unknown]"),
        (60224_000000001, "_PyEval_EvalFrameDefault", LIBPYTHON),
    ]


@pytest.mark.parametrize(
    "dso, group",
    [
        (BLAS, "BLAS"),
        ("/usr/lib/libopenblas.so.0", "BLAS"),
        (UMATH, "numpy"),
        ("/venv/lib/python3.11/site-packages/numpy.libs/libgfortran-040039e1.so", "numpy"),
        (LIBPYTHON, "Python"),
        ("/usr/bin/python3.11", "Python"),
        ("/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so", "ctypes"),
        ("/usr/lib/x86_64-linux-gnu/libffi.so.8.1.2", "ctypes"),
        ("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc"),
        ("/usr/lib/x86_64-linux-gnu/libm.so.6", "libc"),
        ("[kernel.kallsyms]", "kernel"),
        ("[vdso]", "kernel"),
        ("/venv/lib/python3.11/site-packages/h5py/defs.cpython-311.so", "other"),
        ("[unknown]", "other"),
    ],
)
def test_each_shared_object_falls_in_its_group(dso, group):
    assert group_of(dso) == group


def test_a_sample_counts_for_the_step_it_fell_in_ends_included_gaps_and_set_up_not():
    steps = [("sequential", 300, 400), ("numpy", 100, 200)]  # (the log's order need not be time's)
    samples = [
        (50, "setup", LIBPYTHON),  # before the first step
        (100, "a", BLAS),  # a step's first instant
        (200, "b", UMATH),  # its last
        (250, "c", LIBPYTHON),  # between steps: the worker's own loop
        (300, "d", LIBPYTHON),
        (350, "e", BLAS),
        (401, "f", BLAS),  # after the last
    ]
    counts = attribute(samples, steps)
    assert counts == {
        "numpy": Counter(BLAS=1, numpy=1),
        "sequential": Counter(Python=1, BLAS=1),
    }


def test_the_table_gives_microseconds_per_step_and_each_contenders_difference_from_numpy():
    ms = 1_000_000
    steps = [("numpy", 0, 2 * ms), ("numpy", 3 * ms, 7 * ms), ("closure", 8 * ms, 13 * ms)]
    steps.append(("closure", 14 * ms, 16 * ms))
    counts = {"numpy": Counter(BLAS=4, Python=2), "closure": Counter(BLAS=4, Python=4, libc=2)}
    lines = table(counts, steps, 1000.0)  # 1 ms a sample; two steps each
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[2:]}
    groups = bench_time_split.GROUPS
    assert rows["numpy"][0] == 3000  # the median of 2 ms and 4 ms
    assert dict(zip(groups, rows["numpy"][1:]))["BLAS"] == 2000
    closure = dict(zip(("step", *groups), rows["closure-numpy"]))
    assert closure == {
        **dict.fromkeys(("step", *groups), 0.0),
        "step": 500.0,  # medians 3.5 ms and 3 ms
        "Python": 1000.0,
        "libc": 1000.0,
    }


def test_without_a_numpy_row_there_is_no_difference_row():
    lines = table({"closure": Counter(BLAS=1)}, [("closure", 0, 10)], 100.0)
    assert [line.split()[0] for line in lines[2:]] == ["closure"]


def test_the_worker_interleaves_the_contenders_and_logs_each_step(tmp_path):
    log = tmp_path / "steps.log"
    steps = run_worker(["numpy", "closure", "sequential"], 2, 4, (8, 4, 2), str(log))
    kinds = [kind for kind, _, _ in steps]
    forward, backward = ["numpy", "closure", "sequential"], ["sequential", "closure", "numpy"]
    assert kinds == backward + forward + backward + forward
    assert all(start <= end for _, start, end in steps)
    assert all(end <= start for (_, _, end), (_, start, _) in zip(steps, steps[1:]))
    logged = [line.split() for line in log.read_text().splitlines()]
    assert [(kind, int(a), int(b)) for kind, a, b in logged] == steps


def test_the_worker_refuses_an_unknown_contender_by_name(tmp_path):
    with pytest.raises(ValueError, match="unknown kind 'torch'"):
        run_worker(["numpy", "torch"], 2, 1, (8, 4, 2), str(tmp_path / "steps.log"))


def test_without_perf_the_script_says_so(monkeypatch):
    monkeypatch.setattr(bench_time_split.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="perf is not on the PATH"):
        bench_time_split.main(["--rounds", "1"])


def test_the_worker_mode_writes_its_log(tmp_path):
    log = tmp_path / "steps.log"
    bench_time_split.main(
        ["--worker", str(log), "--rounds", "2", "--batch", "2"]
        + ["--sizes", "8,4,2", "--kinds", "numpy,sequential"]
    )
    assert os.path.exists(log) and len(log.read_text().splitlines()) == 4


def test_the_module_examples_run():
    failures, tried = doctest.testmod(bench_time_split)
    assert tried >= 10 and failures == 0


def test_the_report_and_its_json_come_from_the_sampled_run(monkeypatch, tmp_path, capsys):
    steps = [("numpy", 0, 2_000_000), ("sequential", 3_000_000, 6_000_000)]
    samples = [(1_000_000, "k", BLAS), (4_000_000, "k", BLAS), (5_000_000, "e", LIBPYTHON)]
    monkeypatch.setattr(bench_time_split.shutil, "which", lambda name: "/usr/bin/perf")
    monkeypatch.setattr(bench_time_split, "_sampled", lambda args: (samples, steps))
    path = tmp_path / "split.json"
    bench_time_split.main(["--kinds", "numpy,sequential", "--json", str(path)])
    assert capsys.readouterr().out.splitlines()[-1].split()[:5] == [
        "sequential-numpy",
        "1000",  # the median steps: 3 ms against 2 ms
        "0",  # one BLAS sample (1 ms) each
        "0",
        "1000",  # the Python sample
    ]
    record = json.loads(path.read_text())
    assert record["samples"] == {"numpy": {"BLAS": 1}, "sequential": {"BLAS": 1, "Python": 1}}
    assert record["steps"] == {"numpy": 1, "sequential": 1}
    assert record["options"]["kinds"] == "numpy,sequential" and record["options"]["batch"] == 32
