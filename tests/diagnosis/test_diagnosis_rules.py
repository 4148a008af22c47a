"""The rules against the seven real H200 captures, and against made-up inputs for the rest.

Each capture was built to show one bottleneck (tests/fixtures/ncu/README.md); the rules
never see the capture's name, only its metrics, so agreement is earned. Roofline bytes
come from the sizes in tests/fixtures/ncu/kernels.py.
"""

from __future__ import annotations

import functools
import json

import pytest

from tests.profiling.captures import CAPTURES, FIXTURES, csv_text
from tritonforge.analysis.ceilings import datasheet
from tritonforge.analysis.roofline import Roofline, Work
from tritonforge.diagnosis import RULES, DiagnosisInput, Finding, diagnose, main_bottleneck, signals
from tritonforge.profiling.metrics import KernelMetrics
from tritonforge.profiling.ncu.parse import parse_raw_csv


def roofline(bytes: float, flops: float = 0.0, floor_ns: float = 0.0) -> Roofline:
    """A roofline of known work whose floor, when given, is `floor_ns`."""
    return Roofline(Work(bytes=bytes, flops=flops), memory_ms=floor_ns / 1e6, compute_ms=0.0, ceilings_source="test")


# Compulsory DRAM bytes (and flops) of each capture, from kernels.py's sizes.
ROOFLINE = {
    "mem_peak": roofline(bytes=3 * 4 * 2**26),
    "mem_strided": roofline(bytes=4 * 8192 * 8192 + 4 * 8192),
    "occupancy_regs": roofline(bytes=2 * 4 * 2**26),
    "spills": roofline(bytes=2 * 4 * 2**24),
    "tiny_grid": roofline(bytes=4 * 2**24 + 4),
    "matmul_tc": roofline(bytes=3 * 2 * 4096**2, flops=2 * 4096**3),
    "matmul_smem": roofline(bytes=3 * 2 * 4096**2, flops=2 * 4096**3),
}
# What each capture was built to show, as the finding kinds that would say so.
EXPECTED_TOP = {
    "mem_peak": {"memory_bound_near_peak"},
    "mem_strided": {"uncoalesced_access", "redundant_traffic", "memory_bound_far_from_peak"},
    "occupancy_regs": {"register_spills", "latency_bound_low_occupancy"},
    "spills": {"register_spills"},
    "tiny_grid": {"launch_bound_tiny_grid"},
    "matmul_tc": {"compute_bound_tensor"},
    "matmul_smem": {"compute_bound_tensor"},
}
# Compile facts from timings.txt (do_bench run outside ncu).
COMPILE = {
    "occupancy_regs": {"registers": 255, "spills": 282, "shared": 0, "num_warps": 1},
    "spills": {"registers": 64, "spills": 1624, "shared": 0, "num_warps": 1},
    "matmul_smem": {"registers": 184, "spills": 0, "shared": 196608, "num_warps": 8,
                    "instructions": {"wgmma": 1}},
}


@functools.lru_cache(maxsize=None)
def metrics(name: str) -> KernelMetrics:
    [k] = parse_raw_csv(csv_text(name))
    return k


def kinds(findings: list[Finding]) -> list[str]:
    return [f.kind for f in findings]


@pytest.mark.parametrize("name", CAPTURES)
@pytest.mark.parametrize("with_roofline", [False, True])
def test_top_finding_matches_how_the_capture_was_built(name, with_roofline):
    inp = DiagnosisInput(metrics=metrics(name), compile=COMPILE.get(name),
                         roofline=ROOFLINE[name] if with_roofline else None)
    top = main_bottleneck(diagnose(inp))
    assert top is not None and top.kind in EXPECTED_TOP[name], kinds(diagnose(inp))


@pytest.mark.parametrize("name", CAPTURES)
def test_findings_are_ranked_and_scored_in_range(name):
    findings = diagnose(DiagnosisInput(metrics=metrics(name), roofline=ROOFLINE[name]))
    scores = [f.score for f in findings]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 for s in scores)
    assert all(f.title and "?" not in f.title and f.evidence and f.directions for f in findings)


def test_mem_peak_says_little_is_left_and_shows_why():
    [top] = diagnose(DiagnosisInput(metrics=metrics("mem_peak"), roofline=ROOFLINE["mem_peak"]))
    assert top.kind == "memory_bound_near_peak"
    assert top.score == pytest.approx(0.8959, abs=1e-3)
    assert top.evidence["dram_pct"] == 89.59
    assert top.evidence["traffic_ratio"] == pytest.approx(785_902_592 / (3 * 4 * 2**26), rel=1e-4)
    assert "little left" in top.title
    # 34.6% L2 hits would look like thrashing, but DRAM moves only the compulsory bytes.
    assert metrics("mem_peak").l2_hit_rate_pct < 50


