"""Flatten a DiagnosisInput into named signals, the only vocabulary rules speak.

Each signal is computed once here, from whichever source has it (profiler counters first,
then compile facts, then the roofline), and is simply absent when nothing knows it:
a rule that needs an absent signal does not run.
"""

from __future__ import annotations

import math
from typing import Any

from tritonforge.diagnosis.model import DiagnosisInput
from tritonforge.profiling.metrics import KernelMetrics

Signals = dict[str, Any]

SECTOR_BYTES = 32
# Compiled-code markers of tensor-core instructions (PTX / SASS names).
TENSOR_INSTRUCTIONS = ("wgmma", "mma", "hmma", "hgmma", "imma")


def signals(inp: DiagnosisInput) -> Signals:
    s: Signals = {}
    if inp.metrics is not None:
        s.update(_from_metrics(inp.metrics))
    # Counters describe the launch that ran; compile facts fill what they left out.
    s.update({k: v for k, v in _from_compile(inp.compile or {}).items() if s.get(k) is None})
    _add_roofline(s, inp)
    _add_ceilings(s, inp)
    return {k: v for k, v in s.items() if v is not None}


def _from_metrics(m: KernelMetrics) -> Signals:
    s: Signals = {
        "kernel": m.kernel,
        "duration_ns": m.duration_ns,
        "grid_blocks": m.grid_blocks,
        "block_threads": m.block_threads,
        "sm_count": m.sm_count,
        "waves": m.waves_per_sm,
        "sm_pct": m.sm_throughput_pct,
        "mem_pct": m.memory_throughput_pct,
        "dram_pct": m.dram_throughput_pct,
        "l1_pct": m.l1_throughput_pct,
        "l2_pct": m.l2_throughput_pct,
        "dram_bytes": m.dram_bytes,
        "l1_hit_pct": m.l1_hit_rate_pct,
        "l2_hit_pct": m.l2_hit_rate_pct,
        "occupancy_pct": m.achieved_occupancy_pct,
        "theoretical_occupancy_pct": m.theoretical_occupancy_pct,
        "registers": m.registers_per_thread,
        "shared_bytes": m.shared_mem_per_block,
        "tensor_pct": m.tensor_pipe_pct,
        "fma_pct": m.fma_pipe_pct,
        "issue_pct": m.issue_active_pct,
        "instructions": m.instructions_executed,
        "fp32_flops": m.fp32_flops,
        "tensor_ops": m.tensor_ops,
        "local_sectors": m.local_memory_sectors,
        "spill_instructions": m.local_memory_instructions,
    }
    if m.sm_throughput_pct is not None and m.memory_throughput_pct is not None:
        s["busiest_pct"] = max(m.sm_throughput_pct, m.memory_throughput_pct)
    if m.occupancy_limits:
        s["blocks_per_sm"] = min(m.occupancy_limits.values())
        s["occupancy_limiter"] = _limiter(m)
    s.update(_coalescing(m))
    s.update(_stalls(m.warp_stalls))
    if m.local_memory_sectors is not None and m.global_memory_sectors is not None:
        total = m.local_memory_sectors + m.global_memory_sectors
        s["local_fraction"] = m.local_memory_sectors / total if total else 0.0
    if m.waves_per_sm is not None and m.waves_per_sm >= 1:
        s["last_wave_pct"] = 100.0 * last_wave_fill(m.waves_per_sm)
    if m.duration_ns and m.dram_bytes is not None:
        s["dram_gbps"] = m.dram_bytes / m.duration_ns  # bytes per ns = GB/s
    return s


def _limiter(m: KernelMetrics) -> str:
    # A grid smaller than one wave leaves warps unused whatever the resources allow.
    waves, achieved, theoretical = m.waves_per_sm, m.achieved_occupancy_pct, m.theoretical_occupancy_pct
    if waves is not None and waves < 1 and achieved is not None and theoretical is not None \
            and achieved < 0.8 * theoretical:
        return "grid size"
    return " and ".join(m.occupancy_limiters)


def _coalescing(m: KernelMetrics) -> Signals:
    """Share of fetched global sectors the program used, weighted by sector count.

    A bytes-per-sector ratio of 0 means no plain LDG/STG ran (cp.async or TMA moved
    the data), so it says nothing about coalescing and is left out.
    """
    parts = [(m.global_load_sectors, m.global_load_bytes_per_sector),
             (m.global_store_sectors, m.global_store_bytes_per_sector)]
    used = [(n, b) for n, b in parts if n and b]
    out: Signals = {"load_bytes_per_sector": m.global_load_bytes_per_sector,
                    "store_bytes_per_sector": m.global_store_bytes_per_sector}
    if used:
        sectors = sum(n for n, _ in used)
        out["access_efficiency_pct"] = 100.0 * sum(n * b / SECTOR_BYTES for n, b in used) / sectors
    return out


def _stalls(stalls: dict[str, float]) -> Signals:
    out: Signals = {f"stall_{k}": v for k, v in stalls.items()}
    total = sum(stalls.values())
    if total > 0:
        top = max(stalls, key=lambda k: stalls[k])
        out.update(top_stall=top, top_stall_share=stalls[top] / total)
    return out


def _from_compile(c: dict[str, Any]) -> Signals:
    def pick(*names: str) -> Any:
        return next((c[n] for n in names if c.get(n) is not None), None)

    s: Signals = {
        "registers": pick("registers", "n_regs"),
        "spills": pick("spills", "n_spills"),
        "shared_bytes": pick("shared", "shared_bytes"),
        "num_warps": pick("num_warps"),
        "num_stages": pick("num_stages"),
    }
    instructions = c.get("instructions")
    if isinstance(instructions, dict) and instructions:
        names = " ".join(k.lower() for k, v in instructions.items() if v)
        s["uses_tensor_instructions"] = any(t in names for t in TENSOR_INSTRUCTIONS)
    return s


def _add_roofline(s: Signals, inp: DiagnosisInput) -> None:
    r = inp.roofline
    if r is None:
        return
    work, floor_ns = r.work, r.floor_ms * 1e6
    measured_ns = inp.measured_ms * 1e6 if inp.measured_ms else None
    s.update(roofline_bytes=work.bytes, roofline_flops=work.flops, floor_ns=floor_ns, measured_ns=measured_ns)
    if work.bytes and s.get("dram_bytes") is not None:
        s["traffic_ratio"] = s["dram_bytes"] / work.bytes
    if work.bytes and work.flops:
        s["arithmetic_intensity"] = work.flops / work.bytes
    measured = measured_ns or s.get("duration_ns")
    if floor_ns and measured:
        s["floor_efficiency"] = min(1.0, floor_ns / measured)


def _add_ceilings(s: Signals, inp: DiagnosisInput) -> None:
    if s.get("sm_count") is None and inp.sm_count:
        s["sm_count"] = inp.sm_count
    c = inp.ceilings
    if c is not None and c.copy_bytes_per_s and "dram_gbps" in s:
        s["dram_peak_gbps"] = c.copy_bytes_per_s / 1e9


def last_wave_fill(waves: float) -> float:
    """How full the last wave is, 0..1 (1: the grid is a whole number of waves)."""
    frac = waves - math.floor(waves)
    return 1.0 if frac < 1e-9 else frac
