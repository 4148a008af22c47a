"""Judge a candidate file against a problem: correct on every case, and how much faster.

The parent side of evaluation. It never imports user code; it asks a worker process,
and turns whatever comes back (an answer, a crash, silence) into a `Verdict`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from tritonforge.domain.verdict import CaseVerdict, Speedup, Status, Verdict, worst
from tritonforge.evaluate.stats import speedup, summarize
from tritonforge.problem.module import syntax_error
from tritonforge.problem.spec import Case, Problem, ProblemError
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import CandidateFault, InternalFault, ProblemFault, ProcessFailed, WorkerFault
from tritonforge.worker.timing import TimingConfig

INTERPRETER_LABEL = "interpreter, not GPU"
# Statuses that concern the file as a whole: no point trying its other cases.
_WHOLE_FILE = {Status.INCOMPATIBLE, Status.LOAD_ERROR, Status.REJECTED}
# Phases in which a crash or a hang is the problem's own fault, not the candidate's.
_PROBLEM_PHASES = {"load_problem", "make_inputs", "entry", "reference"}
T = TypeVar("T")


@dataclass
class EvalOptions:
    device: str = "cpu"  # "cuda", or "cpu" for Triton's interpreter
    draws: int = 3  # fresh random input draws per case
    check_timeout_s: float = 300.0
    time_timeout_s: float = 300.0
    measure: bool = True  # time correct candidates
    reference_timing: bool = False  # also time the problem's reference(), for context
    stop_at_first_failure: bool = False
    shapes: str = "auto"  # "full" (SHAPES), "test" (TEST_SHAPES), or by device
    timing: TimingConfig = field(default_factory=TimingConfig)

    @property
    def timing_label(self) -> str:
        return "GPU" if self.device == "cuda" else INTERPRETER_LABEL


def default_device() -> str:
    """"cuda" when a GPU is visible, else "cpu" (Triton's interpreter)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_problem(path: Path, worker: WorkerClient, *, entry: str | None = None,
                 specs: list[str] | None = None, timeout: float = 300.0) -> Problem:
    """Read a problem's declarations through a worker. Raises ProblemError (one line)."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError(path, "no such file")
    where = syntax_error(path)
    if where:
        raise ProblemError(path, where)
    try:
        return worker.describe(path, entry=entry, specs=specs, timeout=timeout)
    except WorkerFault as fault:
        raise _problem_error(path, fault, "loading it", "loaded") from None


def _problem_error(path: Path, fault: WorkerFault, doing: str, done: str) -> ProblemError:
    """A fault of a request about the problem alone: the problem's, in one line."""
    if isinstance(fault, ProcessFailed):
        return ProblemError(path, f"{doing} {_failure_words(fault)}")
    if isinstance(fault, ProblemFault):
        return ProblemError(path, fault.message)
    return ProblemError(path, f"could not be {done}: {fault.message}")


