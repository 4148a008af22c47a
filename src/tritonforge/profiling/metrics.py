"""Per-kernel hardware metrics, read from an Nsight Compute export.

`parse_raw_csv` reads `ncu -i X.ncu-rep --csv --page raw --print-units base`: a header
row of metric names, a units row, then one row per profiled launch, numbers written
with thousands separators ("3,199,081,035.92"). `read_report` reads a .ncu-rep through
NVIDIA's `ncu_report` module where it is importable. Both end in `from_raw`, so the
named fields mean the same whichever way the numbers arrived.

Metric names were taken from real H200 captures (ncu 2025.3.1, `--set full`); every
field is optional because a smaller section list, an older GPU or another ncu
version may leave any of them out.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

Value = float | str

# --- metric names -------------------------------------------------------------------
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
FMA_PIPE = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
ISSUE_ACTIVE = "smsp__issue_active.avg.pct_of_peak_sustained_active"
INSTRUCTIONS = "smsp__inst_executed.sum"
SMSP_CYCLES = "smsp__cycles_elapsed.avg"
OCCUPANCY_LIMITS = ("registers", "shared_mem", "blocks", "warps")
_LIMIT_ORDER = ("warps", "blocks", "registers", "shared_mem")
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

# Metrics asked for by name besides the sections: the fields above that live in no
# section of the focused list (see `ncu.DEFAULT_SECTIONS`). Kept to names that exist
# on Volta and later, so that asking for them cannot fail the run.
EXTRA_METRICS: tuple[str, ...] = (
    DRAM_READ, DRAM_WRITE, L1_HIT, L2_HIT, TENSOR_PIPE, FMA_PIPE, ISSUE_ACTIVE,
    *LOCAL_SECTORS, *LOCAL_INSTRUCTIONS, GLOBAL_LD_SECTORS, GLOBAL_ST_SECTORS,
    LD_BYTES_PER_SECTOR, ST_BYTES_PER_SECTOR, SMSP_CYCLES,
    *(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"
      for ops in FLOP_WEIGHTS.values() for op in ops),
)

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


@dataclass
class KernelMetrics:
    """What Nsight Compute measured for one kernel launch. None: not collected."""

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
    tensor_pipe_pct: float | None = None
    fma_pipe_pct: float | None = None
    issue_active_pct: float | None = None
    instructions_executed: float | None = None  # warp-level
    fp32_flops: float | None = None
    # As ncu's roofline counts them: HFMA2.MMA, which compilers also use to move registers, counts too.
    fp16_flops: float | None = None
    fp64_flops: float | None = None
    tensor_ops: float | None = None  # from the full set's sm__ops_path_tensor_* (Hopper); None otherwise
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
        from dataclasses import asdict

        d = asdict(self)
        d.pop("raw")
        return d


# --- building -------------------------------------------------------------------------
def from_raw(kernel: str, raw: dict[str, Value], grid: tuple[int, int, int] | None = None,
             block: tuple[int, int, int] | None = None) -> KernelMetrics:
    """Name the values of one launch; `raw` maps metric names to numbers (base units)."""
    num = _Lookup(raw)
    return KernelMetrics(
        kernel=kernel,
        grid=grid or _dims(num, "launch__grid_dim"),
        block=block or _dims(num, "launch__block_dim"),
        duration_ns=num(DURATION),
        sm_throughput_pct=num(SM_THROUGHPUT),
        memory_throughput_pct=num(MEMORY_THROUGHPUT),
        dram_throughput_pct=num(DRAM_THROUGHPUT) if num(DRAM_THROUGHPUT) is not None else _dram_pct(num),
        l1_throughput_pct=num(L1_THROUGHPUT),
        l2_throughput_pct=num(L2_THROUGHPUT),
        dram_read_bytes=num(DRAM_READ),
        dram_write_bytes=num(DRAM_WRITE),
        l1_hit_rate_pct=num(L1_HIT),
        l2_hit_rate_pct=num(L2_HIT),
        achieved_occupancy_pct=num(ACHIEVED_OCCUPANCY),
        theoretical_occupancy_pct=num(THEORETICAL_OCCUPANCY),
        occupancy_limits={k: v for k in OCCUPANCY_LIMITS
                          if (v := num(f"launch__occupancy_limit_{k}")) is not None},
        waves_per_sm=num(WAVES),
        sm_count=_int(num(SM_COUNT) or num("device__attribute_multiprocessor_count")),
        registers_per_thread=num(REGISTERS),
        shared_mem_per_block=_shared(num),
        local_memory_sectors=num.total(LOCAL_SECTORS),
        local_memory_instructions=num.total(LOCAL_INSTRUCTIONS),
        global_load_sectors=num(GLOBAL_LD_SECTORS),
        global_store_sectors=num(GLOBAL_ST_SECTORS),
        global_load_bytes_per_sector=num(LD_BYTES_PER_SECTOR),
        global_store_bytes_per_sector=num(ST_BYTES_PER_SECTOR),
        warp_stalls=_stalls(raw),
        tensor_pipe_pct=num(TENSOR_PIPE) if num(TENSOR_PIPE) is not None else num(
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
        fma_pipe_pct=num(FMA_PIPE),
        issue_active_pct=num(ISSUE_ACTIVE),
        instructions_executed=num(INSTRUCTIONS),
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

    def total(self, names: tuple[str, ...]) -> float | None:
        values = [self(n) for n in names]
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
        m = STALL_RE.match(name)
        # "selected" is the issuing cycle itself, not a stall.
        if m and m.group(1) != "selected" and isinstance(value, (int, float)):
            stalls[m.group(1)] = float(value)
    return stalls


def _flops(num: _Lookup, kind: str) -> float | None:
    total, seen = 0.0, False
    for op, weight in FLOP_WEIGHTS[kind].items():
        base = f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"
        count = num(base)
        if count is None:  # the full set records only a rate: undo it with the cycle count
            rate, cycles = num(base + ".per_cycle_elapsed"), num(SMSP_CYCLES)
            count = rate * cycles if rate is not None and cycles is not None else None
        if count is not None:
            total, seen = total + weight * count, True
    return total if seen else None


def _tensor_ops(raw: dict[str, Value]) -> float | None:
    values = [float(v) for k, v in raw.items() if TENSOR_OPS_RE.match(k) and isinstance(v, (int, float))]
    return sum(values) if values else None


def _product(dims: tuple[int, int, int] | None) -> int | None:
    if dims is None:
        return None
    n = 1
    for d in dims:
        n *= d
    return n


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


# --- the binary report ----------------------------------------------------------------
def read_report(path: str) -> list[KernelMetrics]:
    """KernelMetrics from a .ncu-rep through NVIDIA's `ncu_report` module.

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
    import sys

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
    import glob
    import shutil
    from pathlib import Path

    dirs = []
    ncu = shutil.which("ncu")
    if ncu:
        dirs.append(str(Path(ncu).resolve().parent / "extras" / "python"))
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python"):
        dirs += sorted(glob.glob(pattern), reverse=True)
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]
