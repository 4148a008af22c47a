"""Profilers are chosen by name; diagnosis-facing code never names a vendor's class."""

from __future__ import annotations

import pytest

from tritonforge.profiling import Profiler, available_profilers, get_profiler
from tritonforge.profiling.ncu import NcuProfiler


def test_ncu_is_registered_and_built_by_name():
    assert "ncu" in available_profilers()
    profiler = get_profiler("ncu", timeout_s=5)
    assert isinstance(profiler, NcuProfiler) and isinstance(profiler, Profiler)
    assert profiler.timeout_s == 5


def test_every_registered_name_builds_a_profiler_of_that_name():
    for name in available_profilers():
        assert get_profiler(name).name == name


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="ncu"):
        get_profiler("no-such-tool")
