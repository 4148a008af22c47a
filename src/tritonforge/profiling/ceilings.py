"""What the GPU can do at best: copy bandwidth and dense matmul rates, measured once per
GPU model and cached on disk. Datasheet values only as a labelled fallback."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
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


def cache_dir() -> Path:
    return Path(os.environ.get("TRITONFORGE_CACHE", Path.home() / ".cache" / "tritonforge"))


def cached_or_measured(gpu: str, measure: Any) -> Ceilings:
    """The cached ceilings of this GPU model, measuring (by calling `measure()`) the first time."""
    path = cache_dir() / "ceilings" / (gpu.replace(" ", "_").replace("/", "_") + ".json")
    if path.exists():
        try:
            return Ceilings.from_json(json.loads(path.read_text()))
        except (ValueError, TypeError, KeyError):
            pass  # a damaged cache entry is measured again
    ceilings = measure()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ceilings.to_json(), indent=2))
    return ceilings


def measure_on_gpu(copy_bytes: int = 1 << 31, n: int = 8192, reps: int = 10) -> Ceilings:
    """Measure in this process (a worker): a large copy and square matmuls on random data."""
    import torch

    props = torch.cuda.get_device_properties(0)
    src = torch.randn(copy_bytes // 4, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = _median_ms(lambda: dst.copy_(src), reps=20)
    rates, details = {}, {"copy_ms": copy_ms, "copy_bytes_moved": 2 * src.numel() * 4}
    del src, dst
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        for kind, dtype, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                                  ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ms = _median_ms(lambda: torch.matmul(a, b), reps=reps if kind in ("fp16", "bf16") else 4)
            rates[kind] = 2 * n**3 / (ms * 1e-3)
            details[f"{kind}_ms"] = ms
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    sheet = DATASHEET.get(props.name, DATASHEET[DEFAULT_TARGET])
    return Ceilings(gpu=props.name, copy_bytes_per_s=2 * copy_bytes / (copy_ms * 1e-3), matmul_flops_per_s=rates,
                    cuda_core_flops_per_s=sheet["cuda_core_fp32"], source=f"measured on {props.name}",
                    measured_at=time.strftime("%Y-%m-%d %H:%M:%S"),
                    details={**details, "matmul_n": n, "cuda_core_fp32": "datasheet"})


def _median_ms(fn: Any, reps: int) -> float:
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]
