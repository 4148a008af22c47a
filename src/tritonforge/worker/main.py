"""The worker process: imports problems and candidates, runs them, reports in JSON lines.

Started by `tritonforge.worker.process.WorkerProcess` as `python -m tritonforge.worker`.
Requests arrive one JSON object per line on stdin; the reply is one JSON object per line
on a private copy of stdout. Before each stage it writes {"phase": ...}, so that when a
candidate kills the process the parent knows whose fault it was. Whatever user code
prints goes to stderr, which the parent keeps in a log.
"""

from __future__ import annotations

# Timing references are bound here, before any user code can be imported.
from tritonforge.worker import timing  # noqa: F401,I001  (import order is the point)

import contextlib
import json
import os
import sys
import traceback
from typing import Any, TextIO

import torch

from tritonforge.problem.spec import ProblemError
from tritonforge.worker.analysis_ops import AnalysisOps
from tritonforge.worker.checks import Checks
from tritonforge.worker.faults import CandidateFault
from tritonforge.worker.opinion import SecondOpinion
from tritonforge.worker.referee import Referee
from tritonforge.worker.timed import TimedCalls


# What a referee answers: it never imports a candidate, nor runs anything a candidate could bend.
REFEREE_OPS = frozenset({"describe", "env", "prepare", "judge"})


class Worker(Checks, TimedCalls, AnalysisOps, SecondOpinion, Referee):
    """Every request the worker answers: `op_<name>` serves {"op": name, ...}."""

    def serve(self, requests: TextIO) -> None:
        for line in requests:
            if not line.strip():
                continue
            req = json.loads(line)
            try:
                if self.role == "referee" and (req["op"] not in REFEREE_OPS or req.get("candidate")):
                    raise RuntimeError(f"a referee does not serve '{req['op']}' requests or load candidates")
                reply = getattr(self, "op_" + req["op"])(req)
            except ProblemError as e:
                reply = {"problem_error": e.what}
            except CandidateFault as e:
                reply = e.to_json()
            except BaseException as e:  # the worker must answer, whatever happened
                reply = {"internal_error": "".join(traceback.format_exception_only(type(e), e)).strip(),
                         "fatal": True}
            self.send({"done": reply})

    def op_describe(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"problem": self.problem(req).describe().to_json()}

    def op_env(self, req: dict[str, Any]) -> dict[str, Any]:
        return environment(self.device)


def environment(device: str) -> dict[str, Any]:
    import platform

    import triton

    env = {"device": device, "python": platform.python_version(), "torch": torch.__version__,
           "triton": triton.__version__, "numpy": __import__("numpy").__version__}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, sm_count=props.multi_processor_count,
                   capability=f"{props.major}.{props.minor}", memory_gb=round(props.total_memory / 2**30, 1),
                   cuda=torch.version.cuda, driver=_driver_version())
    else:
        env.update(gpu=None, interpreter=True)
    return env


def _driver_version() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def main() -> None:
    import faulthandler

    faulthandler.enable()  # a segfault then leaves a Python traceback in the log
    device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
    role = sys.argv[sys.argv.index("--role") + 1] if "--role" in sys.argv else "judge"
    if device == "compile" and hasattr(os, "nice"):
        # Compile workers share the CPU with the worker that is timing on the GPU: they yield
        # to it, so that its launches are not held up (worker/timing.py on the lead).
        os.nice(10)
    placements: contextlib.AbstractContextManager = contextlib.nullcontext()
    if os.environ.get("TRITON_INTERPRET") == "1":
        from tritonforge import triton_hooks
        from tritonforge.analysis.host_state import cuda_placements_harmless

        triton_hooks.install_interpreter_compat()
        triton_hooks.install_interpreter_autotune()
        # Every tensor here is on the CPU: `with torch.cuda.device(x.device.index):` around a
        # launch would raise for the machine's sake, not the code's (probe round 26, mamba).
        placements = cuda_placements_harmless()
    # The protocol gets a private copy of stdout; fd 1 then points at stderr, so that
    # whatever user code prints cannot corrupt a reply.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    with placements:  # entered before the worker's integrity snapshot
        Worker(out, device, role).serve(sys.stdin)
