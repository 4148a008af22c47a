"""A second opinion: the claimed speedup re-timed with do_bench in a fresh process."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import EXAMPLES, ROOT
from tritonforge.commands.check import check
from tritonforge.commands.session import SessionOptions
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.evaluate.second_opinion import GAP, CaseOpinion, SecondOpinion
from tritonforge.report.console import second_opinion_lines
from tritonforge.report.run_files import _second_opinion_lines
from tritonforge.strategies.launch import rewrite


def test_the_gap_is_relative_to_the_claim_and_flagged_past_five_percent():
    agree = CaseOpinion("n=1", claimed=2.0, baseline_ms=2.0, candidate_ms=1.02)
    assert abs(agree.gap) < GAP and not agree.flagged
    apart = CaseOpinion("n=1", claimed=2.0, baseline_ms=2.0, candidate_ms=1.2)
    assert apart.gap == pytest.approx(1 / 1.2 - 1) and apart.flagged
    assert CaseOpinion("n=1", claimed=2.0, error="crashed").flagged


def test_the_replay_decides_and_plain_calls_that_timed_the_host_are_shown_beside():
    # The s7 two-stage sum's small case: do_bench's plain calls took ~80 us for both entries.
    c = CaseOpinion("n=16777216", claimed=2.236, baseline_ms=0.0631, candidate_ms=0.0283, timed="cuda graph replay",
                    plain_baseline_ms=0.0815, plain_candidate_ms=0.0801)
    assert not c.flagged and c.plain_speedup == pytest.approx(0.0815 / 0.0801)
    opinion = SecondOpinion(True, cases=[c]).to_json()
    (line, style), = second_opinion_lines(opinion)
    assert "do_bench graph replay 2.230x" in line and "plain calls 1.017x" in line and "host's launches" in line
    assert style == "dim"
    assert "| n=16777216 | 2.236x | 2.230x | cuda graph replay | 1.017x | -0.3% | agrees |" in _second_opinion_lines(opinion)
    same = CaseOpinion("n=1", claimed=2.0, baseline_ms=2.0, candidate_ms=1.0, timed="cuda graph replay",
                       plain_baseline_ms=2.0, plain_candidate_ms=1.01)
    assert "plain calls" not in second_opinion_lines(SecondOpinion(True, cases=[same]).to_json())[0][0]


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
        assert not c.error and c.speedup and c.timed == "cuda graph replay", c
    gaps = {c.case: round(c.gap, 3) for c in result.opinion.cases}
    assert not result.opinion.flagged, gaps


@pytest.mark.gpu
def test_on_a_gpu_a_host_bound_entry_is_judged_by_its_replay(tmp_path):
    # Two allocations and two launches a call: do_bench's plain loop timed the host there (s7).
    problem = ROOT / "benchmarks" / "corpus" / "sum_squares_two_stage.py"
    candidate = tmp_path / "cand.py"
    candidate.write_text(rewrite(problem.read_text(), {"partial_sum_kernel.BLOCK_SIZE": 2048,
                                                       "partial_sum_kernel.num_warps": 8}))
    options = SessionOptions(evaluation=EvalOptions(device="cuda", draws=1))
    result = check(problem, candidate, options, with_second_opinion=True)
    assert result.verdict.correct and result.opinion.available
    assert all(c.timed == "cuda graph replay" and c.plain_speedup for c in result.opinion.cases), result.opinion
    gaps = {c.case: round(c.gap, 3) for c in result.opinion.cases}
    assert not result.opinion.flagged, gaps


def test_rounds_alternate_and_the_two_ways_take_turns_so_drift_favours_neither():
    from tritonforge.worker.opinion import PLAIN, REPLAY, ROUNDS, time_both

    assert ROUNDS == 3  # the order below is written out for three rounds
    order: list[tuple[str, str]] = []
    fns = {"baseline": lambda: "baseline", "candidate": lambda: "candidate"}

    def replay_of(fn, args):  # what a capture hands back: a call that runs the captured entry
        return lambda: (REPLAY, fn(*args))

    def bench(call):
        got = call()
        order.append(got if isinstance(got, tuple) else (PLAIN, got))
        return float(len(order))

    plain, replayed, why_not = time_both(fns, (), bench, "cpu", capture=replay_of)
    pair = ["baseline", "candidate"]
    assert why_not == ""
    assert order == [(PLAIN, f) for f in pair] + [(REPLAY, f) for f in pair] \
        + [(REPLAY, f) for f in pair] + [(PLAIN, f) for f in pair] \
        + [(PLAIN, f) for f in pair] + [(REPLAY, f) for f in pair]
    assert plain == {"baseline": [1.0, 7.0, 9.0], "candidate": [2.0, 8.0, 10.0]}
    assert replayed == {"baseline": [3.0, 5.0, 11.0], "candidate": [4.0, 6.0, 12.0]}


def test_a_capture_that_fails_leaves_the_plain_calls_and_says_why_instead_of_raising():
    from tritonforge.worker.opinion import ROUNDS, graphed, time_both

    times = iter(range(1, 100))
    plain, replayed, why_not = time_both({"baseline": lambda: None, "candidate": lambda: None}, (),
                                         lambda call: float(next(times)), "cpu",
                                         capture=lambda fn, args: "the entry could not be captured in a CUDA graph: x")
    assert why_not.startswith("the entry could not be captured") and replayed == {"baseline": [], "candidate": []}
    assert [len(v) for v in plain.values()] == [ROUNDS, ROUNDS]
    if not torch.cuda.is_available():  # no stream to capture on: the plain calls stand
        why = graphed(lambda: None, ())
        assert isinstance(why, str) and why.startswith("the entry could not be captured in a CUDA graph")


def test_kernels_of_a_few_microseconds_get_more_rounds():
    from tritonforge.worker.opinion import ROUNDS, SHORT_MS, SHORT_ROUNDS, time_both

    def rounds_at(ms: float) -> list[int]:
        plain, replayed, _ = time_both({"baseline": lambda: None, "candidate": lambda: None}, (),
                                       lambda call: ms, "cpu", capture=lambda fn, args: (lambda: None))
        return [len(v) for v in (*plain.values(), *replayed.values())]

    assert rounds_at(SHORT_MS / 2) == [SHORT_ROUNDS] * 4 and SHORT_ROUNDS > ROUNDS
    assert rounds_at(SHORT_MS * 2) == [ROUNDS] * 4
