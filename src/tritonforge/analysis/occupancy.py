"""Theoretical occupancy and waves, as the CUDA occupancy rules compute them.

Checked against Nsight Compute on the H200 (see tests/analysis/test_occupancy.py). One
difference by design: ncu's launch__occupancy_limit_shared_mem uses the shared-memory
carveout the driver picked for that launch (32 KB for kernels using little), while
`occupancy` assumes the largest carveout. That changes only the shared-memory block limit
of kernels that use little shared memory, never which limit binds or the occupancy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    name: str
    arch: int  # compute capability, e.g. 90
    sm_count: int
    registers_per_sm: int = 65536
    max_registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256  # registers per warp are allocated in these steps
    register_file_partitions: int = 4  # a warp's registers live in one SM sub-partition
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    max_threads_per_block: int = 1024
    warp_size: int = 32
    shared_per_sm: int = 233472  # largest carveout, bytes
    max_shared_per_block: int = 232448  # what a kernel may ask for (opt-in)
    reserved_shared_per_block: int = 1024  # the driver's own share of every block
    shared_alloc_unit: int = 128


# H100 SXM and H200 share the sm_90 SM: 228 KB shared per SM, 227 KB per block, 132 SMs.
H100 = GpuSpec(name="H100/H200 (sm_90)", arch=90, sm_count=132)
# A100 (sm_80): 164 KB shared per SM, 163 KB per block, 108 SMs (CUDA guide, CC 8.0 table).
A100 = GpuSpec(name="A100 (sm_80)", arch=80, sm_count=108, shared_per_sm=167936, max_shared_per_block=166912)

_SPECS = {90: H100, 80: A100}


def spec_for_arch(arch: int) -> GpuSpec | None:
    """The built-in spec for a compute capability, or None when there is none."""
    return _SPECS.get(arch)


LIMITERS = ("registers", "shared_memory", "warps", "blocks")


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    active_warps_per_sm: int
    occupancy_pct: float  # theoretical: active warps / max warps per SM
    limiter: str  # the first of LIMITERS that binds
    limiters: tuple[str, ...]  # every limit that binds (ties are common)
    block_limits: dict[str, int]  # blocks per SM each resource alone would allow
    registers_per_thread_allocated: int
    shared_per_block_allocated: int  # including the driver's reserved share

    @property
    def fits(self) -> bool:
        return self.blocks_per_sm > 0


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _register_limit(registers: int, num_warps: int, spec: GpuSpec) -> tuple[int, int]:
    """(blocks per SM, registers per thread as allocated)."""
    if registers <= 0:
        return spec.max_blocks_per_sm, 0
    per_warp = _round_up(registers * spec.warp_size, spec.register_alloc_unit)
    allocated = per_warp // spec.warp_size
    if registers > spec.max_registers_per_thread or per_warp * num_warps > spec.max_registers_per_block:
        return 0, allocated
    warps_per_partition = (spec.registers_per_sm // spec.register_file_partitions) // per_warp
    return warps_per_partition * spec.register_file_partitions // num_warps, allocated


def _shared_limit(shared_bytes: int, spec: GpuSpec) -> tuple[int, int]:
    """(blocks per SM, bytes per block as allocated)."""
    per_block = _round_up(shared_bytes + spec.reserved_shared_per_block, spec.shared_alloc_unit)
    if shared_bytes > spec.max_shared_per_block:
        return 0, per_block
    return spec.shared_per_sm // per_block, per_block


def occupancy(registers: int, shared_bytes: int, num_warps: int, spec: GpuSpec = H100) -> Occupancy:
    """Theoretical occupancy of a kernel using `registers` per thread and `shared_bytes`
    of dynamic shared memory per block, launched with `num_warps` warps per block."""
    if num_warps <= 0:
        raise ValueError(f"num_warps must be positive, not {num_warps}")
    by_regs, regs_alloc = _register_limit(registers, num_warps, spec)
    by_shared, shared_alloc = _shared_limit(shared_bytes, spec)
    too_big = num_warps * spec.warp_size > spec.max_threads_per_block
    limits = {
        "registers": by_regs,
        "shared_memory": by_shared,
        "warps": 0 if too_big else spec.max_warps_per_sm // num_warps,
        "blocks": spec.max_blocks_per_sm,
    }
    blocks = min(limits.values())
    binding = tuple(k for k in LIMITERS if limits[k] == blocks)
    warps = blocks * num_warps
    return Occupancy(
        blocks_per_sm=blocks, active_warps_per_sm=warps, occupancy_pct=100.0 * warps / spec.max_warps_per_sm,
        limiter=binding[0], limiters=binding, block_limits=limits,
        registers_per_thread_allocated=regs_alloc, shared_per_block_allocated=shared_alloc,
    )


def waves(grid_size: int, blocks_per_sm: int, spec: GpuSpec = H100) -> float:
    """How many times the grid fills every SM (ncu's launch__waves_per_multiprocessor).

    A fractional part means the last wave leaves SMs idle: 1.1 waves run about as long as 2.
    """
    if blocks_per_sm <= 0:
        return math.inf
    return grid_size / (blocks_per_sm * spec.sm_count)
