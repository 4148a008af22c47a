"""The physical floor of one entry call: bytes that must move and FLOPs that must be done,
against the GPU's measured ceilings.

Bytes: each input tensor read once and each output written once (the return values and
the arguments the problem declares in OUTPUTS), or the problem's own BYTES(**shape).
FLOPs: counted by running sampled programs in Triton's interpreter
(`tritonforge.analysis.opcount`), or the problem's own FLOPS(**shape). tl.dot FLOPs are
charged at the matmul rate of their operand type, all other FLOPs at the CUDA-core fp32
rate. The floor is the larger of the memory time and the compute time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonforge.analysis.ceilings import Ceilings


@dataclass
class Work:
    bytes: float
    flops: float
    dot_flops: dict[str, float] = field(default_factory=dict)  # by operand type, e.g. {"fp16": 2*M*N*K}
    bytes_source: str = "tensors"  # "tensors" or "declared BYTES"
    flops_source: str = "counted"  # "counted", "declared FLOPS" or "not counted"

    @property
    def other_flops(self) -> float:
        return max(0.0, self.flops - sum(self.dot_flops.values()))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Roofline:
    """The floor of one entry call: the time its `work` needs at the GPU's ceilings.

    The one roofline type: the profile report shows it, the search stops near its floor
    and the diagnosis compares measured times and counters with it.
    """

    work: Work
    memory_ms: float
    compute_ms: float
    ceilings_source: str

    @property
    def floor_ms(self) -> float:
        return max(self.memory_ms, self.compute_ms)

    @property
    def bound(self) -> str:
        return "compute" if self.compute_ms > self.memory_ms else "memory"

    @property
    def intensity(self) -> float:
        """FLOPs per byte that must move."""
        return self.work.flops / self.work.bytes if self.work.bytes else float("inf")

    def achieved(self, measured_ms: float) -> "Achieved":
        s = measured_ms * 1e-3
        return Achieved(measured_ms=measured_ms, gbytes_per_s=self.work.bytes / s / 1e9,
                        tflops_per_s=self.work.flops / s / 1e12, pct_of_floor=100 * self.floor_ms / measured_ms)

    def to_json(self) -> dict[str, Any]:
        return {"work": self.work.to_json(), "memory_ms": self.memory_ms, "compute_ms": self.compute_ms,
                "floor_ms": self.floor_ms, "bound": self.bound, "intensity": self.intensity,
                "ceilings": self.ceilings_source}


@dataclass
class Achieved:
    measured_ms: float
    gbytes_per_s: float
    tflops_per_s: float
    pct_of_floor: float  # 100 means the kernel runs at the floor

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def roofline(work: Work, ceilings: Ceilings) -> Roofline:
    memory_s = work.bytes / ceilings.copy_bytes_per_s
    compute_s = sum(f / ceilings.rate_for(kind) for kind, f in work.dot_flops.items())
    compute_s += work.other_flops / ceilings.cuda_core_flops_per_s
    return Roofline(work=work, memory_ms=memory_s * 1e3, compute_ms=compute_s * 1e3,
                    ceilings_source=ceilings.source)


def tensor_bytes(args: tuple, outputs: list[Any], written_args: list[Any]) -> int:
    """Bytes that must move: every input tensor once, every output tensor once."""
    import torch

    def nbytes(t: Any) -> int:
        return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0

    return sum(nbytes(a) for a in args) + sum(nbytes(o) for o in outputs) + sum(nbytes(w) for w in written_args)
