"""Compile candidates on the CPU cores while the GPU times them one at a time.

Each compile worker is an ordinary evaluation worker with the GPU hidden: it captures the
entry's launches without running them and compiles each kernel for the target GPU. A
candidate that cannot compile (shared memory, registers, syntax) is judged before it gets
any GPU time, and the compiled kernels land in Triton's cache for the GPU worker to reuse.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from queue import Queue
from typing import Any

from tritonforge.domain.verdict import Status
from tritonforge.problem.spec import Case, Problem
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import CandidateFault, ProcessFailed, WorkerFault


@dataclass
class CompileReport:
    status: Status | None  # None: compiled; else the verdict to give without GPU time
    message: str = ""
    facts: list[dict[str, Any]] = field(default_factory=list)


class CompilePool:
    def __init__(self, problem: Problem, case: Case, *, arch: int = 90, workers: int | None = None,
                 timeout_s: float = 240.0) -> None:
        self.problem = problem
        self.case = case
        self.arch = arch
        self.timeout_s = timeout_s
        n = workers or max(1, min(8, (os.cpu_count() or 2) - 2))
        self.idle: Queue[WorkerClient] = Queue()
        self.all = [WorkerClient("compile") for _ in range(n)]
        for w in self.all:
            self.idle.put(w)
        self.executor = ThreadPoolExecutor(max_workers=n, thread_name_prefix="compile")
        self.futures: dict[Path, Future] = {}
        self.lock = threading.Lock()

    def submit(self, paths: list[Path]) -> None:
        with self.lock:
            for path in paths:
                if path not in self.futures:
                    self.futures[path] = self.executor.submit(self._compile, path)

    def result(self, path: Path) -> CompileReport | None:
        future = self.futures.get(path)
        return future.result() if future else None

    def _compile(self, path: Path) -> CompileReport:
        worker = self.idle.get()
        try:
            facts = worker.compile(self.problem, self.case, path, arch=self.arch, timeout=self.timeout_s)
        except ProcessFailed as e:
            status = Status.TIMEOUT if e.failure == "timeout" else Status.CRASH
            return CompileReport(status, f"while compiling: {e.error or e.failure}")
        except CandidateFault as e:
            return CompileReport(e.status, e.message)
        except WorkerFault as e:  # the problem's or the worker's own fault: let the GPU decide
            return CompileReport(None, e.message)
        finally:
            self.idle.put(worker)
        return CompileReport(None, "", facts)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        for w in self.all:
            w.close()