def test_mem_strided_wastes_seven_eighths_of_each_sector_and_rereads_the_matrix():
    findings = diagnose(DiagnosisInput(metrics=metrics("mem_strided"), roofline=ROOFLINE["mem_strided"]))
    top = findings[0]
    assert top.kind == "uncoalesced_access"
    assert top.evidence["access_efficiency_pct"] == 12.5
    assert "12%" in top.title or "13%" in top.title
    redundant = next(f for f in findings if f.kind == "redundant_traffic")
    assert redundant.evidence["traffic_ratio"] == pytest.approx(359_077_632 / (4 * 8192 * 8193), rel=1e-4)
    assert "memory_bound_near_peak" not in kinds(findings)  # 98% busy caches, 16% DRAM
    assert "l2_thrashing" not in kinds(findings)  # 82% L2 hits: the waste is in sectors, not evictions


def test_register_bound_kernel_names_registers_as_the_limiter():
    findings = diagnose(DiagnosisInput(metrics=metrics("occupancy_regs")))
    latency = next(f for f in findings if f.kind == "latency_bound_low_occupancy")
    assert latency.evidence["occupancy_limiter"] == "registers"
    assert latency.evidence["registers"] == 255 and latency.evidence["blocks_per_sm"] == 8
    assert "limited by registers" in latency.title
    assert any("registers per thread" in d for d in latency.directions)
    spills = next(f for f in findings if f.kind == "register_spills")
    assert spills.evidence["local_fraction"] == pytest.approx((9_414_448 + 9_142_048) / (18_556_496 + 16_777_216),
                                                             rel=1e-4)
    # The huge unrolled tile also starves the instruction cache.
    assert "instruction_fetch_stalls" in kinds(findings)


def test_spills_rank_above_the_small_grid_it_also_has():
    findings = diagnose(DiagnosisInput(metrics=metrics("spills"), compile=COMPILE["spills"]))
    assert kinds(findings)[0] == "register_spills"
    assert findings[0].evidence["spills"] == 1624
    assert findings[0].evidence["local_fraction"] > 0.8
    waves = next(f for f in findings if f.kind == "wave_quantization")
    assert waves.evidence["waves"] == 0.24 and waves.score < findings[0].score


def test_tiny_grid_is_one_block_for_132_sms_and_latency_names_the_grid():
    findings = diagnose(DiagnosisInput(metrics=metrics("tiny_grid")))
    top = findings[0]
    assert top.kind == "launch_bound_tiny_grid"
    assert top.evidence["grid_blocks"] == 1 and top.evidence["sm_count"] == 132
    assert top.score == pytest.approx(0.95 * (1 - 1 / 132), abs=1e-3)
    latency = next(f for f in findings if f.kind == "latency_bound_low_occupancy")
    assert latency.evidence["occupancy_limiter"] == "grid size"


@pytest.mark.parametrize("name", ["matmul_tc", "matmul_smem"])
def test_matmuls_are_tensor_bound_and_their_low_occupancy_is_not_blamed(name):
    findings = diagnose(DiagnosisInput(metrics=metrics(name), compile=COMPILE.get(name)))
    assert kinds(findings)[0] == "compute_bound_tensor"
    assert findings[0].evidence["tensor_pct"] == metrics(name).tensor_pipe_pct
    # 12-24% occupancy is how these kernels are meant to run: no latency or tensor-unused finding.
    assert "latency_bound_low_occupancy" not in kinds(findings)
    assert "tensor_cores_unused" not in kinds(findings)
    assert "uncoalesced_access" not in kinds(findings)  # cp.async loads have no LDG ratio to judge


def test_matmul_redundant_traffic_is_only_a_remark():
    findings = diagnose(DiagnosisInput(metrics=metrics("matmul_tc"), roofline=ROOFLINE["matmul_tc"]))
    redundant = next(f for f in findings if f.kind == "redundant_traffic")
    assert redundant.score < 0.2 < findings[0].score


