"""WorkerClient: a plain answer, or exactly one kind of fault for every other reply (real CPU workers)."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.domain.verdict import Status
from tritonforge.worker.client import CheckResult
from tritonforge.worker.faults import CandidateFault, InternalFault, ProblemFault, ProcessFailed
from tritonforge.worker.timing import TimingConfig

CANDIDATES = FIXTURES / "candidates"


@pytest.fixture(scope="module")
def problem(client):
    return client.describe(EXAMPLES / "vector_add.py")


def check(client, problem, name, timeout=60.0):
    return client.check(problem, problem.test_cases[0], CANDIDATES / f"{name}.py", [1, 2], timeout)


def test_answers_come_back_typed(client, problem):
    assert problem.entry == "add" and [c.params for c in problem.test_cases] == [{"n": 1000}, {"n": 4099}]
    assert client.env()["device"] == "cpu"
    assert client.prepare(problem, problem.test_cases, seed=7, timeout=120) == 2
    right = check(client, problem, "add_correct")
    assert right == CheckResult(Status.CORRECT, "", right.max_abs_err, right.max_rel_err, draws=2)
    wrong = check(client, problem, "add_wrong")  # a wrong answer is an answer, not a fault
    assert wrong.status is Status.WRONG and "outside atol" in wrong.message and wrong.draws == 1
    samples = client.time(problem, problem.test_cases[0], CANDIDATES / "add_correct.py", seed=3,
                          config=TimingConfig(cpu_reps=2).to_json(), timeout=120)
    assert sorted(samples) == ["baseline", "candidate"] and len(samples["candidate"]) == 2


def test_a_candidate_fault_says_whether_the_process_survives(client, problem):
    starts = client.starts
    with pytest.raises(CandidateFault) as caught:
        check(client, problem, "add_signature")
    assert caught.value.status is Status.INCOMPATIBLE and not caught.value.fatal
    assert caught.value.phase == "load_candidate"
    assert client.alive() and client.starts == starts
    with pytest.raises(CandidateFault) as caught:
        check(client, problem, "add_raises")
    assert caught.value.status is Status.ERROR and caught.value.fatal
    assert "RuntimeError: boom" in caught.value.message
    assert not client.alive()  # a fatal fault: the next request starts a fresh process


def test_a_process_that_dies_or_hangs_is_a_process_failure(client, problem):
    with pytest.raises(ProcessFailed) as caught:
        check(client, problem, "add_kills")
    assert caught.value.failure == "crash" and "SIGSEGV" in caught.value.error
    assert caught.value.phase == "candidate"
    check(client, problem, "add_correct")  # loads the problem in the fresh process before the clock matters
    with pytest.raises(ProcessFailed) as caught:
        check(client, problem, "add_hang", timeout=5)
    assert caught.value.failure == "timeout" and "no answer within" in caught.value.error
    assert check(client, problem, "add_correct").status is Status.CORRECT


def test_the_problems_own_failure_is_a_problem_fault(client):
    with pytest.raises(ProblemFault) as caught:
        client.describe(FIXTURES / "problems" / "bad_entry_missing.py")
    assert "has no function named 'addition'" in caught.value.message
    assert caught.value.phase == "load_problem"


def test_a_failure_of_the_worker_itself_is_an_internal_fault(client, problem):
    with pytest.raises(InternalFault) as caught:
        client.time(problem, problem.test_cases[0], None, seed=1, config={"no_such_option": 1}, timeout=60)
    assert "no_such_option" in caught.value.message
