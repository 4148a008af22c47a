"""NcuProfiler without a GPU: command line, availability, and the whole run against a stand-in ncu.

The stand-in is a small script that behaves like ncu at its edges (writes a report, then
exports one of the real captures), so the pipeline from command to KernelMetrics runs
here; what real ncu does with a real GPU is tested in test_ncu_gpu.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.profiling.captures import FIXTURES
from tritonforge.profiling import ProfileResult, Profiler, ProfileTarget
from tritonforge.profiling.ncu.profiler import DEFAULT_SECTIONS, NcuProfiler, counters_restricted

STAND_IN = f"""#!{sys.executable}
import json, os, sys, time
args = sys.argv[1:]
mode = os.environ.get("FAKE_NCU_MODE", "")
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0"); sys.exit(0)
if "-i" in args:
    sys.stdout.write(open(os.environ["FAKE_NCU_CSV"]).read()); sys.exit(0)
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
          "Performance Counters on the target device 0."); sys.exit(1)
if mode == "sleep":
    time.sleep(30)
if mode == "unknown_metric" and "--metrics" in args:
    print("==ERROR== Failed to find metric dram__bytes_read.sum"); sys.exit(1)
config = json.load(open(args[-1]))
if mode == "target_fails":
    json.dump({{"ok": False, "error": "ProblemError: x.py: make_inputs raised"}}, open(config["result"], "w"))
    sys.exit(1)
json.dump({{"ok": True, "launches": 1, "kernels": [k for k in os.environ["FAKE_NCU_KERNELS"].split(",") if k]}},
          open(config["result"], "w"))
open(args[args.index("-o") + 1] + ".ncu-rep", "w").write("report")
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch) -> Path:
    ncu = tmp_path / "ncu"
    ncu.write_text(STAND_IN)
    ncu.chmod(0o755)
    monkeypatch.setenv("FAKE_NCU_CSV", str(FIXTURES / "mem_peak.raw.csv"))
    monkeypatch.setenv("FAKE_NCU_LOG", str(tmp_path / "calls.log"))
    monkeypatch.setenv("FAKE_NCU_KERNELS", "mem_peak")
    return ncu


def calls(stand_in: Path) -> list[list[str]]:
    log = stand_in.parent / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


TARGET = ProfileTarget(problem="examples/vector_add.py", params={"n": 1 << 20})


def test_ncu_profiler_is_a_profiler():
    assert isinstance(NcuProfiler(), Profiler)
    assert NcuProfiler.name == "ncu"


def test_command_profiles_only_the_marked_call_with_the_focused_sections(tmp_path):
    cmd = NcuProfiler(ncu="/opt/x/ncu", python="/py").command(TARGET, tmp_path / "rep", tmp_path / "t.json")
    joined = " ".join(cmd)
    assert cmd[0] == "/opt/x/ncu"
    assert "--profile-from-start off" in joined and "--clock-control none" in joined
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--section"] == list(DEFAULT_SECTIONS)
    assert "dram__bytes_read.sum" in cmd[cmd.index("--metrics") + 1].split(",")
    assert "-k" not in cmd  # no names: every kernel in the marked call, filtered afterwards
    assert cmd[cmd.index("-o") + 1] == str(tmp_path / "rep") and "-f" in cmd
    assert cmd[-4:] == ["/py", "-m", "tritonforge.profiling.ncu.target", str(tmp_path / "t.json")]


def test_command_filters_by_exact_kernel_names(tmp_path):
    target = ProfileTarget(problem="p.py", kernels=["add_kernel", "reduce_kernel"])
    cmd = NcuProfiler(ncu="ncu").command(target, tmp_path / "r", tmp_path / "t.json")
    assert cmd[cmd.index("-k") + 1] == "regex:^(add_kernel|reduce_kernel)$"


