"""Parent-side handle on a worker process: start it, ask it things under a time limit,
replace it after any fault.

A worker is reused while healthy (starting Python, torch and a CUDA context costs
seconds) and killed with its whole process group when it hangs or after a fault, since
a CUDA error poisons its context.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tritonforge

# Variables a worker may inherit; everything else (API keys, tokens, cloud credentials)
# stays behind.
_KEEP = re.compile(r"^(PATH|LANG|LC_\w+|TZ|TMPDIR|LD_LIBRARY_PATH|PYTHONPATH|VIRTUAL_ENV|CONDA_PREFIX|"
                   r"CUDA_\w+|NVIDIA_\w+|TRITON_\w+|TORCH_\w+|PYTORCH_\w+|NCCL_\w+|OMP_NUM_THREADS|"
                   r"MKL_\w+|NUMEXPR_\w+|CC|CXX)$")
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.I)
_ERROR_LINE = re.compile(r"(error|Error|ERROR|exception|Exception|fault|Fault|assert|Assert|Killed|Aborted|"
                         r"illegal|Illegal|signal|Traceback)")


@dataclass
class Reply:
    """What came back from one request."""

    result: dict[str, Any] | None = None  # the worker's answer, when it gave one
    failure: str | None = None  # "crash" or "timeout" when it did not
    phase: str | None = None  # the last stage the worker announced
    error: str = ""  # first lines of the error the worker printed, on failure
    seconds: float = 0.0
    phases: list[str] = field(default_factory=list)


def worker_env(device: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if _KEEP.match(k) and not _SECRET.search(k)}
    src = str(Path(tritonforge.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Keep the user's Triton cache: compiled kernels are reused across workers and runs.
    env.setdefault("TRITON_CACHE_DIR", os.environ.get("TRITON_CACHE_DIR")
                   or str(Path.home() / ".triton" / "cache"))
    env.pop("TRITON_INTERPRET", None)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    elif device == "compile":  # offline compilation only: keep off the GPU that is timing
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


class WorkerProcess:
    def __init__(self, device: str, *, gpu: int | None = None, python: str | None = None,
                 role: str = "judge") -> None:
        self.device = device
        self.role = role  # "judge", or "referee": a process that never imports a candidate
        self.gpu = gpu
        self.python = python or sys.executable
        self.proc: subprocess.Popen | None = None
        self.home: Path | None = None
        self.log_path: Path | None = None
        self._log = None
        self._buffer = b""
        self.starts = 0

    # --- lifecycle ----------------------------------------------------------------
    def start(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="tritonforge-worker-"))
        self.log_path = self.home / "worker.log"
        self._log = open(self.log_path, "wb")
        env = worker_env(self.device, self.home)
        if self.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(self.gpu)
        self.proc = subprocess.Popen(
            [self.python, "-m", "tritonforge.worker", "--device", self.device, "--role", self.role],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            cwd=self.home, env=env, start_new_session=True,
        )
        self._buffer = b""
        self.starts += 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f:
                    f.close()
            self.proc = None
        if self._log:
            self._log.close()
            self._log = None
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None

    def restart(self) -> None:
        self.close()
        self.start()

    # --- requests -----------------------------------------------------------------
    def request(self, req: dict[str, Any], timeout: float) -> Reply:
        """Send one request and wait for its answer; on a crash or timeout the worker is gone."""
        if not self.alive():
            self.restart()
        assert self.proc and self.proc.stdin and self.proc.stdout and self.log_path
        log_offset = self.log_path.stat().st_size
        reply = Reply()
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._failed(reply, "crash", log_offset, t0)
        deadline = t0 + timeout
        while True:
            line = self._readline(deadline)
            if line is None:  # end of stream: the worker died
                return self._failed(reply, "crash", log_offset, t0)
            if line == "":
                return self._failed(reply, "timeout", log_offset, t0)
            msg = json.loads(line)
            if "phase" in msg:
                reply.phase = msg["phase"]
                reply.phases.append(msg["phase"])
            elif "done" in msg:
                reply.result = msg["done"]
                reply.seconds = time.monotonic() - t0
                if reply.result.get("fatal"):
                    reply.error = self._error_lines(log_offset)
                    self.close()  # a fault may have poisoned the CUDA context: start afresh next time
                return reply

    def _readline(self, deadline: float) -> str | None:
        """The next line; "" when the deadline passed, None when the worker closed its end."""
        assert self.proc and self.proc.stdout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return ""
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                try:
                    self.proc.wait(timeout=10)  # reap it, so that its exit signal can be named
                except subprocess.TimeoutExpired:
                    pass
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def _failed(self, reply: Reply, failure: str, log_offset: int, t0: float) -> Reply:
        code = self.proc.poll() if self.proc else None
        reply.failure = failure
        reply.seconds = time.monotonic() - t0
        lines = self._error_lines(log_offset)
        if failure == "crash" and code is not None and code < 0:
            lines = f"worker killed by {signal.Signals(-code).name}" + (f": {lines}" if lines else "")
        elif failure == "timeout":
            lines = f"no answer within {reply.seconds:.0f} s" + (f"; {lines}" if lines else "")
        reply.error = lines
        self.close()
        return reply

    def _error_lines(self, offset: int, keep: int = 6) -> str:
        """The first lines of the error the worker printed since `offset`."""
        if not self.log_path or not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
        lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
        first = next((i for i, ln in enumerate(lines) if _ERROR_LINE.search(ln)), None)
        if first is None:
            return " | ".join(lines[-keep:])
        return " | ".join(lines[first:first + keep])
