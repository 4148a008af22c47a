"""Nsight Compute's names for what KernelMetrics holds, and the extra metrics to ask for.

Taken from real H200 captures (ncu 2025.3.1, `--set full`); a smaller section list, an
older GPU or another ncu version may leave any of them out.
"""

from __future__ import annotations

import re

DURATION = "gpu__time_duration.sum"
SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
L1_THROUGHPUT = "l1tex__throughput.avg.pct_of_peak_sustained_active"
L2_THROUGHPUT = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L1_HIT = "l1tex__t_sector_hit_rate.pct"
L2_HIT = "lts__t_sector_hit_rate.pct"
ACHIEVED_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"
WAVES = "launch__waves_per_multiprocessor"
REGISTERS = "launch__registers_per_thread"
SM_COUNT = "launch__sm_count"
GRID_SIZE = "launch__grid_size"
BLOCK_SIZE = "launch__block_size"
TENSOR_PIPE = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
TENSOR_PIPE_HMMA = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"  # older GPUs
FMA_PIPE = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
ISSUE_ACTIVE = "smsp__issue_active.avg.pct_of_peak_sustained_active"
INSTRUCTIONS = "smsp__inst_executed.sum"
SMSP_CYCLES = "smsp__cycles_elapsed.avg"
LOCAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
LOCAL_INSTRUCTIONS = ("smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum")
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
# Useful bytes per 32-byte sector that global loads/stores fetched: 32 means fully used.
LD_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
ST_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"
STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
TENSOR_OPS_RE = re.compile(r"^sm__ops_path_tensor_src_[a-z0-9_]+\.sum$")
# Floating-point operations per executed thread instruction (an FMA is two; ncu's
# roofline counts a half-precision instruction as two lanes).
FLOP_WEIGHTS = {
    "fp32": {"fadd": 1, "fmul": 1, "ffma": 2},
    "fp16": {"hadd": 2, "hmul": 2, "hfma": 4},
    "fp64": {"dadd": 1, "dmul": 1, "dfma": 2},
}


def flop_count(op: str) -> str:
    """The metric counting executed thread instructions of one floating-point op."""
    return f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"


# Metrics asked for by name besides the sections: the fields above that live in no
# section of the focused list (see `profiler.DEFAULT_SECTIONS`). Kept to names that
# exist on Volta and later, so that asking for them cannot fail the run.
EXTRA_METRICS: tuple[str, ...] = (
    DRAM_READ, DRAM_WRITE, L1_HIT, L2_HIT, TENSOR_PIPE, FMA_PIPE, ISSUE_ACTIVE,
    *LOCAL_SECTORS, *LOCAL_INSTRUCTIONS, GLOBAL_LD_SECTORS, GLOBAL_ST_SECTORS,
    LD_BYTES_PER_SECTOR, ST_BYTES_PER_SECTOR, SMSP_CYCLES,
    *(flop_count(op) for ops in FLOP_WEIGHTS.values() for op in ops),
)
