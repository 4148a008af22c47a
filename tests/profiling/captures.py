"""The seven real H200 captures in tests/fixtures/ncu, for parser and rule tests."""

from __future__ import annotations

import csv
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
CAPTURES = ("mem_peak", "mem_strided", "occupancy_regs", "spills", "tiny_grid", "matmul_tc", "matmul_smem")
# Taken through NcuProfiler itself (focused sections plus EXTRA_METRICS), not `--set full`.
FOCUSED = ("vector_add_block64", "vector_add_block1024")


def csv_text(name: str) -> str:
    return (FIXTURES / f"{name}.raw.csv").read_text()


def csv_values(name: str) -> dict[str, str]:
    """The capture's value row keyed by metric name, as text, read with nothing but csv."""
    header, _units, values = list(csv.reader(csv_text(name).splitlines()))
    return dict(zip(header, values))

