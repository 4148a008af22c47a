"""A candidate that beats the baseline by more than the best did must still beat the best head to
head (search/loop.py `_confirm`); when it loses, the console says how, not only the store. One
within 2% of the best goes to that head to head only when it is ahead of the best on every case."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.candidate import Candidate
from tritonforge.domain.verdict import CaseVerdict, Speedup, Status, Timing, Verdict
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.executors.local import LocalExecutor
from tritonforge.report.progress import SearchProgress
from tritonforge.report.run_files import report_markdown, summary
from tritonforge.search.executor import Judgement
from tritonforge.search.loop import Search, SearchConfig, _outcome
from tritonforge.store.run_dir import create_store
from tritonforge.strategies.base import CaseResult, Outcome, SearchState
from tritonforge.worker.timing import TimingConfig

PLAIN = Path(__file__).resolve().parents[1] / "fixtures" / "problems" / "floor_grid_add.py"


def test_a_candidate_slower_than_the_best_head_to_head_is_kept_out_and_says_so(tmp_path):
    source = PLAIN.read_text()
    best = Candidate(source.replace("BLOCK = 16", "BLOCK = 256"), "launch_params")
    # The same launch, 30 ms slower per call on every case: no timing noise of the
    # interpreter hides that.
    slower = Candidate(best.source.replace("    return out", "    import time\n    time.sleep(0.03)\n    return out"),
                       "launch_params")
    opts = SessionOptions(evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=3)))
    with Session(PLAIN, opts) as session:
        store = create_store(tmp_path, PLAIN, source, session.problem.entry, {})
        try:
            search = Search(executor=LocalExecutor(session.evaluator), store=store, strategies=[],
                            config=SearchConfig(), workdir=tmp_path, baseline_source=source)
            state = SearchState(problem_path=str(PLAIN), entry="add", baseline_source=source, best=best,
                                history=[], device="cpu")
            label = session.problem.cases[0].label
            lost = search._confirm(slower, search.path_of(slower), state, [label])
            [event] = [e["data"] for e in store.events("confirm")]
        finally:
            store.close()
    assert lost == f"lost head to head against {best.key}: slower on {label}"
    assert event["accepted"] is False and event["against"] == best.key

    out = io.StringIO()
    progress = SearchProgress(Console(file=out, width=200), budget=4)
    progress("judged", {"key": slower.key, "status": "correct", "speedup": 9.5, "description": "BLOCK 256",
                        "best": False, "message": "", "head_to_head": lost})
    assert f"BLOCK 256: 9.500x {lost}" in out.getvalue()

    # The report's table of candidates says it too, from what a resumed run rebuilds.
    t = Timing(1.0, 0.9, 1.1, 5)
    v = Verdict("best.py", Status.CORRECT, [CaseVerdict(label, Status.CORRECT, baseline=t, candidate=t,
                                                        speedup=Speedup(9.5, 9.0, 10.0))])
    s = summary(problem="p.py", entry="add", baseline=v, best_verdict=v, best=best, improved=True, tried=2, rounds=1,
                stop_reason="budget", wall_s=1.0, statuses=Counter(correct=2), run_dir=tmp_path)
    row = _outcome(slower, {"status": "correct", "speedup": 9.5, "verdict": v.to_json()}, event["lost"])
    assert f"| correct ({lost}) | 9.500x |" in report_markdown(s, [row])


def test_a_candidate_a_little_faster_than_the_best_says_why_it_was_not_taken(tmp_path):
    # Probe round 11: 3.214x was passed over for a best of 3.164x with no word on why.
    source = PLAIN.read_text()
    store = create_store(tmp_path, PLAIN, source, "add", {})
    try:
        search = Search(executor=None, store=store, strategies=[], config=SearchConfig(), workdir=tmp_path,
                        baseline_source=source)
        best = Candidate(source.replace("BLOCK = 16", "BLOCK = 256"), "launch_params")
        state = SearchState(problem_path=str(PLAIN), entry="add", baseline_source=source, best=best,
                            best_speedup=3.164, history=[], device="cpu")
        near = Candidate(source.replace("BLOCK = 16", "BLOCK = 128"), "launch_params")
        t = Timing(1.0, 0.9, 1.1, 5)
        verdict = Verdict("near.py", Status.CORRECT, [CaseVerdict("n=7936", Status.CORRECT, baseline=t, candidate=t,
                                                                  speedup=Speedup(3.214, 3.1, 3.3))])
        store.add_candidates([near], 1)
        assert search._accept(state, Judgement(near, verdict, 0.0, 0.0)) is False
    finally:
        store.close()
    assert state.best is best
    assert state.history[-1].message == "within 2% of the best (3.164x): not taken"


def _near_search(tmp_path, executor, best: Candidate, best_cases: dict[str, tuple[float, float, float]]):
    source = PLAIN.read_text()
    store = create_store(tmp_path, PLAIN, source, "add", {})
    search = Search(executor=executor, store=store, strategies=[], config=SearchConfig(), workdir=tmp_path,
                    baseline_source=source)
    state = SearchState(problem_path=str(PLAIN), entry="add", baseline_source=source, best=best,
                        best_speedup=3.164, history=[Outcome(best, "correct", 3.164, True, cases=best_cases)],
                        best_cases=[CaseResult(case, "correct", 1.0, 3.0, up)
                                    for case, (up, _, _) in best_cases.items()],
                        device="cpu")
    store.add_candidates([best], 1)
    return store, search, state


def _verdict(ups: dict[str, float]) -> Verdict:
    t = Timing(1.0, 0.9, 1.1, 5)
    return Verdict("near.py", Status.CORRECT, [CaseVerdict(case, Status.CORRECT, baseline=t, candidate=t,
                                                           speedup=Speedup(up, up * 0.99, up * 1.01))
                                               for case, up in ups.items()])


def test_a_candidate_within_the_band_but_ahead_on_every_case_is_taken_when_it_wins_head_to_head(tmp_path):
    # s24, H100: persistent_grid on the tma matmul was ahead on both cases (+0.3%, +2.0%),
    # 1.2% overall, and the 2% band alone turned it away.
    source = PLAIN.read_text()
    fast = source.replace("BLOCK = 16", "BLOCK = 256")
    # The best so far is the same launch 30 ms slower per call: the head to head is real
    # timing, and the interpreter's noise cannot hide that.
    best = Candidate(fast.replace("    return out", "    import time\n    time.sleep(0.03)\n    return out"),
                     "launch_params")
    near = Candidate(fast, "launch_params")
    opts = SessionOptions(evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=3)))
    with Session(PLAIN, opts) as session:
        label = session.problem.cases[0].label
        store, search, state = _near_search(tmp_path, LocalExecutor(session.evaluator), best,
                                            {label: (3.164, 3.1, 3.2)})
        try:
            store.add_candidates([near], 1)
            assert search._accept(state, Judgement(near, _verdict({label: 3.20}), 0.0, 0.0)) is True
            [event] = [e["data"] for e in store.events("confirm")]
        finally:
            store.close()
    assert state.best is near and state.best_speedup == pytest.approx(3.20)
    assert event["accepted"] is True and event["against"] == best.key


def test_a_candidate_within_the_band_and_behind_on_one_case_gets_no_head_to_head(tmp_path):
    source = PLAIN.read_text()
    best = Candidate(source.replace("BLOCK = 16", "BLOCK = 256"), "launch_params")
    near = Candidate(source.replace("BLOCK = 16", "BLOCK = 128"), "launch_params")
    # No executor: a head to head would fail the test, not only lose.
    store, search, state = _near_search(tmp_path, None, best, {"small": (3.0, 2.9, 3.1), "large": (3.3, 3.2, 3.4)})
    try:
        store.add_candidates([near], 1)
        assert search._accept(state, Judgement(near, _verdict({"small": 2.97, "large": 3.46}), 0.0, 0.0)) is False
        assert store.events("confirm") == []
    finally:
        store.close()
    assert state.best is best
    assert state.history[-1].message == "within 2% of the best (3.164x): not taken"
