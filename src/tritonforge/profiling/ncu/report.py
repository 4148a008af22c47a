"""KernelMetrics from a binary .ncu-rep, through NVIDIA's `ncu_report` module where it can be found."""

from __future__ import annotations

import glob
import shutil
import sys
from pathlib import Path
from typing import Any

from tritonforge.profiling.metrics import KernelMetrics, Value
from tritonforge.profiling.ncu.parse import from_raw


def read_report(path: str) -> list[KernelMetrics]:
    """One KernelMetrics per profiled launch in the report.

    Raises ImportError where the module cannot be found next to an installed ncu.
    """
    ncu_report = _import_ncu_report()
    context = ncu_report.load_report(str(path))
    found = []
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            raw = {n: v for n in action.metric_names() if (v := _metric_value(action[n])) is not None}
            found.append(from_raw(str(action.name()), raw))
    return found


def _metric_value(metric: Any) -> Value | None:
    try:
        if not metric.has_value():
            return None
        if metric.kind() == metric.ValueKind_STRING:
            return metric.as_string()
        return float(metric.as_double())
    except Exception:  # instanced or otherwise odd metrics: the CSV path covers them
        return None


def _import_ncu_report() -> Any:
    try:
        import ncu_report  # type: ignore[import-not-found]

        return ncu_report
    except ImportError:
        pass
    for extras in _ncu_report_dirs():
        added = extras not in sys.path
        if added:
            sys.path.append(extras)
        try:
            import ncu_report  # type: ignore[import-not-found]

            return ncu_report
        except ImportError:
            if added:
                sys.path.remove(extras)
    raise ImportError("ncu_report not found (it ships in Nsight Compute's extras/python)")


def _ncu_report_dirs() -> list[str]:
    """Nsight Compute's extras/python folders: beside the ncu on PATH first, then the usual places."""
    dirs = []
    ncu = shutil.which("ncu")
    if ncu:
        dirs.append(str(Path(ncu).resolve().parent / "extras" / "python"))
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python"):
        dirs += sorted(glob.glob(pattern), reverse=True)
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]
