"""The raw-CSV parser against the seven real H200 captures in tests/fixtures/ncu."""

from __future__ import annotations

import functools

import pytest

from tests.profiling.captures import CAPTURES, FOCUSED, csv_text, csv_values
from tritonforge.profiling.metrics import KernelMetrics
from tritonforge.profiling.ncu.parse import parse_raw_csv, parse_value

# Field -> the metric column it is read from (the parser's choice, checked against the CSV).
DIRECT = {
    "duration_ns": "gpu__time_duration.sum",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_throughput_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "l1_hit_rate_pct": "l1tex__t_sector_hit_rate.pct",
    "l2_hit_rate_pct": "lts__t_sector_hit_rate.pct",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "waves_per_sm": "launch__waves_per_multiprocessor",
    "registers_per_thread": "launch__registers_per_thread",
    "tensor_pipe_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "instructions_executed": "smsp__inst_executed.sum",
    "global_load_bytes_per_sector": "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
}


@pytest.fixture(params=CAPTURES)
def capture(request) -> str:
    return request.param


def number(text: str) -> float:
    return float(text.replace(",", ""))


@functools.lru_cache(maxsize=None)
def parse(name: str) -> KernelMetrics:
    kernels = parse_raw_csv(csv_text(name))
    assert len(kernels) == 1
    return kernels[0]


def test_every_capture_parses_to_one_kernel_with_its_name_and_launch_shape(capture):
    k = parse(capture)
    row = csv_values(capture)
    assert k.kernel == row["Kernel Name"] == ("matmul_tc" if capture == "matmul_smem" else capture)
    assert k.grid == tuple(int(number(row[f"launch__grid_dim_{a}"])) for a in "xyz")
    assert k.block == tuple(int(number(row[f"launch__block_dim_{a}"])) for a in "xyz")
    assert k.grid_blocks == number(row["launch__grid_size"])
    assert k.sm_count == 132


@pytest.mark.parametrize("field_name", sorted(DIRECT))
def test_named_fields_equal_the_csv_columns(capture, field_name):
    k = parse(capture)
    assert getattr(k, field_name) == pytest.approx(number(csv_values(capture)[DIRECT[field_name]]))


def test_raw_keeps_every_metric_column_with_numbers_unseparated(capture):
    k = parse(capture)
    row = csv_values(capture)
    assert k.raw["dram__bytes.sum.per_second"] == number(row["dram__bytes.sum.per_second"])
    assert k.raw["launch__cluster_scheduling_policy"] == "PolicySpread"
    # Empty and "no data" cells are left out rather than read as zero.
    assert "sass__inst_executed_register_spilling_mem_local" not in k.raw
    assert len(k.raw) > 2000


def test_known_values_of_mem_peak():
    k = parse("mem_peak")
    assert (k.grid, k.block) == ((65536, 1, 1), (128, 1, 1))
    assert k.duration_ns == 182_304
    assert k.dram_throughput_pct == 89.59
    assert k.dram_read_bytes == 536_876_800 and k.dram_write_bytes == 249_025_792
    assert k.dram_bytes == 536_876_800 + 249_025_792
    assert k.achieved_occupancy_pct == 84.45 and k.theoretical_occupancy_pct == 100
    assert k.occupancy_limits == {"registers": 16, "shared_mem": 32, "blocks": 32, "warps": 16}
    assert k.waves_per_sm == 31.03
    assert k.registers_per_thread == 26 and k.shared_mem_per_block == 0
    # One fp32 add per element, 2^26 elements.
    assert k.fp32_flops == pytest.approx(2**26, rel=1e-3)
    assert k.global_load_bytes_per_sector == 32 and k.local_memory_sectors == 0


def test_strided_reads_use_an_eighth_of_each_sector():
    k = parse("mem_strided")
    assert k.global_load_bytes_per_sector == 4
    assert k.dram_read_bytes == 356_564_480  # 357 MB for a 268 MB matrix
    assert k.memory_throughput_pct == 97.72 and k.dram_throughput_pct == 16.02


def test_register_bound_and_spilling_kernels_show_local_memory():
    regs, spills = parse("occupancy_regs"), parse("spills")
    assert regs.registers_per_thread == 255
    assert regs.occupancy_limiters == ["registers"]
    assert regs.occupancy_limits["registers"] == 8
    assert regs.local_memory_sectors == 9_414_448 + 9_142_048
    assert regs.local_memory_instructions == 2_351_104 + 2_220_032
    assert spills.local_memory_sectors == 13_823_251 + 11_427_445
    assert spills.global_memory_sectors == 2_097_152 + 2_097_152


