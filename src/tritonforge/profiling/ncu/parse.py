"""Nsight Compute's numbers as KernelMetrics: `from_raw` names them, `parse_raw_csv` reads the export.

The export is `ncu -i X.ncu-rep --csv --page raw --print-units base`: a header row of
metric names, a units row, then one row per profiled launch, numbers written with
thousands separators ("3,199,081,035.92"). `report.read_report` ends in `from_raw`
too, so the fields mean the same whichever way the numbers arrived.
"""

from __future__ import annotations

import csv
import io
import re

from tritonforge.profiling.metrics import OCCUPANCY_LIMITS, KernelMetrics, Value
from tritonforge.profiling.ncu import names

# The identity columns ncu writes before the metrics in a raw CSV.
_IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
             "Block Size", "Grid Size", "Device", "CC")
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")
# Scale to the base units the fields use (bytes, nanoseconds), for exports made
# without --print-units base.
_UNIT_SCALE = {
    "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
    "usecond": 1e3, "msecond": 1e6,
}


# --- naming ---------------------------------------------------------------------------
def from_raw(kernel: str, raw: dict[str, Value], grid: tuple[int, int, int] | None = None,
             block: tuple[int, int, int] | None = None) -> KernelMetrics:
    """Name the values of one launch; `raw` maps metric names to numbers (base units)."""
    num = _Lookup(raw)
    return KernelMetrics(
        kernel=kernel,
        grid=grid or _dims(num, "launch__grid_dim"),
        block=block or _dims(num, "launch__block_dim"),
        duration_ns=num(names.DURATION),
        sm_throughput_pct=num(names.SM_THROUGHPUT),
        memory_throughput_pct=num(names.MEMORY_THROUGHPUT),
        dram_throughput_pct=num(names.DRAM_THROUGHPUT) if num(names.DRAM_THROUGHPUT) is not None else _dram_pct(num),
        l1_throughput_pct=num(names.L1_THROUGHPUT),
        l2_throughput_pct=num(names.L2_THROUGHPUT),
        dram_read_bytes=num(names.DRAM_READ),
        dram_write_bytes=num(names.DRAM_WRITE),
        l1_hit_rate_pct=num(names.L1_HIT),
        l2_hit_rate_pct=num(names.L2_HIT),
        achieved_occupancy_pct=num(names.ACHIEVED_OCCUPANCY),
        theoretical_occupancy_pct=num(names.THEORETICAL_OCCUPANCY),
        occupancy_limits={k: v for k in OCCUPANCY_LIMITS
                          if (v := num(f"launch__occupancy_limit_{k}")) is not None},
        waves_per_sm=num(names.WAVES),
        sm_count=_int(num(names.SM_COUNT) or num("device__attribute_multiprocessor_count")),
        registers_per_thread=num(names.REGISTERS),
        shared_mem_per_block=_shared(num),
        local_memory_sectors=num.total(names.LOCAL_SECTORS),
        local_memory_instructions=num.total(names.LOCAL_INSTRUCTIONS),
        global_load_sectors=num(names.GLOBAL_LD_SECTORS),
        global_store_sectors=num(names.GLOBAL_ST_SECTORS),
        global_load_bytes_per_sector=num(names.LD_BYTES_PER_SECTOR),
        global_store_bytes_per_sector=num(names.ST_BYTES_PER_SECTOR),
        warp_stalls=_stalls(raw),
        tensor_pipe_pct=num.first(names.TENSOR_PIPE, names.TENSOR_PIPE_HMMA),
        fma_pipe_pct=num(names.FMA_PIPE),
        issue_active_pct=num(names.ISSUE_ACTIVE),
        instructions_executed=num(names.INSTRUCTIONS),
        fp32_flops=_flops(num, "fp32"),
        fp16_flops=_flops(num, "fp16"),
        fp64_flops=_flops(num, "fp64"),
        tensor_ops=_tensor_ops(raw),
        raw=dict(raw),
    )


class _Lookup:
    """Numeric access to a raw dict: strings and missing names read as None."""

    def __init__(self, raw: dict[str, Value]) -> None:
        self.raw = raw

    def __call__(self, name: str) -> float | None:
        v = self.raw.get(name)
        return float(v) if isinstance(v, (int, float)) else None

    def first(self, *metric_names: str) -> float | None:
        return next((v for name in metric_names if (v := self(name)) is not None), None)

    def total(self, metric_names: tuple[str, ...]) -> float | None:
        values = [self(name) for name in metric_names]
        return None if all(v is None for v in values) else sum(v or 0.0 for v in values)


