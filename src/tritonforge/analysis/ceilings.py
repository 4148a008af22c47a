"""What the GPU can do at best: copy bandwidth and dense matmul rates, as one record.

Measuring and caching them is profiling's (`profiling.ceilings`); the roofline, the
diagnosis and the reports only read the record. Datasheet values are a labelled fallback.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Vendor datasheet figures (dense, no sparsity), bytes/s and FLOP/s. Leads, not measurements.
DATASHEET: dict[str, dict[str, Any]] = {
    "NVIDIA H200": {"copy": 4.8e12, "fp16": 989e12, "bf16": 989e12, "tf32": 494e12, "fp32": 67e12,
                    "fp8": 1979e12, "cuda_core_fp32": 67e12},
    "NVIDIA H100 80GB HBM3": {"copy": 3.35e12, "fp16": 989e12, "bf16": 989e12, "tf32": 494e12, "fp32": 67e12,
                              "fp8": 1979e12, "cuda_core_fp32": 67e12},
}
DEFAULT_TARGET = "NVIDIA H200"


@dataclass
class Ceilings:
    gpu: str
    copy_bytes_per_s: float  # device-to-device copy, bytes read plus written
    matmul_flops_per_s: dict[str, float]  # by operand type: fp16, bf16, tf32, fp32
    cuda_core_flops_per_s: float  # plain fp32 FMA rate (datasheet: torch has no clean probe)
    source: str  # "measured on <gpu>" or "datasheet (...)"
    measured_at: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def rate_for(self, dot_kind: str) -> float:
        """Matmul rate for an opcount dot key such as "fp16", "bf16", "fp32/tf32", "fp32/ieee"."""
        k = dot_kind.lower()
        if k.startswith("fp8"):
            return self.matmul_flops_per_s.get("fp8", 2 * self.matmul_flops_per_s["fp16"])
        if k.startswith("bf16"):
            return self.matmul_flops_per_s["bf16"]
        if k.startswith("fp16") or k.startswith("f16"):
            return self.matmul_flops_per_s["fp16"]
        if "tf32" in k and "ieee" not in k:
            return self.matmul_flops_per_s["tf32"]
        if k.startswith("fp32") or k.startswith("f32") or "ieee" in k:
            return self.matmul_flops_per_s["fp32"]
        if k.startswith("int8") or k.startswith("i8"):
            return self.matmul_flops_per_s.get("int8", 2 * self.matmul_flops_per_s["fp16"])
        return self.matmul_flops_per_s["fp16"]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Ceilings":
        return Ceilings(**d)


def datasheet(gpu: str | None = None) -> Ceilings:
    name = gpu if gpu in DATASHEET else DEFAULT_TARGET
    d = DATASHEET[name]
    why = "no GPU here" if gpu is None else f"{gpu} not measured"
    return Ceilings(gpu=name, copy_bytes_per_s=d["copy"],
                    matmul_flops_per_s={k: d[k] for k in ("fp16", "bf16", "tf32", "fp32", "fp8")},
                    cuda_core_flops_per_s=d["cuda_core_fp32"], source=f"datasheet ({why})")