def test_vector_add_block_64_is_latency_bound_and_block_1024_streams_near_peak():
    """The profiler's own captures of examples/vector_add.py with BLOCK 64 and 1024 (n = 2^26)."""
    narrow = diagnose(DiagnosisInput(metrics=metrics("vector_add_block64"), roofline=roofline(bytes=3 * 4 * 2**26)))
    top = narrow[0]
    assert top.kind == "latency_bound_little_in_flight"
    assert top.evidence["top_stall"] == "long_scoreboard" and top.evidence["occupancy_pct"] >= 40
    assert any("raise BLOCK" in d for d in top.directions)
    assert "memory_bound_near_peak" not in kinds(narrow)
    wide = diagnose(DiagnosisInput(metrics=metrics("vector_add_block1024"), roofline=roofline(bytes=3 * 4 * 2**26)))
    assert kinds(wide) == ["memory_bound_near_peak"]


# --- made-up inputs for the rules the captures do not reach ------------------------------
def synthetic(**fields) -> KernelMetrics:
    """A kernel that fires no rule (busy enough, nothing near a peak), changed by `fields`."""
    base = dict(kernel="k", grid=(1320, 1, 1), block=(128, 1, 1), duration_ns=500_000, sm_count=132,
                sm_throughput_pct=55.0, memory_throughput_pct=50.0, dram_throughput_pct=45.0,
                achieved_occupancy_pct=80.0, theoretical_occupancy_pct=100.0, waves_per_sm=10.0,
                tensor_pipe_pct=0.0, fma_pipe_pct=5.0)
    return KernelMetrics(**{**base, **fields})


def test_one_point_one_waves_is_a_tail():
    findings = diagnose(DiagnosisInput(metrics=synthetic(waves_per_sm=1.1, grid=(290, 1, 1))))
    top = main_bottleneck(findings)
    assert top.kind == "wave_quantization" and top.score == pytest.approx(0.8 * (1 - 1.1 / 2), abs=1e-3)
    assert top.evidence["last_wave_pct"] == pytest.approx(10)
    assert diagnose(DiagnosisInput(metrics=synthetic(waves_per_sm=3.95))) == []


def test_fma_bound_kernel_without_tensor_cores():
    findings = diagnose(DiagnosisInput(metrics=synthetic(sm_throughput_pct=85.0, fma_pipe_pct=80.0)))
    assert kinds(findings)[:2] == ["tensor_cores_unused", "compute_bound_pipes"]
    with_wgmma = DiagnosisInput(metrics=synthetic(sm_throughput_pct=85.0, fma_pipe_pct=80.0),
                                compile={"instructions": {"wgmma.mma_async": 3}})
    assert kinds(diagnose(with_wgmma)) == ["compute_bound_pipes"]


def test_l2_thrashing_needs_low_hits_and_extra_dram_traffic():
    m = synthetic(memory_throughput_pct=85.0, dram_throughput_pct=85.0, dram_read_bytes=2.5e9,
                  dram_write_bytes=0.5e9, l2_hit_rate_pct=20.0)
    findings = diagnose(DiagnosisInput(metrics=m, roofline=roofline(bytes=1e9)))
    thrash = next(f for f in findings if f.kind == "l2_thrashing")
    assert thrash.evidence == {"l2_hit_pct": 20, "traffic_ratio": 3, "dram_bytes": 3_000_000_000,
                               "roofline_bytes": 1_000_000_000}
    assert thrash.score == pytest.approx(0.2 + 0.7 * (1 - 1 / 3) * 0.8, abs=1e-3)
    # The specific cause ranks first; near peak yet moving 3x the bytes is not "little left".
    assert kinds(findings)[:2] == ["l2_thrashing", "redundant_traffic"]
    near = next(f for f in findings if f.kind == "memory_bound_near_peak")
    assert near.score == pytest.approx(0.85 / 3, abs=1e-3)
    hits = synthetic(dram_read_bytes=2.5e9, dram_write_bytes=0.5e9, l2_hit_rate_pct=70.0)
    assert "l2_thrashing" not in kinds(diagnose(DiagnosisInput(metrics=hits, roofline=roofline(bytes=1e9))))


def test_microsecond_launch_is_launch_bound():
    findings = diagnose(DiagnosisInput(metrics=synthetic(duration_ns=3_000)))
    assert findings[0].kind == "launch_bound_tiny_grid"
    assert findings[0].score == pytest.approx(0.7 * 0.7, abs=1e-3)


def test_low_dram_with_busy_memory_units_is_far_from_peak():
    m = synthetic(memory_throughput_pct=60.0, dram_throughput_pct=55.0, sm_throughput_pct=10.0,
                  warp_stalls={"long_scoreboard": 30.0, "wait": 2.0})
    [f] = diagnose(DiagnosisInput(metrics=m))
    assert f.kind == "memory_bound_far_from_peak" and f.score == pytest.approx(0.9 * 0.45, abs=1e-3)
    assert f.evidence["top_stall"] == "long_scoreboard"
    assert any("bytes in flight" in d for d in f.directions)


