"""What a diagnosis reads and what it concludes: plain data at the module's boundary."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonforge.profiling.metrics import KernelMetrics


@dataclass(frozen=True)
class Roofline:
    """The work a launch cannot avoid, from the problem's sizes (not from counters).

    `bytes`: compulsory DRAM traffic (each input read once, each output written once);
    `floor_ns`: the time that work needs at the GPU's peaks; `measured_ns`: the measured
    time of the same launch, from the same clock as `floor_ns` is compared with.
    """

    bytes: float | None = None
    flops: float | None = None
    floor_ns: float | None = None
    measured_ns: float | None = None


@dataclass(frozen=True)
class GpuCeilings:
    """Peaks of the device, for rules that must judge numbers without ncu's percentages."""

    dram_bytes_per_s: float | None = None
    tensor_flops_per_s: float | None = None
    fp32_flops_per_s: float | None = None
    sm_count: int | None = None
    l2_bytes: float | None = None


@dataclass
class DiagnosisInput:
    """Everything known about one kernel launch; any part may be missing.

    `compile` holds what Triton reports after compiling, under these keys (all
    optional): registers, spills, shared (bytes), num_warps, num_stages, and
    instructions, a dict of instruction-name counts or flags such as {"wgmma": 12}.
    """

    metrics: KernelMetrics | None = None
    compile: dict[str, Any] | None = None
    roofline: Roofline | None = None
    ceilings: GpuCeilings | None = None


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
