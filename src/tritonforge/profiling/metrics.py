"""What a hardware profiler measured for one kernel launch, in terms no vendor owns.

A profiler (Nsight Compute in `profiling.ncu`, another vendor's beside it) maps its own
counters onto these fields; diagnosis reads only them. Every field is optional because
a tool, a GPU or a shorter metric list may not measure it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

Value = float | str

OCCUPANCY_LIMITS = ("registers", "shared_mem", "blocks", "warps")
# Tie order for the limiter: the hardware caps first (see `occupancy_limiters`).
_LIMIT_ORDER = ("warps", "blocks", "registers", "shared_mem")


@dataclass
class KernelMetrics:
    """One kernel launch as measured. None: not collected.

    "SM" is the GPU's compute unit, "warp" its group of threads issued together and
    "sector" its 32-byte unit of memory transfer, whatever the vendor calls them.
    """

    kernel: str
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    duration_ns: float | None = None
    # Speed of light: share of the busiest unit's peak on each side.
    sm_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    dram_throughput_pct: float | None = None
    l1_throughput_pct: float | None = None
    l2_throughput_pct: float | None = None
    dram_read_bytes: float | None = None
    dram_write_bytes: float | None = None
    l1_hit_rate_pct: float | None = None
    l2_hit_rate_pct: float | None = None
    # Occupancy: warps active as a share of the SM's maximum.
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None
    occupancy_limits: dict[str, float] = field(default_factory=dict)  # blocks per SM each resource allows
    waves_per_sm: float | None = None
    sm_count: int | None = None
    registers_per_thread: float | None = None
    shared_mem_per_block: float | None = None  # bytes the kernel asked for (static + dynamic)
    # Local memory is where spilled registers go.
    local_memory_sectors: float | None = None
    local_memory_instructions: float | None = None
    global_load_sectors: float | None = None
    global_store_sectors: float | None = None
    global_load_bytes_per_sector: float | None = None  # of 32
    global_store_bytes_per_sector: float | None = None
    warp_stalls: dict[str, float] = field(default_factory=dict)  # cycles per issued instruction, by reason
    tensor_pipe_pct: float | None = None  # matrix (tensor-core) unit activity
    fma_pipe_pct: float | None = None
    issue_active_pct: float | None = None
    instructions_executed: float | None = None  # warp-level
    fp32_flops: float | None = None
    # Half-precision instructions count two lanes; register moves done with them count too.
    fp16_flops: float | None = None
    fp64_flops: float | None = None
    tensor_ops: float | None = None  # matrix-unit operations, where the tool counts them
    # The tool's own numbers by its own metric names, for reading a report by hand.
    raw: dict[str, Value] = field(default_factory=dict, repr=False)

    @property
    def grid_blocks(self) -> int | None:
        return _product(self.grid)

    @property
    def block_threads(self) -> int | None:
        return _product(self.block)

    @property
    def dram_bytes(self) -> float | None:
        if self.dram_read_bytes is None and self.dram_write_bytes is None:
            return None
        return (self.dram_read_bytes or 0.0) + (self.dram_write_bytes or 0.0)

    @property
    def global_memory_sectors(self) -> float | None:
        if self.global_load_sectors is None and self.global_store_sectors is None:
            return None
        return (self.global_load_sectors or 0.0) + (self.global_store_sectors or 0.0)

    @property
    def occupancy_limiters(self) -> list[str]:
        """The resources that allow the fewest blocks per SM (several when tied).

        The hardware caps (warps, blocks) come first: when one of them ties a resource,
        the SM is as full as its block size lets it be.
        """
        if not self.occupancy_limits:
            return []
        low = min(self.occupancy_limits.values())
        return [k for k in _LIMIT_ORDER if self.occupancy_limits.get(k) == low]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("raw")
        return d


def _product(dims: tuple[int, int, int] | None) -> int | None:
    if dims is None:
        return None
    n = 1
    for d in dims:
        n *= d
    return n
