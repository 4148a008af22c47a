"""Hardware profiling of Triton kernels: the Profiler interface, its registry and the neutral record.

    from tritonforge.profiling import ProfileTarget, get_profiler
    result = get_profiler("ncu").profile(ProfileTarget(problem="examples/vector_add.py", params={"n": 1 << 24}))
    result.kernels[0].dram_throughput_pct

Each vendor's tool lives in its own subpackage (`ncu`: Nsight Compute). Nothing here
imports torch or triton; only the profiled child process does.
"""

from tritonforge.profiling.metrics import KernelMetrics
from tritonforge.profiling.profiler import Availability, ProfileResult, Profiler, ProfileTarget
from tritonforge.profiling.registry import available_profilers, get_profiler

__all__ = ["Availability", "KernelMetrics", "ProfileResult", "ProfileTarget", "Profiler",
           "available_profilers", "get_profiler"]
