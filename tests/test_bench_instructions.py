"""benchmarks/bench_instructions.py: its workers run every contender; its sums and parsing hold.

valgrind itself is not run here (a counted run takes a minute); what runs
under it is: each worker, on a small batch.
"""

import doctest

import pytest

from benchmarks import bench_instructions
from benchmarks.bench_instructions import parse_cachegrind, per_step, run_worker, table

CACHEGRIND_SUMMARY = """\
==4242== I   refs:      4,420,672,491
==4242==
==4242== Branches:      737,912,664  (637,010,912 cond + 100,901,752 ind)
==4242== Mispredicts:       57,032,992  ( 40,255,450 cond + 16,777,542 ind)
==4242== Mispred rate:            7.8% (        6.1%     +       16.6%   )
"""


def test_the_summary_gives_instructions_and_mispredicts_not_the_branch_totals():
    assert parse_cachegrind(CACHEGRIND_SUMMARY) == {
        "instructions": 4_420_672_491,
        "mispredicts": 57_032_992,
    }


def test_a_summary_without_branch_simulation_gives_instructions_alone():
    assert parse_cachegrind("==1== I   refs:      1,234\n") == {"instructions": 1234}


def test_a_failed_valgrind_run_is_an_error_quoting_its_output():
    with pytest.raises(ValueError, match="no instruction count.*valgrind: command not found"):
        parse_cachegrind("bash: valgrind: command not found")


def test_per_step_is_the_difference_of_the_two_runs_over_the_steps():
    base = {"instructions": 1_000, "mispredicts": 10}
    counted = {"instructions": 9_000, "mispredicts": 410}
    assert per_step(base, counted, 40) == {"instructions": 200.0, "mispredicts": 10.0}


def test_a_count_only_one_run_has_is_left_out():
    assert per_step({"instructions": 0}, {"instructions": 8, "mispredicts": 3}, 4) == {
        "instructions": 2.0
    }


@pytest.mark.parametrize("kind", bench_instructions.STEP_KINDS)
def test_every_step_contender_takes_its_steps(kind):
    assert run_worker(kind, 4, 2) == 2


def test_the_fit_contenders_count_their_steps_and_train():
    steps = bench_instructions._fit_steps_per_epoch()
    assert steps == 45  # the digits' 1,437 training samples in batches of 32
    assert run_worker("fit-minikeras", 32, 1) == steps
    assert run_worker("fit-numpy", 32, 0) == 0


def test_the_table_gives_each_row_its_ratio_to_numpy_at_its_own_batch_size():
    rows = {
        "numpy B=32": {"instructions": 1000.0, "mispredicts": 10.0},
        "numpy B=128": {"instructions": 4000.0, "mispredicts": 20.0},
        "sequential B=32": {"instructions": 1100.0, "mispredicts": 25.0},
        "sequential B=128": {"instructions": 4200.0, "mispredicts": 30.0},
        "fit-numpy": {"instructions": 500.0, "mispredicts": 5.0},
        "fit-minikeras": {"instructions": 600.0, "mispredicts": 6.0},
    }
    ratios = [line.split()[-3::2] for line in table(rows)[2:]]  # (instructions, mispredicts)
    assert ratios == [
        ["1.000", "1.000"],
        ["1.000", "1.000"],
        ["1.100", "2.500"],
        ["1.050", "1.500"],
        ["1.000", "1.000"],
        ["1.200", "1.200"],
    ]


def test_a_row_without_its_numpy_row_has_no_ratio():
    assert table({"closure B=64": {"instructions": 5.0}})[-1].split()[-3::2] == ["-", "-"]


def test_an_unknown_contender_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown kind 'torch'"):
        run_worker("torch", 32, 1)


def test_the_module_examples_run():
    failures, tried = doctest.testmod(bench_instructions)
    assert tried >= 3 and failures == 0
