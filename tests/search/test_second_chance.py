"""A rewrite that is correct but not faster gets one turn of the launch search (search/loop.py
`_second_chance`): on the H200 the two-stage sum collapsed into atomics ran 2x slower with the
partial block it inherited (256: a million atomics on one address) and was dropped untuned
(benchmarks/results/2026-12-03-h200-s6.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.analysis.test_replay import capture
from tests.conftest import FIXTURES, ROOT
from tritonforge.domain.candidate import Candidate
from tritonforge.search.loop import Search, SearchConfig
from tritonforge.store import RunStore
from tritonforge.strategies.base import Outcome, SearchState
from tritonforge.strategies.launch import rewrite
from tritonforge.strategies.launch.strategy import LaunchParamStrategy
from tritonforge.strategies.recipes import RecipeStrategy

TWO_STAGE = ROOT / "benchmarks" / "corpus" / "sum_squares_two_stage.py"


def _search(tmp_path: Path) -> Search:
    source = TWO_STAGE.read_text()
    store = RunStore.create(tmp_path / "run.sqlite", str(TWO_STAGE), source, "sum_of_squares", {})
    return Search(executor=None, store=store, strategies=[RecipeStrategy(), LaunchParamStrategy()],
                  config=SearchConfig(), workdir=tmp_path, baseline_source=source)


def _state(best: Candidate, history: list[Outcome]) -> SearchState:
    return SearchState(problem_path=str(TWO_STAGE), entry="sum_of_squares", baseline_source=best.source,
                       best=best, history=history, device="cpu")


def test_a_correct_rewrite_that_is_slower_gets_launch_moves_of_its_own(tmp_path):
    search = _search(tmp_path)
    baseline = Candidate(TWO_STAGE.read_text(), "baseline")
    [collapsed] = RecipeStrategy().propose(_state(baseline, []), 1)
    assert collapsed.params["recipes"] == ["collapse_two_stage"]
    slower = Outcome(candidate=collapsed, status="correct", speedup=0.5)
    moves = search._second_chance(_state(baseline, [slower]), 2, set())
    assert 1 <= len(moves) <= 2
    assert all(m.origin == "launch_params" and m.parent == collapsed.key for m in moves)
    assert all("tl.atomic_add" in m.source for m in moves)  # moves of the rewrite, not of the best
    # Their lines say so: the same move on the best would be described alike.
    assert all(m.description.endswith(f"(on recipe collapse_two_stage {collapsed.key[:8]})") for m in moves)
    assert [e["data"]["rewrite"] for e in search.store.events("second_chance")] == [collapsed.key]


def test_one_turn_each_and_none_for_wrong_rewrites_or_the_best(tmp_path):
    search = _search(tmp_path)
    baseline = Candidate(TWO_STAGE.read_text(), "baseline")
    [collapsed] = RecipeStrategy().propose(_state(baseline, []), 1)
    slower = Outcome(candidate=collapsed, status="correct", speedup=0.5)
    moves = search._second_chance(_state(baseline, [slower]), 2, set())
    tuned = [Outcome(candidate=m, status="correct", speedup=0.9) for m in moves]
    assert search._second_chance(_state(baseline, [slower, *tuned]), 2, set()) == []  # its turn was taken
    wrong = Outcome(candidate=collapsed, status="wrong")
    assert search._second_chance(_state(baseline, [wrong]), 2, set()) == []
    assert search._second_chance(_state(collapsed, [slower]), 2, set()) == []  # already the best: tuned anyway


def test_turns_go_round_the_recipes_before_one_gets_a_second(tmp_path):
    # s7 on the H200: persistent_grid, proposed after collapse_two_stage each round, took the
    # turn twice and the collapsed sum was never tuned.
    search = _search(tmp_path)
    baseline = Candidate(TWO_STAGE.read_text(), "baseline")
    collapsed, persistent = RecipeStrategy().propose(_state(baseline, []), 2)
    assert [c.params["recipes"] for c in (collapsed, persistent)] == [["collapse_two_stage"], ["persistent_grid"]]
    judged = [Outcome(candidate=collapsed, status="correct", speedup=0.5),
              Outcome(candidate=persistent, status="correct", speedup=1.2)]
    first = search._second_chance(_state(baseline, judged), 2, set())
    assert first and all(m.parent == persistent.key for m in first)  # the most recent first
    # Next round, the same two recipes again on a new best: collapse's turn, though persistent came later.
    best = Candidate(rewrite(baseline.source, {"partial_sum_kernel.BLOCK_SIZE": 2048}), "launch_params",
                     parent=baseline.key)
    collapsed2, persistent2 = RecipeStrategy().propose(_state(best, []), 2)
    judged += [Outcome(candidate=m, status="correct", speedup=1.5) for m in first]
    judged.append(Outcome(candidate=best, status="correct", speedup=2.7))
    judged += [Outcome(candidate=collapsed2, status="correct", speedup=0.9),
               Outcome(candidate=persistent2, status="correct", speedup=1.4)]
    second = search._second_chance(_state(best, judged), 2, set())
    assert second and all(m.parent == collapsed2.key for m in second)


def test_a_rewrite_is_tuned_on_launches_captured_from_it(tmp_path):
    # The chunked launch's rewrite computes its block and warps in the entry's loop, from a
    # local the problem's own entry never had: replayed from the baseline's capture they are
    # unknown, from the rewrite's own capture (what the loop records) they move.
    problem = FIXTURES / "problems" / "styles" / "chunked_rows.py"
    baseline = Candidate(problem.read_text(), "baseline")
    first = SearchState(problem_path=str(problem), entry="center_rows", baseline_source=baseline.source,
                        best=baseline, device="cpu")
    rewrite = next(c for c in RecipeStrategy().propose(first, 4) if c.params["recipes"] == ["row_one_pass"])
    (tmp_path / "rewrite.py").write_text(rewrite.source)
    state = dataclasses.replace(first, best=rewrite, captured=capture(problem))
    blind = [c.description for c in LaunchParamStrategy().propose(state, 8)]
    state.captured_rewrites = {rewrite.key: capture(tmp_path / "rewrite.py")}
    seeing = [c.description for c in LaunchParamStrategy().propose(state, 8)]
    assert not any("num_warps" in d for d in blind)
    assert any(d.startswith("num_warps 4->") for d in seeing)