def test_matmuls_count_tensor_ops_and_share_the_occupancy_limit():
    tc, smem = parse("matmul_tc"), parse("matmul_smem")
    assert tc.tensor_ops == smem.tensor_ops == 2 * 4096**3
    assert tc.tensor_pipe_pct == 81.79 and smem.tensor_pipe_pct == 86.55
    assert smem.occupancy_limiters == ["registers", "shared_mem"]
    assert smem.shared_mem_per_block == 196_608  # what Triton reports as metadata.shared
    assert tc.shared_mem_per_block == 98_304
    # cp.async moves the operands: no plain global loads to judge coalescing by.
    assert tc.global_load_bytes_per_sector == 0


def test_warp_stalls_are_named_by_reason_without_the_issue_slot():
    k = parse("mem_strided")
    assert k.warp_stalls["long_scoreboard"] == 113.63
    assert k.warp_stalls["mio_throttle"] == 134.30
    assert k.warp_stalls["lg_throttle"] == 51.84
    assert "selected" not in k.warp_stalls
    assert k.warp_stalls["membar"] == 0
    assert max(parse("occupancy_regs").warp_stalls.items(), key=lambda kv: kv[1])[0] == "no_instruction"


def test_tiny_grid_is_one_block():
    k = parse("tiny_grid")
    assert k.grid_blocks == 1 and k.block_threads == 128
    assert k.duration_ns == 5_308_352


def test_to_json_leaves_raw_out():
    d = parse("mem_peak").to_json()
    assert "raw" not in d and d["duration_ns"] == 182_304


@pytest.mark.parametrize("text,unit,want", [
    ("3,199,081,035.92", "", 3199081035.92),
    ("65,536", "block", 65536.0),
    ("0", "%", 0.0),
    ("-0.00", "%", 0.0),
    ("1.5e-05", "", 1.5e-05),
    ("2", "Kbyte", 2000.0),
    ("1.5", "usecond", 1500.0),
    ("n/a", "", None),
    ("", "%", None),
    ("no data", "inst", None),
    ("(128, 1, 1)", "", "(128, 1, 1)"),
    ("PolicySpread", "", "PolicySpread"),
])
def test_parse_value(text, unit, want):
    assert parse_value(text, unit) == want


def test_two_rows_prefixed_by_ncu_chatter_give_two_kernels():
    lines = csv_text("mem_peak").splitlines()
    other = csv_text("tiny_grid").splitlines()[2]
    text = "==PROF== Disconnected from process 1\n" + "\n".join(lines + [other]) + "\n"
    kernels = parse_raw_csv(text)
    assert [k.kernel for k in kernels] == ["mem_peak", "tiny_grid"]
    assert kernels[1].grid == (1, 1, 1)


def test_a_table_without_units_row_still_parses():
    header, _units, values = csv_text("spills").splitlines()[:3]
    [k] = parse_raw_csv(header + "\n" + values + "\n")
    assert k.registers_per_thread == 64


def test_nothing_in_gives_nothing_out():
    assert parse_raw_csv("") == []


@pytest.mark.parametrize("name", FOCUSED)
def test_the_profilers_own_focused_capture_fills_every_field_but_tensor_ops(name):
    k = parse(name)
    row = csv_values(name)
    assert len(row) < 1000  # the focused sections, not the full set's 2238 columns
    assert k.kernel == "add_kernel" and k.block == (128, 1, 1)
    missing = [f for f, v in k.to_json().items() if v is None or v == {}]
    assert missing == ["tensor_ops"]
    # Read directly (.sum) rather than undone from a rate: one fp32 add per element, done twice
    # with BLOCK 64, whose 64 elements are spread over 128 threads (the layout replicates them).
    assert "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum" in row
    assert k.fp32_flops == (2 * 2**26 if name == "vector_add_block64" else 2**26)
    assert k.dram_read_bytes == pytest.approx(2 * 4 * 2**26, rel=1e-3)


def test_focused_captures_differ_where_the_block_size_does():
    narrow, wide = parse("vector_add_block64"), parse("vector_add_block1024")
    assert narrow.grid == (2**26 // 64, 1, 1) and wide.grid == (2**26 // 1024, 1, 1)
    assert narrow.duration_ns > 3 * wide.duration_ns
    assert narrow.dram_throughput_pct < 30 < 85 < wide.dram_throughput_pct


def test_read_report_says_when_ncu_report_is_missing(tmp_path):
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("ncu_report is importable here")
    from tritonforge.profiling.ncu.report import _ncu_report_dirs, read_report

    if _ncu_report_dirs():
        pytest.skip("an Nsight Compute install is here")
    with pytest.raises(ImportError, match="extras/python"):
        read_report(str(tmp_path / "r.ncu-rep"))
