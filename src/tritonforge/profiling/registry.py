"""Profilers by name: `get_profiler("ncu")` builds one, `available_profilers()` lists the names.

Adding a vendor is its module plus one line in `_PROFILERS`. Each is imported only when
asked for, so a name whose module needs a missing tool costs nothing until used.
"""

from __future__ import annotations

import importlib
from typing import Any

from tritonforge.profiling.profiler import Profiler

# name -> "module:class" of a Profiler implementation
_PROFILERS: dict[str, str] = {
    "ncu": "tritonforge.profiling.ncu.profiler:NcuProfiler",
}


def available_profilers() -> list[str]:
    """The names `get_profiler` knows, whether or not their tool is installed here."""
    return list(_PROFILERS)


def get_profiler(name: str, **options: Any) -> Profiler:
    """A new profiler of that name, built with `options`; `available()` says if it can run here."""
    try:
        module_name, class_name = _PROFILERS[name].split(":")
    except KeyError:
        raise ValueError(f"no profiler named {name!r} (known: {', '.join(_PROFILERS)})") from None
    return getattr(importlib.import_module(module_name), class_name)(**options)
