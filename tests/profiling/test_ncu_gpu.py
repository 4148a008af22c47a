"""NcuProfiler on a real GPU with real ncu: skipped unless both are here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tritonforge.diagnosis import DiagnosisInput, diagnose, main_bottleneck
from tritonforge.profiling import ProfileTarget
from tritonforge.profiling.ncu import NcuProfiler, read_report

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = ROOT / "examples" / "vector_add.py"
N = 1 << 26  # 805 MB moved: far beyond L2, so DRAM bytes are the roofline's


def _ready() -> str:
    try:
        import torch
    except ImportError:
        return "no torch"
    if not torch.cuda.is_available():
        return "no CUDA device"
    avail = NcuProfiler().available()
    return "" if avail.ok else avail.reason


@pytest.fixture(scope="module")
def ready() -> None:
    reason = _ready()
    if reason:
        pytest.skip(reason)


def test_vector_add_kernel_comes_back_with_metrics(ready):
    result = NcuProfiler(keep_report=True).profile(ProfileTarget(problem=str(VECTOR_ADD), params={"n": N}))
    try:
        assert result.warning == ""
        assert result.wall_s < 60
        assert result.launches == 1
        [k] = result.kernels
        assert k.kernel == "add_kernel"
        assert k.grid == (N // 64, 1, 1) and k.block is not None
        assert k.duration_ns and k.duration_ns > 0
        assert k.dram_read_bytes == pytest.approx(2 * 4 * N, rel=0.05)
        assert k.dram_bytes == pytest.approx(3 * 4 * N, rel=0.15)
        assert 0 < k.dram_throughput_pct <= 100 and 0 < k.achieved_occupancy_pct <= 100
        assert k.registers_per_thread and k.warp_stalls and k.occupancy_limits
        assert k.global_load_bytes_per_sector == pytest.approx(32, abs=1)
        # 64 elements per program leaves DRAM far from its peak (FACTS: 2.5 TB/s at BLOCK 128).
        assert k.dram_throughput_pct < 60
        top = main_bottleneck(diagnose(DiagnosisInput(metrics=k)))
        assert top is not None and top.kind in ("latency_bound_little_in_flight", "memory_bound_far_from_peak")
        try:
            [from_report] = read_report(result.report_path)
        except ImportError:
            return
        assert from_report.kernel == "add_kernel" and from_report.duration_ns == k.duration_ns
        assert from_report.dram_read_bytes == k.dram_read_bytes
    finally:
        if result.report_path:
            shutil.rmtree(Path(result.report_path).parent, ignore_errors=True)


def test_candidate_with_wide_blocks_streams_near_peak(ready, tmp_path):
    candidate = tmp_path / "vector_add_1024.py"
    candidate.write_text(VECTOR_ADD.read_text().replace("BLOCK = 64", "BLOCK = 1024"))
    target = ProfileTarget(problem=str(VECTOR_ADD), candidate=str(candidate), params={"n": N},
                           kernels=["add_kernel"], warmup=1)
    result = NcuProfiler().profile(target)
    assert result.warning == ""
    assert "regex:^(add_kernel)$" in result.command
    [k] = result.kernels
    assert k.grid == (N // 1024, 1, 1)
    # FACTS: BLOCK 1024 moves 4.26 TB/s, as fast as torch.add.
    top = main_bottleneck(diagnose(DiagnosisInput(metrics=k)))
    assert top is not None and top.kind == "memory_bound_near_peak"
