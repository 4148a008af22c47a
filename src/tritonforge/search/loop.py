"""The optimization loop: baseline -> candidates -> evaluate -> keep the best -> repeat.

A candidate becomes the new best only when it is correct on every case, its speedup over
the baseline beats the best's by `min_gain` (or, within it, beats the best's on every case),
and a head-to-head timing against the best clears the noise. Every step is written to the
run store first, so a killed run resumes where it stopped without judging anything twice.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from tritonforge.analysis.occupancy import spec_for_arch
from tritonforge.domain.candidate import BASELINE, Candidate
from tritonforge.domain.verdict import Verdict
from tritonforge.files import write_whole
from tritonforge.search.executor import Executor, Judgement
from tritonforge.strategies.base import CaseResult, Outcome, SearchState, Strategy


# What follows the search, in candidates' worth of time: the per-shape candidate, the final
# timing of the best against the baseline, and the second opinion's re-timing of both.
RESERVE_CANDIDATES = 3

# The stop reason when not one candidate was ever proposed; summary.json says why per value.
NOTHING_TO_TUNE = ("nothing to tune: no launch value is one this tool can move, or every move of it was ruled "
                   "out (see launch_parameters)")


@dataclass
class SearchConfig:
    budget: int = 24  # candidates evaluated at most, the baseline not counted
    # Wall-clock limit of the run: no candidate starts once the time left is less than what
    # still follows the search (a per-shape candidate, the final timing, the second opinion),
    # reckoned as RESERVE_CANDIDATES median candidates.
    minutes: float | None = 2.5
    per_round: int = 6  # candidates proposed per round
    min_gain: float = 0.02  # a new best must beat the old one's speedup by this fraction
    patience: int = 2  # rounds in a row without a new best before stopping
    near_floor: float | None = 0.9  # stop when the best reaches this fraction of the roofline floor
    far_floor: float | None = 0.5  # below this fraction of the floor, patience waits (budget and time do not)
    same_failures: int = 4  # stop once this many (or a whole round) failed the same way, none correct

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SearchResult:
    baseline: Verdict
    best: Candidate
    best_verdict: Verdict  # the best timed against the baseline at the end ("baseline" if none)
    tried: int
    rounds: int
    stop_reason: str
    wall_s: float
    history: list[Outcome] = field(default_factory=list)

    @property
    def improved(self) -> bool:
        return self.best.origin != BASELINE


SECOND_CHANCE = 2  # launch moves a round gives a rewrite that was correct but not faster


class Observer(Protocol):
    def __call__(self, kind: str, data: dict[str, Any]) -> None: ...


class Search:
    def __init__(self, *, executor: Executor, store: Any, strategies: list[Strategy], config: SearchConfig,
                 workdir: Path, baseline_source: str, observer: Observer | None = None,
                 floor_ms: Callable[[], dict[str, float]] | None = None,
                 profile: Callable[[Candidate, Path | None], list[Any]] | None = None) -> None:
        self.executor = executor
        self.store = store
        self.strategies = strategies
        self.config = config
        self.workdir = Path(workdir)
        self.baseline_source = baseline_source
        self.observe = observer or (lambda kind, data: None)
        self.floor_ms = floor_ms
        self.profile = profile  # profiles the baseline and each new best; returns findings
        (self.workdir / "candidates").mkdir(parents=True, exist_ok=True)
        self._reserved = 0  # budget slots kept for finishing strategies (see run)
        self._judge_s: list[float] = []  # seconds each judged candidate took, for the time reserve
        self._asked: set[str] = set()  # the strategies asked to propose this round

    # --- files --------------------------------------------------------------------
    def path_of(self, c: Candidate) -> Path:
        path = self.workdir / "candidates" / f"{c.key}.py"
        # A run killed mid-write leaves a partial file: never judge one, rewrite it whole.
        data = c.source.encode()  # UTF-8, as Python reads source files
        if not path.exists() or path.read_bytes() != data:
            write_whole(path, data)
        return path

    # --- the loop -----------------------------------------------------------------
    def run(self) -> SearchResult:
        t0 = time.monotonic()
        baseline = Candidate(source=self.baseline_source, origin=BASELINE, description="the problem as given")
        base_verdict = self._baseline(baseline)
        if not base_verdict.correct:
            raise BaselineError(base_verdict)
        state = self._state(baseline)
        self._capture(state)
        self._profile(state, state.best)
        self._finish_pending(state)
        # A slot of the budget is kept for what strategies combine once the search stops (a
        # per-shape dispatch needs two cases); if they have nothing, the search gets it back.
        self._reserved = int(len(state.case_shapes) > 1 and any(_finishes(s) for s in self.strategies))
        while True:
            stop = self._search(state, t0)
            if self._finish(state) or not self._reserved or not stop.startswith("budget"):
                break
            self._reserved = 0
        self.store.log_event("stopped", {"reason": stop, "round": state.round})
        final = self._final_verdict(state.best, base_verdict)
        return SearchResult(baseline=base_verdict, best=state.best, best_verdict=final, tried=self._tried(state),
                            rounds=state.round, stop_reason=stop, wall_s=time.monotonic() - t0,
                            history=state.history)

    def _search(self, state: SearchState, t0: float) -> str:
        """Rounds until a stop rule holds; returns why it stopped."""
        quiet_rounds = 0
        while True:
            stop = self._should_stop(state, t0, quiet_rounds)
            if stop:
                return stop
            state.round += 1
            improved = self._round(state, t0)
            if improved is None:
                return "the strategies have nothing left to propose" if state.history else NOTHING_TO_TUNE
            quiet_rounds = 0 if improved else quiet_rounds + 1

    def _baseline(self, baseline: Candidate) -> Verdict:
        self.store.add_candidate(baseline, 0)
        done = self.store.evaluation(baseline.key)
        if done:
            return Verdict.from_json(done["verdict"])
        self.observe("baseline", {})
        started = time.time()
        verdict = self.executor.evaluate(None)
        self._record(baseline, verdict, started, speedup=1.0 if verdict.correct else None, faster=False,
                     best=verdict.correct and self.store.best() is None)
        return verdict

    def _state(self, baseline: Candidate) -> SearchState:
        """Rebuild what strategies see from the store (fresh run or resume alike)."""
        problem = self.executor.problem
        state = SearchState(problem_path=str(problem.path), entry=problem.entry,
                            baseline_source=self.baseline_source, best=baseline,
                            device=self.executor.device, gpu=self._gpu())
        best_key = self.store.best() or baseline.key
        lost = {e["data"]["key"]: e["data"].get("lost", "") for e in self.store.events("confirm")}
        for cand, ev in self.store.judged():
            if cand.origin == BASELINE:
                continue
            state.history.append(_outcome(cand, ev, lost.get(cand.key, "")))
            if cand.key == best_key:
                state.best, state.best_speedup = cand, ev.get("speedup") or 1.0
        # Every round logs its number before adding its candidates.
        state.round = max([0] + [e["data"].get("round", 0) for e in self.store.events("round")])
        self._learn_best(state)
        return state

    def _capture(self, state: SearchState) -> None:
        """The baseline's launches per case, so strategies can replay computed launch values."""
        captured = self.executor.capture(None)
        state.captured = captured.launches
        state.case_shapes = captured.shapes
        kernels = sorted({r["kernel_name"] for records in captured.launches.values() for r in records})
        self.store.log_event("captured", {"launches": {k: len(v) for k, v in captured.launches.items()},
                                          "kernels": kernels, "failures": captured.failures})

    def _gpu(self) -> dict[str, Any]:
        """The device's limits, for strategies that prune by them."""
        env = self.executor.environment()
        if self.executor.device != "cuda":
            return {}
        arch = int(str(env.get("capability", "9.0")).replace(".", ""))
        spec = spec_for_arch(arch)
        limits = dict(spec.__dict__) if spec else {}
        if env.get("sm_count"):
            limits["sm_count"] = env["sm_count"]
        return limits

    def _learn_best(self, state: SearchState) -> None:
        """What strategies see of the best: per-case results, compile facts, floors."""
        ev = self.store.evaluation(state.best.key)
        state.best_cases = _case_results(Verdict.from_json(ev["verdict"])) if ev else []
        compiled = self.store.profiles(state.best.key, "compile")
        state.launch_facts = list(compiled[-1]["data"].get("facts") or []) if compiled else []
        state.floors_ms = self.floor_ms() if self.floor_ms else {}

    def _should_stop(self, state: SearchState, t0: float, quiet_rounds: int) -> str:
        c = self.config
        if self._tried(state) >= c.budget - self._reserved:
            return f"budget of {c.budget} candidates spent"
        if self._out_of_time(t0):
            return f"time limit of {c.minutes:g} min reached"
        failed = self._failed_alike(state)
        if failed:
            return failed
        if quiet_rounds >= c.patience:
            return patience_stop(quiet_rounds, self._floor_fraction(state), c.far_floor)
        if c.near_floor and self.floor_ms and self._near_floor(state):
            return f"best is within {c.near_floor:.0%} of the roofline floor"
        return ""

    def _floor_fractions(self, state: SearchState) -> list[tuple[float, float | None]]:
        """(the best's time, floor / time or None) per case of the best's verdict."""
        floors = self.floor_ms() if self.floor_ms else {}
        ev = self.store.evaluation(state.best.key)
        if not ev:
            return []
        out = []
        for cv in Verdict.from_json(ev["verdict"]).cases:
            timing = cv.candidate or cv.baseline
            floor = floors.get(cv.case)
            if timing is not None and timing.median_ms > 0:
                out.append((timing.median_ms, floor / timing.median_ms if floor else None))
        return out

    def _near_floor(self, state: SearchState) -> bool:
        fractions = self._floor_fractions(state)
        return bool(fractions) and all(f is not None and f >= self.config.near_floor for _, f in fractions)

    def _floor_fraction(self, state: SearchState) -> float | None:
        """floor / time on the case the best spends longest on (the one that dominates)."""
        fractions = self._floor_fractions(state)
        return max(fractions, key=lambda x: x[0])[1] if fractions else None

    def _failed_alike(self, state: SearchState) -> str:
        need = max(2, min(self.config.same_failures, self.config.per_round))
        return same_failure(state.history, need) if self.config.same_failures else ""

    def _out_of_time(self, t0: float) -> bool:
        if self.config.minutes is None:
            return False
        took = sorted(self._judge_s)
        reserve = RESERVE_CANDIDATES * took[len(took) // 2] if took else 0.0
        return time.monotonic() - t0 + reserve > 60 * self.config.minutes

    def _tried(self, state: SearchState) -> int:
        return len(state.history)

    def _capture_rewrite(self, state: SearchState, c: Candidate) -> None:
        """A file other than the baseline, once, its own launches, so the tuners can replay the
        launch values its host code computes (a recipe's new locals, say in a loop over chunks
        of rows) and read what only a run shows (configs built by code, which a launch move of
        another value, a heuristic's, leaves as they were but cannot vouch for unseen)."""
        if c.origin == BASELINE or c.key in state.captured_rewrites or not any(s.tunes for s in self.strategies):
            return
        captured = self.executor.capture(self.path_of(c))
        state.captured_rewrites[c.key] = {} if captured.failures else captured.launches
        self.store.log_event("captured", {"of": c.key, "launches": {k: len(v) for k, v in captured.launches.items()},
                                          "failures": captured.failures})

    def _round(self, state: SearchState, t0: float) -> bool | None:
        """True when the round found a new best; None when nothing was left to propose."""
        want = min(self.config.per_round, self.config.budget - self._reserved - self._tried(state))
        state.floors_ms = self.floor_ms() if self.floor_ms else {}
        proposals = self._propose(state, want)
        self.store.log_event("round", {"round": state.round, "proposed": [c.key for c in proposals],
                                       "best": state.best.key})
        for strategy in self.strategies:
            # The search space and the order it was walked in, for the record: of the strategies
            # asked this round (one not reached would show an earlier round's, or none).
            space = strategy.describe_space() if strategy.name in self._asked else None
            if space is not None:
                self.store.log_event("search_space", {"round": state.round, "strategy": strategy.name,
                                                      "space": space})
        self.observe("round", {"round": state.round, "proposed": len(proposals)})
        if not proposals:
            self.store.log_event("exhausted", {"round": state.round})
            return None
        self.store.add_candidates(proposals, state.round)  # the whole round, or none of it
        return self._evaluate_all(state, proposals, t0)

    def _propose(self, state: SearchState, want: int) -> list[Candidate]:
        seen = {o.candidate.key for o in state.history} | {state.best.key}
        room = min(SECOND_CHANCE, want // 3)
        chance = self._chance(state) if room > 0 else None
        for rewrite in (state.best, chance.candidate if chance else None):
            if rewrite is not None:
                self._capture_rewrite(state, rewrite)
        self._asked = set()
        # First, so that the record of each strategy's space (describe_space) is the best's.
        out = self._second_chance(state, room, seen)
        for strategy in self.strategies:
            if len(out) >= want:
                break
            self._asked.add(strategy.name)
            for c in strategy.propose(state, want - len(out)):
                if c.key not in seen and self.store.evaluation(c.key) is None:
                    seen.add(c.key)
                    out.append(c)
        return out[:want]

    def _second_chance(self, state: SearchState, room: int, seen: set[str]) -> list[Candidate]:
        """Launch moves on the most recent rewrite that was correct but not faster than the
        best and that no candidate was made from yet: it was written with launch values tuned
        for the code it replaced (a two-stage sum collapsed into atomics wants larger blocks)."""
        tuners = [s for s in self.strategies if s.tunes]
        chance = self._chance(state)
        if chance is None or room <= 0 or not tuners:
            return []
        alt = dataclasses.replace(state, best=chance.candidate, best_speedup=chance.speedup or 0.0, findings=[],
                                  best_cases=[])
        out: list[Candidate] = []
        for strategy in tuners:
            self._asked.add(strategy.name)
            for c in strategy.propose(alt, room - len(out)):
                if c.key not in seen and self.store.evaluation(c.key) is None:
                    seen.add(c.key)
                    # Said in its line: the same move on the best would read the same.
                    head = chance.candidate.description.split(":")[0] or chance.candidate.origin
                    c.description = f"{c.description} (on {head} {chance.candidate.key[:8]})"
                    out.append(c)
        if out:
            self.store.log_event("second_chance", {"round": state.round, "rewrite": chance.candidate.key,
                                                   "proposed": [c.key for c in out]})
        return out

    def _chance(self, state: SearchState) -> Outcome | None:
        """The rewrite whose turn of the tuners it is: the most recent one correct, not the
        best and not yet a parent."""
        rewriters = {s.name for s in self.strategies if s.rewrites}
        parents = {o.candidate.parent for o in state.history}
        waiting = [o for o in reversed(state.history) if o.candidate.origin in rewriters and o.status == "correct"
                   and o.candidate.key != state.best.key and o.candidate.key not in parents]
        # Turns go round the kinds of rewrite: a recipe that had one (or was tuned as the best)
        # waits while another has had none (s7: persistent_grid, written last, twice took
        # the turn collapse_two_stage needed).
        tuned = {_kind(o.candidate) for o in state.history if o.candidate.key in parents
                 and o.candidate.origin in rewriters}
        return next((o for o in waiting if _kind(o.candidate) not in tuned), waiting[0] if waiting else None)

    def _finish(self, state: SearchState) -> bool:
        """What strategies combine from the search's results (a per-shape dispatch), judged
        once it has stopped, within the budget (its reserved slot) but not its time, by the
        same rules as any candidate. False when there was nothing to judge."""
        seen = {o.candidate.key for o in state.history} | {state.best.key}
        room = max(0, self.config.budget - self._tried(state))
        proposals = [c for s in self.strategies for c in s.finish(state)
                     if c.key not in seen and self.store.evaluation(c.key) is None][:room]
        if not proposals:
            return False
        state.round += 1
        self.store.log_event("round", {"round": state.round, "proposed": [c.key for c in proposals],
                                       "best": state.best.key, "finish": True})
        self.observe("round", {"round": state.round, "proposed": len(proposals)})
        self.store.add_candidates(proposals, state.round)
        self._evaluate_all(state, proposals, time.monotonic())
        return True

    def _finish_pending(self, state: SearchState) -> None:
        """Resume: judge what a killed run had proposed but not yet judged."""
        pending = [c for c in self.store.pending() if c.origin != BASELINE]
        if pending:
            self.observe("resume", {"pending": len(pending)})
            self._evaluate_all(state, pending, time.monotonic())

    def _evaluate_all(self, state: SearchState, candidates: list[Candidate], t0: float) -> bool:
        if self._out_of_time(t0):
            return False
        batch = [(c, self.path_of(c)) for c in candidates]
        starting = lambda c: self.observe("candidate", {"key": c.key, "description": c.description,  # noqa: E731
                                                        "origin": c.origin})
        improved, since = False, time.monotonic()
        for judged in self.executor.judge(batch, starting):
            improved |= self._accept(state, judged)
            self._judge_s.append(time.monotonic() - since)
            since = time.monotonic()
            if self._out_of_time(t0) or self._failed_alike(state):
                break
        return improved

    def _accept(self, state: SearchState, judged: Judgement) -> bool:
        c, verdict = judged.candidate, judged.verdict
        if judged.launch_facts:
            self.store.add_profile(c.key, "compile", {"facts": judged.launch_facts})
        up = verdict.speedup.value if verdict.correct and verdict.speedup else None
        faster = bool(verdict.correct and verdict.speedup and verdict.speedup.ci_low > 1.0)
        clean = faster and up is not None and not any(cv.speedup and cv.speedup.regresses for cv in verdict.cases)
        better = clean and up > state.best_speedup * (1 + self.config.min_gain)
        lost = band = ""
        if faster and up is not None and state.best_speedup < up <= state.best_speedup * (1 + self.config.min_gain):
            band = f"within {self.config.min_gain:.0%} of the best ({state.best_speedup:.3f}x)"
            lost = f"{band}: not taken"
            # A small gain on every case is still a gain (s24: persistent_grid on the tma
            # matmul, +0.3% and +2.0%); the head to head, not the band, says if it is real.
            better = clean and state.best.origin != BASELINE and _ahead_on_every_case(state, verdict)
        if better and state.best.origin != BASELINE:
            defeat = self._confirm(c, self.path_of(c), state, [cv.case for cv in verdict.cases])
            lost, better = (f"{band}, {defeat}" if defeat and band else defeat), not defeat
        # The verdict and the change of best land in one transaction: a kill before it
        # leaves the candidate pending, to be judged again in full on resume.
        self._record(c, verdict, judged.started, speedup=up, faster=faster, best=better)
        outcome = Outcome(candidate=c, status=verdict.status.value, speedup=up, faster=faster,
                          message=lost or verdict.message, cases=_case_speedups(verdict))
        state.history.append(outcome)
        for strategy in self.strategies:
            strategy.observe(outcome, state)
        self.observe("judged", {"key": c.key, "status": verdict.status.value, "speedup": up,
                                "description": c.description, "best": better, "message": verdict.message,
                                "head_to_head": lost})
        if better:
            state.best, state.best_speedup = c, up
            self.store.log_event("best", {"key": c.key, "speedup": up, "round": state.round})
            self._learn_best(state)
            self._profile(state, c)
        return better

    def _profile(self, state: SearchState, c: Candidate) -> None:
        """Profile a new best (or the baseline) so that strategies aim at its bottleneck."""
        if self.profile is None:
            return
        self.observe("profile", {"key": c.key})
        state.findings = self.profile(c, None if c.origin == BASELINE else self.path_of(c))

    def _confirm(self, c: Candidate, path: Path, state: SearchState, labels: list[str]) -> str:
        """Head to head against the best so far: faster overall, slower on no case. "" when
        it wins, else one line saying how it lost."""
        ups = self.executor.head_to_head(path, self.path_of(state.best))
        ok = _geomean([u.ci_low for u in ups]) > 1.0 and not any(u.regresses for u in ups)
        lost = ""
        if not ok:
            slower = [labels[i] if i < len(labels) else str(i) for i, u in enumerate(ups) if u.regresses]
            how = f"slower on {', '.join(slower)}" if slower else \
                f"{_geomean([u.value for u in ups]):.3f}x, not faster beyond noise"
            lost = f"lost head to head against {state.best.key}: {how}"
        self.store.log_event("confirm", {"key": c.key, "against": state.best.key, "accepted": ok,
                                         "speedups": [u.__dict__ for u in ups], "lost": lost})
        return lost

    def _final_verdict(self, best: Candidate, base_verdict: Verdict) -> Verdict:
        if best.origin == BASELINE:
            return base_verdict
        self.observe("final", {"key": best.key})
        verdict = self.executor.evaluate(self.path_of(best))
        self.store.log_event("final", {"key": best.key, "verdict": verdict.to_json()})
        return verdict

    def _record(self, c: Candidate, verdict: Verdict, started: float, *, speedup: float | None, faster: bool,
                best: bool) -> None:
        self.store.record_evaluation(c.key, verdict.to_json(), speedup=speedup, faster=faster,
                                     environment=verdict.environment, started=started, finished=time.time(),
                                     make_best=best)


class BaselineError(Exception):
    """The problem's own entry is not correct against its reference: nothing to optimize."""

    def __init__(self, verdict: Verdict) -> None:
        hint = " (a case the entry answers without a Triton kernel, a torch fallback for small inputs, cannot be " \
               "judged: leave it out of the shapes)" if verdict.message.endswith("launched no Triton kernel") else ""
        super().__init__(f"the problem's own entry is {verdict.status.value}: {verdict.message}{hint}")
        self.verdict = verdict


def patience_stop(quiet_rounds: int, floor_fraction: float | None, far_floor: float | None) -> str:
    """Why `quiet_rounds` without a new best end the search, or "" while the best is still
    far from its roofline floor (then only the budget, the time or an empty round end it)."""
    if floor_fraction is None:
        return f"{quiet_rounds} rounds without a better candidate (no roofline floor known)"
    if far_floor and floor_fraction < far_floor:
        return ""
    return f"{quiet_rounds} rounds without a better candidate (best at {floor_fraction:.0%} of the roofline floor)"


def same_failure(history: list[Outcome], at_least: int) -> str:
    """One line when at least `at_least` candidates were judged, none correct, all with the
    same status and the same message up to numbers, paths and addresses; else ""."""
    if len(history) < at_least or any(o.status == "correct" for o in history):
        return ""
    if len({(o.status, message_shape(o.message)) for o in history}) != 1:
        return ""
    first = history[0]
    line = next((x.strip() for x in first.message.splitlines() if x.strip()), "")
    line = line if len(line) <= 160 else line[:157] + "..."
    return f"every candidate failed the same way: {first.status}: {line}".rstrip(": ")


_SHAPE_RULES = ((re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+)+"), "<path>"),
                (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
                (re.compile(r"\b[0-9a-f]{8,}\b"), "<key>"),
                (re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"), "<n>"),
                (re.compile(r"\s+"), " "))


def message_shape(message: str) -> str:
    """A verdict message with what differs between candidates (numbers, paths, addresses,
    candidate keys) blanked out: equal shapes mean the same failure."""
    out = message or ""
    for pattern, word in _SHAPE_RULES:
        out = pattern.sub(word, out)
    return out.strip()


def _case_results(verdict: Verdict) -> list[CaseResult]:
    out = []
    for cv in verdict.cases:
        mine = cv.candidate or cv.baseline
        out.append(CaseResult(case=cv.case, status=cv.status.value, median_ms=mine.median_ms if mine else None,
                              baseline_ms=cv.baseline.median_ms if cv.baseline else None,
                              speedup=cv.speedup.value if cv.speedup else None))
    return out


def _outcome(c: Candidate, ev: dict[str, Any], lost: str = "") -> Outcome:
    """A judged candidate as the store holds it; `lost`: how it lost head to head, if it did."""
    cases = _case_speedups(Verdict.from_json(ev["verdict"])) if ev.get("verdict") else {}
    return Outcome(candidate=c, status=ev["status"], speedup=ev.get("speedup"), faster=bool(ev.get("faster")),
                   message=lost or (ev.get("verdict") or {}).get("message", ""), cases=cases)


def _finishes(strategy: Strategy) -> bool:
    """Whether `strategy` has a finishing step of its own (see Strategy.finish)."""
    return type(strategy).finish is not Strategy.finish


def _case_speedups(verdict: Verdict) -> dict[str, tuple[float, float, float]]:
    if not verdict.correct:
        return {}
    return {cv.case: (cv.speedup.value, cv.speedup.ci_low, cv.speedup.ci_high) for cv in verdict.cases if cv.speedup}


def _ahead_on_every_case(state: SearchState, verdict: Verdict) -> bool:
    """The candidate's own timing puts it above the best's (`state.best_cases`) on every case."""
    mine = _case_speedups(verdict)
    return bool(state.best_cases) and all(b.speedup is not None and b.case in mine and mine[b.case][0] > b.speedup
                                          for b in state.best_cases)


def _geomean(xs: list[float]) -> float:
    import math

    return math.exp(sum(math.log(max(x, 1e-12)) for x in xs) / len(xs)) if xs else 0.0


def _kind(c: Candidate) -> str:
    """What rewrite a candidate is, its file aside: "recipe split_k" (its description's head)."""
    return f"{c.origin}: {c.description.split(':')[0]}"
