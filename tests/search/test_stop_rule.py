"""When the loop stops: patience waits while the best is far from its roofline floor, and a
run whose every candidate fails the same way stops early with one line saying why."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.candidate import Candidate
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.executors.local import LocalExecutor
from tritonforge.search.loop import Search, SearchConfig, message_shape, patience_stop, same_failure
from tritonforge.store.run_dir import create_store
from tritonforge.strategies.base import Outcome, SearchState, Strategy
from tritonforge.worker.timing import TimingConfig

PLAIN = Path(__file__).resolve().parents[1] / "fixtures" / "problems" / "floor_grid_add.py"


def failed(message: str, status: str = "error") -> Outcome:
    return Outcome(Candidate(f"# {message}\n", "launch_params"), status, message=message)


def test_patience_waits_while_the_best_is_far_from_its_floor():
    assert patience_stop(2, 0.13, 0.5) == ""
    assert patience_stop(2, 0.6, 0.5) == "2 rounds without a better candidate (best at 60% of the roofline floor)"
    assert patience_stop(3, None, 0.5) == "3 rounds without a better candidate (no roofline floor known)"
    assert patience_stop(2, 0.13, None).startswith("2 rounds without a better candidate")


def test_the_same_failure_up_to_numbers_and_paths_stops_the_run():
    capture = "while capturing its launches: ValueError: Expected a cuda device, but got: cpu (line {})"
    history = [failed(capture.format(n)) for n in (31, 32, 40, 7)]
    assert same_failure(history[:3], 4) == ""
    assert same_failure(history, 4) == ("every candidate failed the same way: error: while capturing its launches: "
                                        "ValueError: Expected a cuda device, but got: cpu (line 31)")
    assert message_shape("/tmp/run/candidates/0a1b2c3d4e.py:12: 0x7f00 got 3.5") == "<path>:<n>: <addr> got <n>"
    assert same_failure(history + [failed("out of resources: shared memory")], 4) == ""
    assert same_failure(history[:3] + [failed(capture.format(1), status="compile_error")], 4) == ""
    assert same_failure(history + [Outcome(Candidate("x = 1\n", "t"), "correct")], 4) == ""


class _Renamed(Strategy):
    """Proposes the baseline made 300 ms slower on the host: correct, never faster (a plain copy
    could be, by the interpreter's timing noise; with 20 ms, and in session 24 with 100 ms, a
    loaded CI run once saw a second round)."""

    name = "renamed"

    def propose(self, state: SearchState, limit: int) -> list:
        n = len(state.history)
        slower = "\n_add = add\n\n\ndef add(x, y):\n    time.sleep(0.3)\n    return _add(x, y)\n"
        return [Candidate("import time\n" + state.baseline_source + slower + f"\n# copy {n + i}\n", self.name)
                for i in range(limit)]


class _Broken(Strategy):
    """Proposes files whose entry raises the same error, with a different number each time."""

    name = "broken"

    def propose(self, state: SearchState, limit: int) -> list:
        n = len(state.history)
        return [Candidate(state.baseline_source.replace("    out = torch.zeros_like(x)",
                                                        f"    raise RuntimeError('no block {n + i}')"), self.name)
                for i in range(limit)]


def _run(tmp_path: Path, strategy: Strategy, config: SearchConfig, floor: float | None):
    source = PLAIN.read_text()
    opts = SessionOptions(evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)))
    with Session(PLAIN, opts) as session:
        label = session.problem.cases[0].label
        tmp_path.mkdir(parents=True, exist_ok=True)
        store = create_store(tmp_path, PLAIN, source, session.problem.entry, {})
        try:
            floors = (lambda: {label: floor}) if floor is not None else None
            search = Search(executor=LocalExecutor(session.evaluator), store=store, strategies=[strategy],
                            config=config, workdir=tmp_path, baseline_source=source, floor_ms=floors)
            return search.run()
        finally:
            store.close()


@pytest.mark.slow
def test_far_from_the_floor_the_loop_spends_its_budget_and_near_it_stops_on_patience(tmp_path):
    config = SearchConfig(budget=4, minutes=None, per_round=1, patience=1)
    far = _run(tmp_path / "far", _Renamed(), config, floor=1e-9)
    assert far.stop_reason == "budget of 4 candidates spent" and far.tried == 4
    unknown = _run(tmp_path / "unknown", _Renamed(), config, floor=None)
    assert unknown.stop_reason == "1 rounds without a better candidate (no roofline floor known)"
    assert unknown.tried == 1


@pytest.mark.slow
def test_a_run_whose_every_candidate_fails_alike_stops_early(tmp_path):
    result = _run(tmp_path, _Broken(), SearchConfig(budget=24, minutes=None, per_round=6), floor=None)
    assert result.tried == 4
    assert result.stop_reason.startswith("every candidate failed the same way: ")
    assert "no block 0" in result.stop_reason


def test_the_time_limit_keeps_room_for_what_follows_the_search():
    # Three median candidates' worth (12 s each here) is kept for the per-shape candidate, the
    # final timing and the second opinion, so a 1-minute run stops starting candidates at 24 s.
    search = Search.__new__(Search)
    search.config, search._judge_s = SearchConfig(minutes=1.0), [10.0, 30.0, 12.0]
    now = time.monotonic()
    assert not search._out_of_time(now - 23)
    assert search._out_of_time(now - 25)
    search._judge_s = []  # nothing judged yet: no reserve
    assert not search._out_of_time(now - 59)
    search.config = SearchConfig(minutes=None)
    assert not search._out_of_time(now - 3600)
