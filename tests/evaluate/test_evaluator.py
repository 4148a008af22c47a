"""The evaluator in Triton's interpreter: each kind of candidate gets its verdict, and the
parent and the next candidate go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, load_problem
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.timing import TimingConfig
from tritonforge.domain.verdict import Status

CANDIDATES = FIXTURES / "candidates"
ADD = EXAMPLES / "vector_add.py"


@pytest.fixture(scope="module")
def worker():
    with WorkerClient("cpu") as w:
        yield w


@pytest.fixture(scope="module")
def evaluator(worker):
    problem = load_problem(ADD, worker)
    options = EvalOptions(device="cpu", check_timeout_s=20, time_timeout_s=60,
                          timing=TimingConfig(cpu_reps=2))
    return Evaluator(problem, worker, options)


def judge(evaluator: Evaluator, name: str):
    return evaluator.evaluate(CANDIDATES / f"{name}.py")


def test_problem_is_described(evaluator):
    p = evaluator.problem
    assert p.entry == "add"
    assert [x.name for x in p.signature] == ["x", "y"]
    assert [c.params for c in p.test_cases] == [{"n": 1000}, {"n": 4099}]
    assert p.cases[0].params == {"n": 1 << 27}
    assert p.has_reference


def test_correct_candidate_is_timed_with_a_labelled_speedup(evaluator):
    v = judge(evaluator, "add_correct")
    assert v.status is Status.CORRECT
    assert [c.status for c in v.cases] == [Status.CORRECT, Status.CORRECT]
    assert all(c.draws == 3 for c in v.cases)
    case = v.cases[0]
    assert case.baseline and case.candidate and case.speedup
    assert case.speedup.ci_low <= case.speedup.value <= case.speedup.ci_high
    assert v.timing_label == "interpreter, not GPU"
    assert v.to_json()["timing"] == "interpreter, not GPU"


def test_wrong_candidate(evaluator):
    v = judge(evaluator, "add_wrong")
    assert v.status is Status.WRONG
    assert "outside atol" in v.cases[0].message
    assert v.cases[0].max_abs_err > 0.1
    assert v.cases[0].speedup is None  # wrong candidates are not timed


@pytest.mark.slow
def test_hanging_candidate_times_out_and_the_next_one_runs(evaluator):
    evaluator.options.check_timeout_s = 8
    try:
        v = judge(evaluator, "add_hang")
    finally:
        evaluator.options.check_timeout_s = 20
    assert v.status is Status.TIMEOUT
    assert "no answer within" in v.message
    assert judge(evaluator, "add_correct").status is Status.CORRECT


@pytest.mark.slow
def test_raising_candidate(evaluator):
    v = judge(evaluator, "add_raises")
    assert v.status is Status.ERROR
    assert "RuntimeError: boom: candidate gave up" in v.message


@pytest.mark.slow
def test_candidate_that_kills_its_process(evaluator, worker):
    starts = worker.starts
    v = judge(evaluator, "add_kills")
    assert v.status is Status.CRASH
    assert "SIGSEGV" in v.message
    assert judge(evaluator, "add_correct").status is Status.CORRECT
    assert worker.starts > starts  # a fresh worker took over


def test_candidate_with_another_signature_is_incompatible(evaluator):
    v = judge(evaluator, "add_signature")
    assert v.status is Status.INCOMPATIBLE
    assert "add(x, y, alpha)" in v.message
    assert len(v.cases) == 1  # a whole-file verdict: the other cases are not tried


def test_candidate_that_mutates_its_input(evaluator):
    v = judge(evaluator, "add_mutates")
    assert v.status is Status.WRONG
    assert "input 'x' was modified" in v.message


def test_candidate_that_returns_an_alias_of_its_input(evaluator):
    v = judge(evaluator, "add_alias")
    assert v.status is Status.REJECTED
    assert "shares memory with input 0" in v.message


def test_missing_candidate_file_is_a_load_error(evaluator, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def add(x, y):\n    return (x +\n")
    v = evaluator.evaluate(broken)
    assert v.status is Status.LOAD_ERROR
    assert "does not parse" in v.message


def test_candidate_without_a_kernel_launch_is_rejected(evaluator, tmp_path):
    torch_only = tmp_path / "torch_only.py"
    torch_only.write_text("def add(x, y):\n    return x + y\n")
    v = evaluator.evaluate(torch_only)
    assert v.status is Status.REJECTED
    assert "launched no Triton kernel" in v.message


def test_baseline_checks_against_reference(evaluator):
    v = evaluator.evaluate(None)
    assert v.status is Status.CORRECT
    assert v.cases[0].baseline is not None and v.cases[0].speedup is None
