"""The serial local executor: one worker judges candidates one at a time, while an optional
compile pool on the CPU cores turns away those that cannot compile or fit before they get
GPU time."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterator

from tritonforge.domain.candidate import Candidate
from tritonforge.domain.verdict import Speedup, Verdict
from tritonforge.evaluate.evaluator import Evaluator
from tritonforge.executors.compile_pool import CompilePool
from tritonforge.search.executor import Captured, Judgement
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import WorkerFault

_CAPTURE_TIMEOUT_S = 300.0


class LocalExecutor:
    def __init__(self, evaluator: Evaluator, precheck: CompilePool | None = None) -> None:
        self.evaluator = evaluator
        self.precheck = precheck
        self.problem = evaluator.problem
        self.device = evaluator.options.device
        self.timing_label = evaluator.options.timing_label

    def environment(self) -> dict[str, Any]:
        return self.evaluator.environment()

    def evaluate(self, path: Path | None) -> Verdict:
        return self.evaluator.evaluate(path)

    def head_to_head(self, candidate: Path, against: Path) -> list[Speedup]:
        return self.evaluator.head_to_head(candidate, against)

    def capture(self, path: Path | None) -> Captured:
        """On a GPU, in the GPU worker, its launches recorded and skipped (the inputs are made
        on the GPU in milliseconds, where a CPU worker took ~20 s to make a large case's); on
        CPU tensors in a worker of its own, GPU hidden, where that fails or there is no GPU."""
        out = Captured()
        problem, cases = self.problem, self.evaluator.cases
        cpu: WorkerClient | None = None
        try:
            for case in cases:
                errors = []
                if self.device == "cuda":
                    try:
                        out.add(case.label, self.evaluator.worker.capture(problem, case, path, _CAPTURE_TIMEOUT_S))
                        continue
                    except WorkerFault as e:
                        errors.append(f"on the GPU: {e}")
                cpu = cpu or WorkerClient("compile" if self.device == "cuda" else "cpu")
                try:
                    out.add(case.label, cpu.capture(problem, case, path, _CAPTURE_TIMEOUT_S))
                except WorkerFault as e:
                    out.failures[case.label] = "; ".join([*errors, f"on CPU: {e}"])
        finally:
            if cpu is not None:
                cpu.close()
        return out

    def judge(self, batch: list[tuple[Candidate, Path]],
              starting: Callable[[Candidate], None] | None = None) -> Iterator[Judgement]:
        if self.precheck:
            self.precheck.submit([path for _, path in batch])
        for c, path in batch:
            if starting:
                starting(c)
            started = time.time()
            verdict, facts = self._judge(path)
            yield Judgement(candidate=c, verdict=verdict, started=started, finished=time.time(),
                            launch_facts=facts)

    def _judge(self, path: Path) -> tuple[Verdict, list[dict[str, Any]]]:
        report = self.precheck.result(path) if self.precheck else None
        facts = list(report.facts) if report else []
        if report is None or report.status is None:
            return self.evaluator.evaluate(path), facts
        verdict = Verdict(candidate=str(path), status=report.status, message=f"before any GPU time: {report.message}",
                          timing_label=self.timing_label, environment=self.environment())
        return verdict, facts
