"""Nsight Compute as a Profiler: run one call under `ncu`, export the raw page, parse it.

The profiled process is `python -m tritonforge.profiling.ncu.target`, which marks the
call to profile with cudaProfilerStart/Stop; `--profile-from-start off` makes ncu
skip everything else (imports, compiling, autotuning, warm-up calls).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tritonforge.profiling.metrics import KernelMetrics
from tritonforge.profiling.ncu.names import EXTRA_METRICS
from tritonforge.profiling.ncu.parse import parse_raw_csv
from tritonforge.profiling.profiler import Availability, ProfileResult, ProfileTarget

# Enough for every KernelMetrics field; `--set full` costs ~40 replay passes, these ~20.
DEFAULT_SECTIONS: tuple[str, ...] = (
    "LaunchStats", "Occupancy", "SpeedOfLight", "MemoryWorkloadAnalysis",
    "ComputeWorkloadAnalysis", "WarpStateStats", "InstructionStats",
)
NCU_GLOBS = ("/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda*/bin/ncu", "/usr/local/NVIDIA-Nsight-Compute*/ncu")
PERMISSION_MARK = "ERR_NVGPUCTRPERM"
_CAP_SYS_ADMIN, _CAP_PERFMON = 21, 38


@dataclass
class _Run:
    returncode: int | None  # None: killed at the timeout
    output: str


class NcuProfiler:
    name = "ncu"

    def __init__(self, ncu: str | None = None, sections: Sequence[str] = DEFAULT_SECTIONS,
                 metrics: Sequence[str] = EXTRA_METRICS, timeout_s: float = 120.0, max_launches: int = 32,
                 python: str | None = None, keep_report: bool = False) -> None:
        self.ncu = ncu
        self.sections = tuple(sections)
        self.metrics = tuple(metrics)
        self.timeout_s = timeout_s
        self.max_launches = max_launches  # a bound on replay time when an entry launches many kernels
        self.python = python or sys.executable
        self.keep_report = keep_report
        self._availability: Availability | None = None

    # --- finding the tool ---------------------------------------------------------
    def find(self) -> str | None:
        if self.ncu:
            return self.ncu if Path(self.ncu).exists() or shutil.which(self.ncu) else None
        found = shutil.which("ncu")
        if found:
            return found
        candidates = sorted((p for pattern in NCU_GLOBS for p in glob.glob(pattern)), key=_version_key)
        return candidates[-1] if candidates else None

    def _tool(self) -> str:
        return self.ncu or self.find() or "ncu"

    def available(self) -> Availability:
        if self._availability is None:
            self._availability = self._check()
        return self._availability

    def _check(self) -> Availability:
        ncu = self.find()
        if ncu is None:
            return Availability(False, "ncu not found (PATH, /opt/nvidia/nsight-compute/*): "
                                       "install Nsight Compute to get hardware counters")
        run = _run([ncu, "--version"], timeout_s=30)
        if run.returncode != 0:
            return Availability(False, f"`{ncu} --version` failed: {_first_line(run.output)}")
        if counters_restricted():
            return Availability(False, f"{PERMISSION_MARK}: GPU performance counters are limited to admin users "
                                       "(RmProfilingAdminOnly=1); run as root or with CAP_PERFMON")
        return Availability(True)

    # --- profiling ----------------------------------------------------------------
    def command(self, target: ProfileTarget, report: Path, config: Path, with_metrics: bool = True) -> list[str]:
        cmd = [self._tool(), "--target-processes", "all", "--clock-control", "none", "--profile-from-start", "off",
               "--launch-count", str(self.max_launches)]
        for section in self.sections:
            cmd += ["--section", section]
        if with_metrics and self.metrics:
            cmd += ["--metrics", ",".join(self.metrics)]
        if target.kernels:
            cmd += ["-k", "regex:^(" + "|".join(re.escape(k) for k in target.kernels) + ")$"]
        return cmd + ["-f", "-o", str(report), self.python, "-m", "tritonforge.profiling.ncu.target", str(config)]

    def profile(self, target: ProfileTarget) -> ProfileResult:
        avail = self.available()
        if not avail.ok:
            return ProfileResult(kernels=[], warning=avail.reason)
        start = time.monotonic()
        workdir = Path(tempfile.mkdtemp(prefix="tritonforge-ncu-"))
        try:
            result = self._profile_in(target, workdir)
        finally:
            if not self.keep_report:
                shutil.rmtree(workdir, ignore_errors=True)
        result.wall_s = time.monotonic() - start
        if not self.keep_report:
            result.report_path = None
        return result

    def _profile_in(self, target: ProfileTarget, workdir: Path) -> ProfileResult:
        report, config, outcome = workdir / "report", workdir / "target.json", workdir / "target-result.json"
        config.write_text(json.dumps({**target.to_json(), "result": str(outcome)}))
        cmd = self.command(target, report, config)
        run = _run(cmd, self.timeout_s, env=_child_env())
        if run.returncode is not None and _unknown_metric(run.output):
            # A metric this GPU or ncu does not know fails the whole run: retry with sections only.
            cmd = self.command(target, report, config, with_metrics=False)
            run = _run(cmd, self.timeout_s, env=_child_env())
        done = _read_json(outcome)
        warning = _diagnose_run(run, done, self.timeout_s)
        rep = report.with_suffix(".ncu-rep")
        kernels: list[KernelMetrics] = []
        if rep.exists():
            kernels, export_warning = self._export(rep)
            warning = warning or export_warning
        kernels = _keep(kernels, target.kernels or done.get("kernels"))  # None: the target said nothing
        if not kernels and not warning:
            warning = "ncu profiled no Triton kernel in the call" + _names_hint(done)
        return ProfileResult(kernels=kernels, command=cmd, warning=warning,
                             report_path=str(rep) if rep.exists() else None, launches=done.get("launches"))

    def _export(self, rep: Path) -> tuple[list[KernelMetrics], str]:
        run = _run([self._tool(), "-i", str(rep), "--csv", "--page", "raw", "--print-units", "base"], self.timeout_s)
        if run.returncode != 0:
            return [], f"ncu could not export {rep.name}: {_first_line(run.output)}"
        return parse_raw_csv(run.output), ""


# --- helpers ------------------------------------------------------------------------
def _run(cmd: list[str], timeout_s: float, env: dict[str, str] | None = None) -> _Run:
    """Run with merged output; on timeout, end the whole process group we started."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=env, start_new_session=True)
    except OSError as e:
        return _Run(returncode=127, output=str(e))
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return _Run(proc.returncode, out)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return _Run(None, out or "")