def test_compile_facts_alone():
    only_spills = diagnose(DiagnosisInput(compile={"registers": 255, "spills": 40, "num_warps": 4}))
    assert kinds(only_spills) == ["register_spills"] and only_spills[0].score == 0.55
    pressure = diagnose(DiagnosisInput(compile={"n_regs": 232, "n_spills": 0}))
    assert kinds(pressure) == ["register_pressure"] and main_bottleneck(pressure).score == 0.3


def test_roofline_alone_says_when_the_floor_is_reached():
    at_floor = DiagnosisInput(roofline=roofline(bytes=8e8, floor_ns=170_000), measured_ms=0.1897)
    [f] = diagnose(at_floor)
    assert f.kind == "at_roofline_floor" and f.evidence["floor_efficiency"] == pytest.approx(0.8962, abs=1e-4)
    far = DiagnosisInput(roofline=roofline(bytes=8e8, floor_ns=170_000), measured_ms=0.4)
    assert diagnose(far) == []
    # With counters, the counter-based rules judge instead.
    with_counters = DiagnosisInput(metrics=metrics("mem_peak"), roofline=at_floor.roofline,
                                   measured_ms=at_floor.measured_ms)
    assert "at_roofline_floor" not in kinds(diagnose(with_counters))


def test_dot_shaped_work_without_tensor_instructions():
    inp = DiagnosisInput(roofline=roofline(bytes=1e8, flops=1e11), compile={"instructions": {"fma": 100}})
    assert kinds(diagnose(inp)) == ["tensor_cores_unused"]


def test_nothing_known_gives_nothing():
    assert diagnose(DiagnosisInput()) == []
    assert main_bottleneck([]) is None
    assert main_bottleneck([Finding(kind="x", title="x", score=0.1)]) is None


def test_ceilings_fill_the_sm_count_and_peak():
    s = signals(DiagnosisInput(metrics=synthetic(sm_count=None, dram_read_bytes=1e9),
                               ceilings=datasheet("NVIDIA H200"), sm_count=132))
    assert s["sm_count"] == 132 and s["dram_peak_gbps"] == 4800 and s["dram_gbps"] == 2000


def test_rules_are_data_with_unique_ids_and_titles_that_survive_missing_values():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids)) >= 12
    for rule in RULES:
        assert rule.trigger and rule.evidence
        assert "{" not in rule.title_for({}) and "?" in rule.title_for({})


def test_a_new_rule_is_one_more_entry():
    from tritonforge.diagnosis import Rule

    shout = Rule(id="always", title="{kernel} ran", trigger="always", needs=("kernel",), score=lambda s: 0.5,
                 evidence=("kernel",), directions=("nothing",))
    [f] = diagnose(DiagnosisInput(metrics=synthetic()), rules=[shout])
    assert (f.kind, f.title, f.evidence, f.directions) == ("always", "k ran", {"kernel": "k"}, ["nothing"])


def test_finding_round_trips_through_json():
    f = diagnose(DiagnosisInput(metrics=metrics("tiny_grid")))[0]
    assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f


def test_register_limited_streaming_kernel_is_named_occupancy_limited():
    # Real Nsight Compute metrics of benchmarks/bottlenecks/occupancy_regs.py (157 registers,
    # 2 warps, 18.75% theoretical occupancy), taken through NcuProfiler on the H200 on
    # 2026-12-02 (benchmarks/results/2026-12-02-h200/logs/ncu_occupancy_regs.log).
    data = json.loads((FIXTURES / "occupancy_regs_157.metrics.json").read_text())
    data["grid"], data["block"] = tuple(data["grid"]), tuple(data["block"])
    m = KernelMetrics(**data)
    top = main_bottleneck(diagnose(DiagnosisInput(metrics=m)))
    assert top.kind == "memory_bound_low_occupancy"
    assert top.evidence["occupancy_limiter"] == "registers"
    assert top.evidence["occupancy_pct"] < 20
    assert any("registers per thread" in d for d in top.directions)


def test_a_rule_without_its_counters_says_its_short_title():
    from tritonforge.diagnosis.rules import RULES

    spills = next(r for r in RULES if r.id == "register_spills")
    assert "?" not in spills.title_for({"spills": 12, "registers": 64})
    assert spills.title_for({"spills": 12, "local_fraction": 0.5}).endswith("50% of the memory traffic")
