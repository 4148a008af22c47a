"""A second opinion on a claimed speedup: the baseline and the candidate re-timed in a fresh
worker with `triton.testing.do_bench`, alternating, and compared case by case with what the
evaluator claimed. A gap above `GAP` is flagged wherever the result is shown. do_bench times
a CUDA graph replay of each entry where both can be captured (GPU time, as the evaluator
counts it); its plain calls, host launches included, are kept beside (worker/opinion.py)."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tritonforge.domain.verdict import Verdict
from tritonforge.problem.spec import Case, Problem
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import WorkerFault

GAP = 0.05  # the largest relative gap between the two speedups taken as agreement


@dataclass
class CaseOpinion:
    case: str
    claimed: float | None  # the evaluator's speedup (ratio of medians)
    baseline_ms: float | None = None  # do_bench medians, as `timed`
    candidate_ms: float | None = None
    error: str = ""
    timed: str = ""  # "cuda graph replay" (each entry captured once) or "plain calls"
    no_graph: str = ""  # why not replayed
    plain_baseline_ms: float | None = None  # do_bench of plain calls, host launches included
    plain_candidate_ms: float | None = None
    rounds: int = 0  # rounds of each way, baseline and candidate alternating

    @property
    def speedup(self) -> float | None:
        return self.baseline_ms / self.candidate_ms if self.baseline_ms and self.candidate_ms else None

    @property
    def plain_speedup(self) -> float | None:
        return self.plain_baseline_ms / self.plain_candidate_ms \
            if self.plain_baseline_ms and self.plain_candidate_ms else None

    @property
    def gap(self) -> float | None:
        """do_bench's speedup relative to the claimed one, minus 1."""
        return self.speedup / self.claimed - 1 if self.speedup and self.claimed else None

    @property
    def flagged(self) -> bool:
        return bool(self.error) or (self.gap is not None and abs(self.gap) > GAP)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "speedup": self.speedup, "gap": self.gap, "flagged": self.flagged,
                "plain_speedup": self.plain_speedup}


@dataclass
class SecondOpinion:
    available: bool
    reason: str = ""  # why there is none
    cases: list[CaseOpinion] = field(default_factory=list)

    @property
    def flagged(self) -> list[CaseOpinion]:
        return [c for c in self.cases if c.flagged]

    def to_json(self) -> dict[str, Any]:
        return {"available": self.available, "reason": self.reason, "tolerance": GAP,
                "tool": "triton.testing.do_bench (median), fresh process, same inputs each repetition, "
                        "over a CUDA graph replay of each entry where both can be captured",
                "cases": [c.to_json() for c in self.cases], "flagged": [c.case for c in self.flagged]}


def second_opinion(problem: Problem, candidate: Path, verdict: Verdict, cases: list[Case], device: str,
                   timeout: float = 300.0) -> SecondOpinion:
    """Re-time `candidate` against the problem's entry on `cases`; `verdict` holds the claims."""
    if device != "cuda":
        return SecondOpinion(False, "do_bench needs a GPU")
    claimed = {cv.case: cv.speedup.value if cv.speedup else None for cv in verdict.cases}
    out = SecondOpinion(True)
    with WorkerClient(device) as worker:
        for case in cases:
            opinion = CaseOpinion(case.label, claimed.get(case.label))
            try:
                r = worker.second_opinion(problem, case, candidate, seed=secrets.randbits(31), timeout=timeout)
                opinion.baseline_ms, opinion.candidate_ms = r["baseline"], r["candidate"]
                opinion.timed, opinion.no_graph = r.get("timed", ""), r.get("no_graph", "")
                plain = r.get("plain") or {}
                opinion.plain_baseline_ms, opinion.plain_candidate_ms = plain.get("baseline"), plain.get("candidate")
                opinion.rounds = len((r.get("rounds") or {}).get("baseline", []))
            except WorkerFault as e:
                opinion.error = str(e)
            out.cases.append(opinion)
    return out