def test_missing_ncu_is_reported_in_one_line_and_profile_does_not_raise(tmp_path):
    profiler = NcuProfiler(ncu=str(tmp_path / "no-such-ncu"))
    avail = profiler.available()
    assert not avail.ok and "ncu not found" in avail.reason and "\n" not in avail.reason
    result = profiler.profile(TARGET)
    assert isinstance(result, ProfileResult)
    assert result.kernels == [] and result.warning == avail.reason and not result.ok


def test_profile_runs_ncu_then_exports_and_parses(stand_in):
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert result.warning == ""
    assert [k.kernel for k in result.kernels] == ["mem_peak"]
    assert result.kernels[0].duration_ns == 182_304
    assert result.launches == 1 and result.wall_s > 0
    assert result.command[0] == str(stand_in) and "--profile-from-start" in result.command
    [profile_call] = calls(stand_in)
    config = json.loads(Path(profile_call[-1]).read_text()) if Path(profile_call[-1]).exists() else None
    assert config is None  # the work folder is removed unless keep_report
    assert result.report_path is None


def test_keep_report_leaves_the_report_and_the_target_config(stand_in):
    result = NcuProfiler(ncu=str(stand_in), keep_report=True).profile(TARGET)
    assert result.report_path and Path(result.report_path).exists()
    config = json.loads((Path(result.report_path).parent / "target.json").read_text())
    assert config["problem"] == "examples/vector_add.py" and config["params"] == {"n": 1 << 20}
    assert ProfileTarget.from_json(config) == TARGET


def test_only_the_triton_kernels_the_call_launched_are_kept(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_KERNELS", "some_other_kernel")
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert result.kernels == []
    assert "no Triton kernel" in result.warning and "some_other_kernel" in result.warning


def test_a_call_that_launched_no_triton_kernel_keeps_nothing(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_KERNELS", "")
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert result.kernels == [] and result.warning == "ncu profiled no Triton kernel in the call"


def test_permission_error_becomes_one_line(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "perm")
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert result.kernels == []
    assert result.warning.startswith("ERR_NVGPUCTRPERM") and "\n" not in result.warning


def test_a_failing_target_is_reported_with_its_error(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "target_fails")
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert result.kernels == []
    assert result.warning == "the profiled call failed: ProblemError: x.py: make_inputs raised"


def test_unknown_extra_metric_retries_with_sections_only(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "unknown_metric")
    result = NcuProfiler(ncu=str(stand_in)).profile(TARGET)
    assert [k.kernel for k in result.kernels] == ["mem_peak"] and result.warning == ""
    first, second = calls(stand_in)
    assert "--metrics" in first and "--metrics" not in second


def test_timeout_kills_the_run_and_says_so(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "sleep")
    result = NcuProfiler(ncu=str(stand_in), timeout_s=1).profile(TARGET)
    assert result.kernels == [] and result.warning == "ncu timed out after 1 s"
    assert result.wall_s < 10


def test_counter_restriction_read_from_the_driver(tmp_path, monkeypatch):
    params, status = tmp_path / "params", tmp_path / "status"
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    status.write_text("Name:\tpython\nCapEff:\t0000000000000000\n")
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert counters_restricted(str(params), str(status))
    status.write_text("CapEff:\t0000004000000000\n")  # CAP_PERFMON (bit 38)
    assert not counters_restricted(str(params), str(status))
    params.write_text("RmProfilingAdminOnly: 0\n")
    status.write_text("CapEff:\t0000000000000000\n")
    assert not counters_restricted(str(params), str(status))
    monkeypatch.setattr("os.geteuid", lambda: 0)
    params.write_text("RmProfilingAdminOnly: 1\n")
    assert not counters_restricted(str(params), str(status))
    assert not counters_restricted(str(tmp_path / "absent"), str(status))


def test_target_round_trips_through_json():
    t = ProfileTarget(problem="p.py", entry="f", candidate="c.py", specs=["x=float16[8]"], params={"n": 3},
                      spec="x=float16[8]", seed=5, kernels=["k"], warmup=4)
    assert ProfileTarget.from_json(json.loads(json.dumps(t.to_json()))) == t