class Evaluator:
    def __init__(self, problem: Problem, worker: WorkerClient, options: EvalOptions) -> None:
        self.problem = problem
        self.worker = worker
        self.options = options
        self._env: dict[str, Any] | None = None
        self._prepared_start = -1  # the worker start whose process ran the problem's own checks

    @property
    def cases(self) -> list[Case]:
        shapes = self.options.shapes
        if shapes == "auto":
            return self.problem.cases_for(self.options.device)
        return self.problem.cases if shapes == "full" else self.problem.test_cases

    def environment(self) -> dict[str, Any]:
        if self._env is None:
            try:
                self._env = dict(self.worker.env())
            except WorkerFault:
                self._env = {"device": self.options.device}
            self._env["timing"] = self.options.timing_label
        return self._env

    def evaluate(self, candidate: Path | None = None, cases: list[Case] | None = None) -> Verdict:
        """Check (and time) a candidate file on every case; None judges the problem's own entry."""
        name = str(candidate) if candidate else "baseline"
        verdicts: list[CaseVerdict] = []
        for case in cases or self.cases:
            cv = self._check(candidate, case)
            if cv.status is Status.CORRECT and self.options.measure:
                self._time(candidate, case, cv)
            verdicts.append(cv)
            if cv.status in _WHOLE_FILE or (self.options.stop_at_first_failure and not cv.status.ok):
                break
        status = worst([v.status for v in verdicts])
        message = next((f"{v.case}: {v.message}" for v in verdicts if not v.status.ok), "")
        return Verdict(candidate=name, status=status, cases=verdicts, message=message,
                       timing_label=self.options.timing_label, environment=self.environment())

    def head_to_head(self, candidate: Path, against: Path, cases: list[Case] | None = None) -> list[Speedup]:
        """Time `candidate` against another candidate (not the baseline), case by case.

        Both were judged correct before; a fault here raises, as it means the machine changed.
        """
        ups = []
        for case in cases or self.cases:
            try:
                samples = self._ask(candidate, lambda: self.worker.time(
                    self.problem, case, candidate, seed=secrets.randbits(31), config=self.options.timing.to_json(),
                    timeout=self.options.time_timeout_s, against=Path(against)))
            except WorkerFault as fault:
                raise RuntimeError(f"timing {candidate} against {against} failed: "
                                   f"{self._fault(fault, case, candidate).message}") from None
            ups.append(speedup(samples["baseline"], samples["candidate"]))
        return ups

    def _prepare(self) -> None:
        """Run the problem's own checks in a fresh worker before it imports any candidate."""
        if self._prepared_start == self.worker.starts and self.worker.alive():
            return
        try:
            self.worker.prepare(self.problem, self.cases, secrets.randbits(31), self.options.check_timeout_s)
        except WorkerFault as fault:
            raise _problem_error(self.problem.path, fault, fault.phase or "loading", "checked") from None
        self._prepared_start = self.worker.starts

    # --- one case -----------------------------------------------------------------
    def _ask(self, candidate: Path | None, request: Callable[[], T]) -> T:
        """A request about a candidate, in a worker that has run the problem's own checks first."""
        if candidate is not None:
            self._prepare()
        return request()

    def _check(self, candidate: Path | None, case: Case) -> CaseVerdict:
        seeds = [secrets.randbits(31) for _ in range(self.options.draws)]
        try:
            r = self._ask(candidate, lambda: self.worker.check(self.problem, case, candidate, seeds,
                                                               self.options.check_timeout_s))
        except WorkerFault as fault:
            return self._fault(fault, case, candidate)
        return CaseVerdict(case=case.label, status=r.status, message=r.message, max_abs_err=r.max_abs_err,
                           max_rel_err=r.max_rel_err, draws=r.draws)

    def _time(self, candidate: Path | None, case: Case, cv: CaseVerdict) -> None:
        try:
            samples = self._ask(candidate, lambda: self.worker.time(
                self.problem, case, candidate, seed=secrets.randbits(31), config=self.options.timing.to_json(),
                timeout=self.options.time_timeout_s, with_reference=self.options.reference_timing))
        except WorkerFault as fault:
            verdict = self._fault(fault, case, candidate)
            cv.status, cv.message = verdict.status, f"while timing: {verdict.message}"
            return
        cv.baseline = summarize(samples["baseline"])
        if "candidate" in samples:
            cv.candidate = summarize(samples["candidate"])
            cv.speedup = speedup(samples["baseline"], samples["candidate"])
        if "reference" in samples:
            cv.reference = summarize(samples["reference"])

    def _fault(self, fault: WorkerFault, case: Case, candidate: Path | None) -> CaseVerdict:
        """The verdict for a request that got no plain answer; raises for the problem's own faults."""
        if isinstance(fault, ProblemFault):
            raise ProblemError(self.problem.path, fault.message)
        if isinstance(fault, InternalFault):
            return CaseVerdict(case=case.label, status=Status.ERROR, message=f"evaluator error: {fault.message}")
        if isinstance(fault, CandidateFault):
            if not fault.fatal:  # the candidate's own doing, judged without harm to the process
                return CaseVerdict(case=case.label, status=fault.status, message=fault.message)
            status, message = fault.status, fault.message
        else:
            assert isinstance(fault, ProcessFailed)
            if candidate is not None and fault.phase in ("entry", "reference") \
                    and self._prepared_start == self.worker.starts:
                # This process ran the problem's own code fine before it imported the candidate.
                status = Status.TIMEOUT if fault.failure == "timeout" else Status.CRASH
                return CaseVerdict(case=case.label, status=status,
                                   message=f"the {fault.phase} {_failure_words(fault)} once the candidate was loaded")
            if fault.phase in _PROBLEM_PHASES:
                raise ProblemError(self.problem.path, f"{fault.phase or 'loading'} on {case.label} "
                                                      f"{_failure_words(fault)}")
            status = Status.TIMEOUT if fault.failure == "timeout" else Status.CRASH
            message = fault.error or fault.failure
        if candidate is None:  # the problem's own entry failed: the problem is unusable
            raise ProblemError(self.problem.path, f"entry '{self.problem.entry}' on {case.label}: "
                                                  f"{status.value}: {message}")
        return CaseVerdict(case=case.label, status=status, message=message)


def _failure_words(fault: ProcessFailed) -> str:
    if fault.failure == "timeout":
        return f"did not finish ({fault.error})"
    return f"crashed the worker ({fault.error or 'no message'})"