def _dims(num: _Lookup, prefix: str) -> tuple[int, int, int] | None:
    dims = [num(f"{prefix}_{axis}") for axis in "xyz"]
    return None if any(d is None for d in dims) else tuple(int(d) for d in dims)  # type: ignore[return-value]


def _dram_pct(num: _Lookup) -> float | None:
    # Same quantity from its parts, for exports that lack the gpu__ breakdown metric.
    rate, peak, clock = (num("dram__bytes.sum.per_second"), num("dram__bytes.sum.peak_sustained"),
                         num("dram__cycles_elapsed.avg.per_second"))
    if rate is None or not peak or not clock:
        return None
    return 100.0 * rate / (peak * clock)


def _shared(num: _Lookup) -> float | None:
    parts = [num("launch__shared_mem_per_block_static"), num("launch__shared_mem_per_block_dynamic")]
    if all(p is not None for p in parts):
        return sum(parts)  # type: ignore[arg-type]
    return num("launch__shared_mem_per_block")  # includes the driver's reserved 1 KB


def _stalls(raw: dict[str, Value]) -> dict[str, float]:
    stalls = {}
    for name, value in raw.items():
        m = names.STALL_RE.match(name)
        # "selected" is the issuing cycle itself, not a stall.
        if m and m.group(1) != "selected" and isinstance(value, (int, float)):
            stalls[m.group(1)] = float(value)
    return stalls


def _flops(num: _Lookup, kind: str) -> float | None:
    total, seen = 0.0, False
    for op, weight in names.FLOP_WEIGHTS[kind].items():
        base = names.flop_count(op)
        count = num(base)
        if count is None:  # the full set records only a rate: undo it with the cycle count
            rate, cycles = num(base + ".per_cycle_elapsed"), num(names.SMSP_CYCLES)
            count = rate * cycles if rate is not None and cycles is not None else None
        if count is not None:
            total, seen = total + weight * count, True
    return total if seen else None


def _tensor_ops(raw: dict[str, Value]) -> float | None:
    values = [float(v) for k, v in raw.items() if names.TENSOR_OPS_RE.match(k) and isinstance(v, (int, float))]
    return sum(values) if values else None


def _int(v: float | None) -> int | None:
    return None if v is None else int(v)


# --- the raw CSV ----------------------------------------------------------------------
def parse_value(text: str, unit: str = "") -> Value | None:
    """A CSV cell as a number in base units where it is one; None where ncu has no value."""
    s = text.strip()
    if s == "" or s.lower() in ("n/a", "no data", "nan"):
        return None
    if _NUMBER.match(s) and any(c.isdigit() for c in s):
        return float(s.replace(",", "")) * _UNIT_SCALE.get(unit.strip(), 1.0)
    return s


def parse_raw_csv(text: str) -> list[KernelMetrics]:
    """One KernelMetrics per launch row of an `ncu --csv --page raw` export."""
    rows = list(csv.reader(io.StringIO(_from_header(text))))
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    units = [""] * len(header)
    if body and body[0] and body[0][0].strip() == "":  # the units row has no ID
        units, body = body[0], body[1:]
    return [_row_metrics(header, units, row) for row in body if row and any(c.strip() for c in row)]


def _from_header(text: str) -> str:
    # ncu may print ==PROF== / ==WARNING== lines before the table.
    at = text.find('"ID"')
    return text[at:] if at >= 0 else text


def _row_metrics(header: list[str], units: list[str], row: list[str]) -> KernelMetrics:
    cells = dict(zip(header, row))
    unit_of = dict(zip(header, units))
    raw: dict[str, Value] = {}
    for name, text in cells.items():
        value = parse_value(text, unit_of.get(name, ""))
        if value is not None and name not in _IDENTITY:
            raw[name] = value
    for name in ("Kernel Name", "Process ID", "Device", "CC"):
        if cells.get(name, "").strip():
            raw[name] = cells[name].strip()
    return from_raw(cells.get("Kernel Name", "").strip(), raw,
                    _tuple(cells.get("Grid Size", "")), _tuple(cells.get("Block Size", "")))


def _tuple(text: str) -> tuple[int, int, int] | None:
    parts = re.findall(r"\d+", text.replace(",", " "))
    return tuple(int(p) for p in parts) if len(parts) == 3 else None  # type: ignore[return-value]
