"""occupancy / waves against Nsight Compute on the H200.

NCU rows: copied from /work/shared/ncu-captures/<name>.raw.csv (ncu 2025.3.1, H200, one launch
each of the kernels in kernels.py there): launch__registers_per_thread,
launch__shared_mem_per_block_dynamic, launch__block_size / 32, launch__grid_size,
launch__occupancy_limit_{registers,warps,blocks}, sm__maximum_warps_per_active_cycle_pct,
launch__waves_per_multiprocessor, launch__registers_per_thread_allocated and
launch__shared_mem_per_block_allocated.
"""

from __future__ import annotations

import math

import pytest

from tritonforge.analysis.occupancy import A100, H100, GpuSpec, occupancy, spec_for_arch, waves

NCU = {
    # name: (regs, dyn shared, warps, grid, limit regs, limit warps, limit blocks, occupancy %, waves,
    #        regs allocated, shared allocated)
    "matmul_tc": (110, 98304, 8, 1024, 2, 8, 32, 25.0, 3.88, 112, 99328),
    "matmul_smem": (184, 196608, 8, 512, 1, 8, 32, 12.5, 3.88, 184, 197632),
    "occupancy_regs": (255, 0, 1, 8192, 8, 64, 32, 12.5, 7.76, 256, 1024),
    "spills": (64, 0, 1, 1024, 32, 64, 32, 50.0, 0.24, 64, 1024),
    "mem_peak": (26, 0, 4, 65536, 16, 16, 32, 100.0, 31.03, 32, 1024),
    "mem_strided": (30, 16, 4, 8192, 16, 16, 32, 100.0, 3.88, 32, 1152),
}
# launch__occupancy_limit_shared_mem, where the driver picked the largest carveout (see occupancy.py).
NCU_SHARED_LIMIT = {"matmul_tc": 2, "matmul_smem": 1}


@pytest.mark.parametrize("name", NCU)
def test_matches_nsight_compute(name):
    regs, shared, warps, grid, by_regs, by_warps, by_blocks, pct, n_waves, regs_alloc, shared_alloc = NCU[name]
    occ = occupancy(regs, shared, warps, H100)
    assert occ.block_limits["registers"] == by_regs
    assert occ.block_limits["warps"] == by_warps
    assert occ.block_limits["blocks"] == by_blocks
    if name in NCU_SHARED_LIMIT:
        assert occ.block_limits["shared_memory"] == NCU_SHARED_LIMIT[name]
    assert occ.occupancy_pct == pytest.approx(pct)
    assert occ.active_warps_per_sm == round(pct / 100 * 64)
    assert occ.registers_per_thread_allocated == regs_alloc
    assert occ.shared_per_block_allocated == shared_alloc
    assert round(waves(grid, occ.blocks_per_sm, H100), 2) == n_waves


def test_limiters():
    assert occupancy(255, 0, 1).limiters == ("registers",)
    assert occupancy(110, 98304, 8).limiters == ("registers", "shared_memory")
    assert occupancy(32, 180_000, 4).limiter == "shared_memory"
    assert occupancy(16, 0, 1).limiter == "blocks"  # 32 one-warp blocks: half the warp slots
    assert occupancy(16, 0, 16).limiter == "warps"


def test_nothing_fits():
    assert not occupancy(32, 240_000, 4).fits  # more than 227 KB per block
    assert occupancy(32, 232448, 4).blocks_per_sm == 1  # exactly the opt-in maximum
    assert not occupancy(128, 0, 32).fits  # 128 x 1024 threads > 65536 registers per block
    assert not occupancy(32, 0, 64).fits  # 2048 threads per block
    assert waves(100, 0) == math.inf


def test_other_specs():
    assert spec_for_arch(90) is H100 and spec_for_arch(80) is A100 and spec_for_arch(75) is None
    tiny = GpuSpec(name="made up", arch=1, sm_count=10, max_warps_per_sm=32, shared_per_sm=65536,
                   max_shared_per_block=49152)
    occ = occupancy(32, 40000, 4, tiny)
    assert (occ.blocks_per_sm, occ.limiter) == (1, "shared_memory")
    assert occ.occupancy_pct == pytest.approx(12.5)
    assert waves(25, 1, tiny) == 2.5
