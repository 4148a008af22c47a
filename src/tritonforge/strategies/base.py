"""The strategy interface: anything that proposes candidate source files.

The search loop (`tritonforge.search`) owns the budget and the evaluation; a strategy
only looks at what has been tried and proposes new whole-file sources. Launch-parameter
search, rewrite recipes and LLM rewrites all plug in here, the way a sampler plugs into
an optimizer: subclass `Strategy`, then `registry.register(name, cls)`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tritonforge.domain.candidate import Candidate, source_key

__all__ = ["Candidate", "CaseResult", "Outcome", "SearchState", "Strategy", "source_key"]


@dataclass
class Outcome:
    """What the loop learned about one evaluated candidate, as strategies see it."""

    candidate: Candidate
    status: str  # a Status value: "correct", "wrong", "compile_error", ...
    speedup: float | None = None  # over the baseline (geometric mean over cases)
    faster: bool = False  # beyond noise, over the candidate it was compared with
    message: str = ""
    # Per case label: (speedup over the baseline, its 95% interval low, high), when correct.
    cases: dict[str, tuple[float, float, float]] = field(default_factory=dict)


@dataclass
class CaseResult:
    """One case of the best candidate's verdict."""

    case: str  # the case label
    status: str  # a Status value
    median_ms: float | None
    baseline_ms: float | None
    speedup: float | None


@dataclass
class SearchState:
    """Everything a strategy may use to decide what to propose next.

    The loop fills what it knows; a field left at its empty default means "not known".
    """

    problem_path: str
    entry: str
    baseline_source: str
    best: Candidate  # the best correct candidate so far (the baseline at first)
    best_speedup: float = 1.0
    history: list[Outcome] = field(default_factory=list)
    best_cases: list[CaseResult] = field(default_factory=list)  # per-case view of the best so far
    launch_facts: list[dict[str, Any]] = field(default_factory=list)  # CompileFacts.to_json() of the best's launches
    floors_ms: dict[str, float] = field(default_factory=dict)  # roofline floor per case label
    gpu: dict[str, Any] = field(default_factory=dict)  # device limits, e.g. max_shared_per_block, sm_count
    findings: list[Any] = field(default_factory=list)  # diagnosis findings of the best, if profiled
    # The launches the problem's own entry made, per case label: launch_capture records with
    # the host locals around each launch (what computed launch values are replayed from).
    captured: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # The same for rewritten files (by source key) that became the best or got a turn of the
    # tuners: their host code may compute launch values the problem's entry never had.
    captured_rewrites: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    # The shapes of the entry's positional arguments per case label (None: not a tensor).
    case_shapes: dict[str, list[list[int] | None]] = field(default_factory=dict)
    device: str = "cuda"
    round: int = 0

    @property
    def source(self) -> str:
        """The best candidate's source."""
        return self.best.source

    @property
    def dominant_case(self) -> str | None:
        """The case the best spends most time on (the last one when times are not known)."""
        timed = [c for c in self.best_cases if c.median_ms is not None]
        if timed:
            return max(timed, key=lambda c: c.median_ms or 0.0).case
        return list(self.captured)[-1] if self.captured else None

    def tried(self, key: str) -> bool:
        return any(o.candidate.key == key for o in self.history)


class Strategy(ABC):
    """A source of candidates. The loop asks `applies` once, then each round `propose`,
    shows every judged candidate to `observe`, and records `describe_space` per round;
    once the search has stopped, `finish` may combine what it found."""

    name: ClassVar[str]  # also the `origin` of the candidates it proposes
    # A strategy whose candidates rewrite the code (recipes, a model) writes them with the
    # launch values of the file it started from; one that tunes launch values can tune them.
    # A rewrite that is correct but not yet faster gets one turn of the tuners before the
    # search moves on (search/loop.py): fused or split code often wants other blocks.
    rewrites: ClassVar[bool] = False
    tunes: ClassVar[bool] = False

    def applies(self, source: str, entry: str) -> bool:
        """Whether this strategy has anything to offer for a problem file at all."""
        return True

    def refusals(self, source: str, entry: str) -> dict[str, str]:
        """Why it has nothing to offer a file, part by part (a recipe each), for the run record."""
        return {}

    @abstractmethod
    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        """Up to `limit` new candidates, most promising first; [] when it has nothing left."""

    def describe_space(self) -> dict[str, Any] | None:
        """What the last `propose` searched over, as plain data for the run record; None if nothing."""
        return None

    def observe(self, outcome: Outcome, state: SearchState) -> None:
        """Called with each judged candidate, for strategies that learn as they go."""

    def finish(self, state: SearchState) -> list[Candidate]:
        """Candidates that combine the search's results (a per-shape dispatch, say), judged
        after the search stops, in a slot of the budget kept for them; [] for most strategies.
        Overriding it is what makes the loop keep that slot."""
        return []
