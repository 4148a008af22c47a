"""Verdicts: what the evaluator concluded about a candidate, per case and overall."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field
from typing import Any


class Status(str, enum.Enum):
    CORRECT = "correct"
    WRONG = "wrong"  # ran, but the output differs from the reference
    INCOMPATIBLE = "incompatible"  # entry missing or with another signature
    LOAD_ERROR = "load_error"  # the file does not parse or raises on import
    COMPILE_ERROR = "compile_error"  # Triton refused to compile a kernel
    ERROR = "error"  # the entry raised
    CRASH = "crash"  # the worker process died (segfault, illegal access, device assert)
    TIMEOUT = "timeout"  # the call ran past its time limit
    OOM = "oom"  # out of device memory
    REJECTED = "rejected"  # a trick: tampering with the evaluator, aliasing, no kernel launched

    @property
    def ok(self) -> bool:
        return self is Status.CORRECT


# When several cases fail differently, the candidate's overall status is the worst one.
_SEVERITY = [Status.CORRECT, Status.WRONG, Status.ERROR, Status.OOM, Status.COMPILE_ERROR,
             Status.TIMEOUT, Status.CRASH, Status.REJECTED, Status.LOAD_ERROR, Status.INCOMPATIBLE]


@dataclass
class Timing:
    """Times of one function on one case, in milliseconds."""

    median_ms: float
    p20_ms: float
    p80_ms: float
    n: int

    @property
    def spread(self) -> float:
        """Relative width of the middle 60% of samples."""
        return (self.p80_ms - self.p20_ms) / self.median_ms if self.median_ms > 0 else math.inf


@dataclass
class Speedup:
    """baseline median / candidate median, with a bootstrap confidence interval."""

    value: float
    ci_low: float
    ci_high: float

    @property
    def faster(self) -> bool:
        """Faster beyond measured noise: the whole interval lies above 1."""
        return self.ci_low > 1.0

    @property
    def slower(self) -> bool:
        return self.ci_high < 1.0

    @property
    def regresses(self) -> bool:
        """A regression no overall gain may buy: slower beyond noise by more than 2%, or a point
        estimate more than 5% below 1 (a microsecond case's wide interval must not hide one)."""
        return self.ci_high < 0.98 or self.value < 0.95

    def __str__(self) -> str:
        return f"{self.value:.3f}x [{self.ci_low:.3f}, {self.ci_high:.3f}]"


@dataclass
class CaseVerdict:
    case: str  # label
    status: Status
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    draws: int = 0
    baseline: Timing | None = None
    candidate: Timing | None = None
    reference: Timing | None = None  # the problem's reference(), when timed for context
    speedup: Speedup | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "CaseVerdict":
        d = dict(d)
        d["status"] = Status(d["status"])
        for key in ("baseline", "candidate", "reference"):
            if d.get(key):
                d[key] = Timing(**d[key])
        if d.get("speedup"):
            d["speedup"] = Speedup(**d["speedup"])
        return CaseVerdict(**d)


@dataclass
class Verdict:
    """A candidate judged on every case of a problem."""

    candidate: str  # path, or "baseline"
    status: Status
    cases: list[CaseVerdict] = field(default_factory=list)
    message: str = ""
    timing_label: str = "GPU"  # "interpreter, not GPU" on a machine without one
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return self.status.ok

    @property
    def speedup(self) -> Speedup | None:
        """Geometric mean over cases of the per-case speedups and their bounds."""
        ups = [c.speedup for c in self.cases if c.speedup is not None]
        if not ups or len(ups) != len(self.cases):
            return None
        g = lambda xs: math.exp(sum(math.log(max(x, 1e-12)) for x in xs) / len(xs))  # noqa: E731
        return Speedup(g([u.value for u in ups]), g([u.ci_low for u in ups]), g([u.ci_high for u in ups]))

    @property
    def faster(self) -> bool:
        """Correct, and faster beyond noise on every case."""
        return self.correct and bool(self.cases) and all(c.speedup and c.speedup.faster for c in self.cases)

    def to_json(self) -> dict[str, Any]:
        up = self.speedup
        return {
            "candidate": self.candidate,
            "status": self.status.value,
            "correct": self.correct,
            "faster": self.faster,
            "speedup": asdict(up) if up else None,
            "message": self.message,
            "timing": self.timing_label,
            "environment": self.environment,
            "cases": [c.to_json() for c in self.cases],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Verdict":
        return Verdict(
            candidate=d["candidate"],
            status=Status(d["status"]),
            cases=[CaseVerdict.from_json(c) for c in d["cases"]],
            message=d.get("message", ""),
            timing_label=d.get("timing", "GPU"),
            environment=d.get("environment", {}),
        )


def worst(statuses: list[Status]) -> Status:
    return max(statuses, key=_SEVERITY.index) if statuses else Status.CORRECT