def _child_env() -> dict[str, str]:
    # The profiled interpreter must import this package even when it is not installed.
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _diagnose_run(run: _Run, done: dict, timeout_s: float) -> str:
    """One line saying what went wrong, or "" when nothing did."""
    if PERMISSION_MARK in run.output:
        return f"{PERMISSION_MARK}: no permission to read GPU performance counters (run as root or with CAP_PERFMON)"
    if run.returncode is None:
        return f"ncu timed out after {timeout_s:.0f} s"
    if done and not done.get("ok", False):
        return f"the profiled call failed: {done.get('error', 'unknown error')}"
    errors = [ln for ln in run.output.splitlines() if ln.startswith("==ERROR==")]
    if errors:
        return errors[0].replace("==ERROR==", "ncu:").strip()
    if run.returncode != 0:
        return f"ncu exited with status {run.returncode}: {_first_line(run.output)}"
    return ""


def _keep(kernels: list[KernelMetrics], names: Sequence[str] | None) -> list[KernelMetrics]:
    """Only the launches of the named kernels; everything when no names are known (None)."""
    if names is None:
        return kernels
    wanted = set(names)
    return [k for k in kernels if k.kernel in wanted]


def _names_hint(done: dict) -> str:
    names = done.get("kernels")
    return f" (the call launched {', '.join(names)})" if names else ""


def _unknown_metric(output: str) -> bool:
    low = output.lower()
    return "failed to find metric" in low or "invalid metric" in low or "unknown metric" in low


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else "no output"


def _version_key(path: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", path)]


def counters_restricted(params: str = "/proc/driver/nvidia/params", status: str = "/proc/self/status") -> bool:
    """True when the driver limits counters to admins and this process is not one."""
    try:
        text = Path(params).read_text()
    except OSError:
        return False  # not knowable here: let ncu say so if it is
    if not re.search(r"RmProfilingAdminOnly:\s*1", text):
        return False
    if os.geteuid() == 0:
        return False
    return not _has_capability(status, _CAP_SYS_ADMIN, _CAP_PERFMON)


def _has_capability(status: str, *bits: int) -> bool:
    try:
        m = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", Path(status).read_text(), re.M)
    except OSError:
        return False
    effective = int(m.group(1), 16) if m else 0
    return any(effective >> b & 1 for b in bits)
