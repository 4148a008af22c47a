"""The evaluator on a real GPU: CUDA-event timings, and faults that poison a CUDA context."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, load_problem
from tritonforge.worker.client import WorkerClient
from tritonforge.domain.verdict import Status

pytestmark = pytest.mark.gpu
CANDIDATES = FIXTURES / "candidates"


@pytest.fixture(scope="module")
def evaluator():
    with WorkerClient("cuda") as w:
        problem = load_problem(EXAMPLES / "vector_add.py", w)
        yield Evaluator(problem, w, EvalOptions(device="cuda", shapes="test", check_timeout_s=120))


def test_gpu_timing_is_labelled_and_has_an_interval(evaluator):
    v = evaluator.evaluate(CANDIDATES / "add_correct.py")
    assert v.status is Status.CORRECT and v.timing_label == "GPU"
    up = v.cases[0].speedup
    assert up and up.ci_low <= up.value <= up.ci_high
    assert v.cases[0].candidate.n >= 20
    assert v.environment["gpu"]


@pytest.mark.parametrize("name", ["add_illegal_access", "add_device_assert"])
def test_context_poisoning_faults_crash_and_the_next_candidate_runs(evaluator, name):
    v = evaluator.evaluate(CANDIDATES / f"{name}.py")
    assert v.status in (Status.CRASH, Status.ERROR), v.message
    assert v.message
    assert evaluator.evaluate(CANDIDATES / "add_correct.py").status is Status.CORRECT
