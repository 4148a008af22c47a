"""A second opinion: the claimed speedup re-timed with do_bench in a fresh process."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES
from tritonforge.commands.check import check
from tritonforge.commands.session import SessionOptions
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.evaluate.second_opinion import GAP, CaseOpinion
from tritonforge.strategies.launch import rewrite


def test_the_gap_is_relative_to_the_claim_and_flagged_past_five_percent():
    agree = CaseOpinion("n=1", claimed=2.0, baseline_ms=2.0, candidate_ms=1.02)
    assert abs(agree.gap) < GAP and not agree.flagged
    apart = CaseOpinion("n=1", claimed=2.0, baseline_ms=2.0, candidate_ms=1.2)
    assert apart.gap == pytest.approx(1 / 1.2 - 1) and apart.flagged
    assert CaseOpinion("n=1", claimed=2.0, error="crashed").flagged


def test_without_a_gpu_there_is_no_second_opinion_and_it_says_why(tmp_path):
    candidate = tmp_path / "cand.py"
    candidate.write_text(rewrite((EXAMPLES / "vector_add.py").read_text(), {"add_kernel.BLOCK_SIZE": 128}))
    options = SessionOptions(evaluation=EvalOptions(device="cpu", draws=1, shapes="test", measure=False))
    result = check(EXAMPLES / "vector_add.py", candidate, options, with_second_opinion=True)
    assert result.verdict.correct
    assert not result.opinion.available and "GPU" in result.opinion.reason


@pytest.mark.gpu
@pytest.mark.parametrize("example, change", [("vector_add", {"add_kernel.BLOCK_SIZE": 1024}),
                                             ("softmax", {"softmax_kernel.num_warps": 8})])
def test_on_a_gpu_do_bench_agrees_with_the_claim(tmp_path, example, change):
    source = (EXAMPLES / f"{example}.py").read_text()
    candidate = tmp_path / "cand.py"
    candidate.write_text(rewrite(source, change))
    options = SessionOptions(evaluation=EvalOptions(device="cuda", draws=1))
    result = check(EXAMPLES / f"{example}.py", candidate, options, with_second_opinion=True)
    assert result.verdict.correct and result.opinion.available
    for c in result.opinion.cases:
        assert not c.error and c.speedup, c
    gaps = {c.case: round(c.gap, 3) for c in result.opinion.cases}
    assert not result.opinion.flagged, gaps
