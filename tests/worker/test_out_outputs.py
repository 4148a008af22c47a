"""Entries in the out= style: a returned tensor that is an argument declared in OUTPUTS is that
output, judged once; returning any other input, or part of an output, stays refused."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import FIXTURES, ROOT
from tests.worker.conftest import check_cases
from tritonforge.domain.verdict import Status
from tritonforge.worker import compare as cmp
from tritonforge.worker.faults import CandidateFault

PROBLEM = FIXTURES / "problems" / "add_out.py"
CANDIDATES = FIXTURES / "candidates"


@pytest.fixture(scope="module")
def problem(client):
    return client.describe(PROBLEM)


def test_the_problem_itself_and_a_candidate_returning_out_are_correct(client, problem):
    assert client.prepare(problem, problem.test_cases, seed=3, timeout=120) == 2
    results = check_cases(client, problem, None) + check_cases(client, problem, CANDIDATES / "add_out_other_block.py")
    for result in results:
        assert result.status is Status.CORRECT, result.message


def test_the_corpus_embedding_in_the_out_style_checks_correct(client):
    embedding = client.describe(ROOT / "benchmarks" / "corpus" / "embedding_out.py")
    for result in check_cases(client, embedding, None):
        assert result.status is Status.CORRECT, result.message


@pytest.mark.parametrize("name, message", [("add_out_returns_input", "out shares memory with input 1"),
                                           ("add_out_returns_part", "out shares memory with input 2")])
def test_returning_another_input_or_part_of_out_is_refused(client, problem, name, message):
    with pytest.raises(CandidateFault) as caught:
        check_cases(client, problem, CANDIDATES / f"{name}.py")
    assert caught.value.status is Status.REJECTED and caught.value.message == message


def test_a_returned_output_is_compared_once_and_by_value_against_a_fresh_tensor():
    out, fresh = torch.arange(4.0), torch.arange(4.0)
    got = {"returned": cmp.as_written(out, {"out": out}), "written": {"out": out}}
    assert isinstance(got["returned"], cmp.WrittenOutput) and cmp.tensors(got) == [out]
    assert cmp.compare(got, {"returned": fresh, "written": {"out": fresh}}, None).ok
    wrong = {"returned": fresh + 1, "written": {"out": fresh}}
    assert "out['returned']" in cmp.compare(got, wrong, None).message
    assert not isinstance(cmp.as_written(out[1:], {"out": out}), cmp.WrittenOutput)
    assert not isinstance(cmp.as_written(out.view(2, 2), {"out": out}), cmp.WrittenOutput)
