"""What every command starts from: a worker process, the problem it loaded, an evaluator
and the GPU's ceilings (measured once per GPU model and cached)."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, load_problem
from tritonforge.problem.spec import Problem
from tritonforge.analysis.ceilings import Ceilings, datasheet
from tritonforge.profiling.ceilings import cached_or_measured
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import WorkerFault


@dataclass
class SessionOptions:
    entry: str | None = None
    specs: list[str] = field(default_factory=list)  # zero-config cases (--inputs)
    evaluation: EvalOptions = field(default_factory=EvalOptions)


class Session:
    """Open with `with Session(path, options) as s:`; raises ProblemError (one line) for a bad problem."""

    def __init__(self, problem_path: Path, options: SessionOptions) -> None:
        self.problem_path = Path(problem_path)
        self.options = options
        self.device = options.evaluation.device
        self._stack = ExitStack()
        self._ceilings: Ceilings | None = None
        self.worker: WorkerClient
        self.problem: Problem
        self.evaluator: Evaluator

    def __enter__(self) -> "Session":
        self.worker = self._stack.enter_context(WorkerClient(self.device))
        try:
            self.problem = load_problem(self.problem_path, self.worker, entry=self.options.entry,
                                        specs=self.options.specs, timeout=self.options.evaluation.check_timeout_s)
        except BaseException:
            self._stack.close()
            raise
        self.evaluator = Evaluator(self.problem, self.worker, self.options.evaluation)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def environment(self) -> dict[str, Any]:
        return self.evaluator.environment()

    @property
    def ceilings(self) -> Ceilings:
        """Measured on this GPU (cached per model); datasheet values without one."""
        if self._ceilings is None:
            self._ceilings = gpu_ceilings(self.worker, self.device)
        return self._ceilings


def gpu_ceilings(worker: WorkerClient, device: str) -> Ceilings:
    if device != "cuda":
        return datasheet(None)
    try:
        env = worker.env()
    except WorkerFault:
        env = {}

    def measure() -> Ceilings:
        try:
            return worker.ceilings()
        except WorkerFault as e:
            raise RuntimeError(f"measuring the GPU's ceilings failed: {e}") from None

    return cached_or_measured(env.get("gpu") or "unknown GPU", measure)
