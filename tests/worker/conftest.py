"""A CPU worker shared by the tests of one module, and a check of every test case."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonforge.problem.spec import Problem
from tritonforge.worker.client import CheckResult, WorkerClient


@pytest.fixture(scope="module")
def client():
    with WorkerClient("cpu") as c:
        yield c


def check_cases(client: WorkerClient, problem: Problem, candidate: Path | None) -> list[CheckResult]:
    """`candidate` (None: the problem's own entry) checked on every test case, two draws each."""
    return [client.check(problem, case, candidate, [1, 2], 120) for case in problem.test_cases]
