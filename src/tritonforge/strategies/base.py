"""The strategy interface: anything that proposes candidate source files.

The search loop (`tritonforge.search`) owns the budget and the evaluation; a strategy
only looks at what has been tried and proposes new whole-file sources. Launch-parameter
search, rewrite recipes and LLM rewrites all plug in here without touching the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tritonforge.domain.candidate import Candidate, source_key

__all__ = ["Candidate", "Outcome", "SearchState", "Strategy", "source_key"]


@dataclass
class Outcome:
    """What the loop learned about one evaluated candidate, as strategies see it."""

    candidate: Candidate
    status: str  # a Status value: "correct", "wrong", "compile_error", ...
    speedup: float | None = None  # over the baseline (geometric mean over cases)
    faster: bool = False  # beyond noise, over the candidate it was compared with
    message: str = ""


@dataclass
class SearchState:
    """Everything a strategy may use to decide what to propose next."""

    problem_path: str
    entry: str
    baseline_source: str
    best: Candidate  # the best correct candidate so far (the baseline at first)
    best_speedup: float = 1.0
    history: list[Outcome] = field(default_factory=list)
    findings: list[Any] = field(default_factory=list)  # diagnosis findings of the best, if profiled
    facts: dict[str, Any] = field(default_factory=dict)  # static facts (compile, roofline), if known
    device: str = "cuda"
    round: int = 0

    def tried(self, key: str) -> bool:
        return any(o.candidate.key == key for o in self.history)


@runtime_checkable
class Strategy(Protocol):
    name: str

    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        """Up to `limit` new candidates, most promising first; [] when it has nothing left."""
        ...
