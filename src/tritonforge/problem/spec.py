"""What a problem is, as the parent process sees it.

The parent never imports a problem's code: a worker process does, and reports these
facts back (see `tritonforge.problem.load`). Everything here is plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


class ProblemError(Exception):
    """A problem file that cannot be used. Its message is one line naming the file."""

    def __init__(self, path: str | Path, what: str) -> None:
        self.path = str(path)
        self.what = what
        super().__init__(f"{path}: {what}")


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    @staticmethod
    def for_dtype(dtype: str) -> "Tolerance":
        """Default tolerance for an output dtype name such as 'float16' or 'torch.float32'."""
        name = dtype.replace("torch.", "")
        if name in ("float16", "bfloat16", "half"):
            return Tolerance(atol=1e-2, rtol=1e-2)
        if name.startswith("float8"):
            return Tolerance(atol=1e-1, rtol=1e-1)
        if name in ("float64", "double"):
            return Tolerance(atol=1e-8, rtol=1e-7)
        if name.startswith(("int", "uint", "bool")):
            return Tolerance(atol=0.0, rtol=0.0)
        # float32: Triton's default tl.dot precision is tf32, which lands near 1e-3
        # relative on long reductions; elementwise fp32 is far tighter than this.
        return Tolerance(atol=1e-4, rtol=1e-4)


@dataclass(frozen=True)
class Case:
    """One set of shape parameters: keyword arguments of `make_inputs`, or an input spec."""

    params: dict[str, Any]
    spec: str | None = None  # zero-config form: "x=float16[4096,8192]"

    @property
    def label(self) -> str:
        if self.spec is not None:
            return self.spec
        return ", ".join(f"{k}={v}" for k, v in self.params.items()) or "default"

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "spec": self.spec}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Case":
        return Case(params=dict(d.get("params") or {}), spec=d.get("spec"))


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # inspect.Parameter kind name
    default: str | None = None  # repr of the default, None when there is none


@dataclass
class Problem:
    """A loaded problem: where it lives and what its module declares."""

    path: Path
    entry: str
    signature: list[Parameter]
    cases: list[Case]  # GPU sizes (SHAPES)
    test_cases: list[Case]  # interpreter sizes (TEST_SHAPES)
    has_reference: bool
    tolerance: Tolerance | None  # None: chosen per output dtype
    outputs: list[str] = field(default_factory=list)  # argument names the entry writes in place
    inputs_specs: list[str] = field(default_factory=list)  # zero-config specs, if used
    has_flops: bool = False
    has_bytes: bool = False

    def cases_for(self, device: str) -> list[Case]:
        return self.cases if device == "cuda" else self.test_cases

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = str(self.path)
        d["cases"] = [c.to_json() for c in self.cases]
        d["test_cases"] = [c.to_json() for c in self.test_cases]
        d["tolerance"] = asdict(self.tolerance) if self.tolerance else None
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Problem":
        tol = d.get("tolerance")
        return Problem(
            path=Path(d["path"]),
            entry=d["entry"],
            signature=[Parameter(**p) for p in d["signature"]],
            cases=[Case.from_json(c) for c in d["cases"]],
            test_cases=[Case.from_json(c) for c in d["test_cases"]],
            has_reference=bool(d["has_reference"]),
            tolerance=Tolerance(**tol) if tol else None,
            outputs=list(d.get("outputs") or []),
            inputs_specs=list(d.get("inputs_specs") or []),
            has_flops=bool(d.get("has_flops")),
            has_bytes=bool(d.get("has_bytes")),
        )
