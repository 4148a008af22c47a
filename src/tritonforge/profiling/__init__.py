"""Hardware profiling of Triton kernels: the Profiler interface and its Nsight Compute implementation.

    from tritonforge.profiling import NcuProfiler, ProfileTarget
    result = NcuProfiler().profile(ProfileTarget(problem="examples/vector_add.py", params={"n": 1 << 24}))
    result.kernels[0].dram_throughput_pct

Nothing here imports torch or triton; only the profiled child process does.
"""

from tritonforge.profiling.metrics import KernelMetrics, parse_raw_csv, read_report
from tritonforge.profiling.ncu import NcuProfiler
from tritonforge.profiling.profiler import Availability, ProfileResult, Profiler, ProfileTarget

__all__ = ["Availability", "KernelMetrics", "NcuProfiler", "ProfileResult", "ProfileTarget", "Profiler",
           "parse_raw_csv", "read_report"]
