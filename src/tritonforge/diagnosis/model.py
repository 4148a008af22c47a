"""What a diagnosis reads and what it concludes: plain data at the module's boundary."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonforge.analysis.ceilings import Ceilings
from tritonforge.analysis.roofline import Roofline
from tritonforge.profiling.metrics import KernelMetrics


@dataclass
class DiagnosisInput:
    """Everything known about one kernel launch; any part may be missing.

    `compile` holds what Triton reports after compiling, under these keys (all
    optional): registers, spills, shared (bytes), num_warps, num_stages, and
    instructions, a dict of instruction-name counts or flags such as {"wgmma": 12}.
    `measured_ms` is the launch's measured time, on the clock the roofline's floor is
    compared with; `sm_count` fills in for counters that do not say it.
    """

    metrics: KernelMetrics | None = None
    compile: dict[str, Any] | None = None
    roofline: Roofline | None = None
    measured_ms: float | None = None
    ceilings: Ceilings | None = None
    sm_count: int | None = None


@dataclass
class Finding:
    """One conclusion: what looks wrong (or right), how sure and how much is at stake."""

    kind: str  # a rule id, e.g. "memory_bound_near_peak"
    title: str
    score: float  # 0..1, for ranking: the share of time at stake times the confidence
    evidence: dict[str, float | str] = field(default_factory=dict)  # the values that triggered it
    directions: list[str] = field(default_factory=list)  # what usually helps

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Finding":
        return Finding(kind=d["kind"], title=d["title"], score=float(d["score"]),
                       evidence=dict(d.get("evidence") or {}), directions=list(d.get("directions") or []))
