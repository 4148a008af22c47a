"""The profiler interface: what to profile, what comes back, and who can do it.

Each vendor's profiler implements `Profiler` in its own module and is listed in
`registry`; Nsight Compute (`profiling.ncu`) is the first. A profiler never raises for its environment (no
tool, no permission, a target that crashed): `available()` and `profile()` say why in
one line, and the caller carries on without counters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from tritonforge.profiling.metrics import KernelMetrics


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""  # one line; empty when ok


@dataclass
class ProfileTarget:
    """One call of a problem's entry (or a candidate's) on one case, to be profiled."""

    problem: str  # path of the problem file
    entry: str | None = None  # None: the problem's ENTRY
    candidate: str | None = None  # path of a candidate file; None: the problem's own entry
    specs: list[str] = field(default_factory=list)  # zero-config input specs, as given to ProblemModule
    params: dict[str, Any] = field(default_factory=dict)  # make_inputs keyword arguments of the case
    spec: str | None = None  # which of `specs` is the case (None: the first, if any)
    seed: int = 0
    kernels: list[str] | None = None  # kernel names to keep; None: every Triton kernel the call launches
    warmup: int = 2  # calls before the profiled one: compile, autotune, caches

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> "ProfileTarget":
        known = set(ProfileTarget.__dataclass_fields__)
        return ProfileTarget(**{k: v for k, v in d.items() if k in known})


@dataclass
class ProfileResult:
    kernels: list[KernelMetrics]
    command: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    warning: str = ""  # one line, empty when all went well
    report_path: str | None = None  # the profiler's own report, when kept
    launches: int | None = None  # Triton launches in the profiled call

    @property
    def ok(self) -> bool:
        return bool(self.kernels)


@runtime_checkable
class Profiler(Protocol):
    name: str

    def available(self) -> Availability: ...

    def profile(self, target: ProfileTarget) -> ProfileResult: ...
