"""Measuring the GPU's ceilings (copy bandwidth, dense matmul rates) once per GPU model, and
caching them on disk. The record itself is `analysis.ceilings.Ceilings`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tritonforge.analysis.ceilings import DATASHEET, DEFAULT_TARGET, Ceilings


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
