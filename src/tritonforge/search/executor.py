"""What the search needs from whoever runs candidates: a batch of candidate files in,
verdicts out, one at a time as each is ready.

`tritonforge.executors` holds the implementations (today: one local GPU or CPU worker,
with an optional compile pre-check on the CPU cores); a per-GPU or a Ray executor is one
more file there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from tritonforge.domain.candidate import Candidate
from tritonforge.domain.verdict import Speedup, Verdict
from tritonforge.problem.spec import Problem


@dataclass
class Judgement:
    """One candidate's verdict, with what was learned on the way."""

    candidate: Candidate
    verdict: Verdict
    started: float  # wall-clock seconds (time.time()) when judging began
    finished: float
    launch_facts: list[dict[str, Any]] = field(default_factory=list)  # compile facts, when compiled first


@dataclass
class Captured:
    """Launches per case label (analysis.launch_capture records with their host locals), and
    why a case has none."""

    launches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    shapes: dict[str, list[list[int] | None]] = field(default_factory=dict)  # the entry's arguments

    def add(self, case: str, reply: dict[str, Any]) -> None:
        """One case's capture (WorkerClient.capture's reply)."""
        self.launches[case] = reply["launches"]
        self.shapes[case] = reply["shapes"]


class Executor(Protocol):
    problem: Problem
    device: str  # "cuda", or "cpu" for Triton's interpreter
    timing_label: str

    def environment(self) -> dict[str, Any]:
        """GPU, driver and versions of where candidates run."""
        ...

    def evaluate(self, path: Path | None) -> Verdict:
        """Judge one file now (None: the problem's own entry)."""
        ...

    def judge(self, batch: list[tuple[Candidate, Path]],
              starting: Callable[[Candidate], None] | None = None) -> Iterator[Judgement]:
        """Judge a batch; yields each verdict as soon as it is ready (the caller may stop early)."""
        ...

    def head_to_head(self, candidate: Path, against: Path) -> list[Speedup]:
        """Per-case speedup of `candidate` over `against`, both already judged correct."""
        ...

    def capture(self, path: Path | None) -> Captured:
        """The launches one call of `path` (None: the problem's entry) makes on each case."""
        ...
