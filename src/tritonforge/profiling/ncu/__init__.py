"""Nsight Compute (NVIDIA) behind the Profiler interface.

`profiler.NcuProfiler` runs one call under `ncu` (the profiled process is `target`),
`parse` turns its raw export into KernelMetrics using the metric names in `names`,
and `report` reads a binary .ncu-rep the same way.
"""

from tritonforge.profiling.ncu.parse import parse_raw_csv
from tritonforge.profiling.ncu.profiler import NcuProfiler
from tritonforge.profiling.ncu.report import read_report

__all__ = ["NcuProfiler", "parse_raw_csv", "read_report"]
