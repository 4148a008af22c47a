"""Judge a candidate file against a problem: correct on every case, and how much faster.

The parent side of evaluation. It never imports user code; it asks a worker process,
and turns whatever comes back (an answer, a crash, silence) into a `Verdict`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonforge.evaluate.pool import Reply, WorkerProcess
from tritonforge.evaluate.stats import speedup, summarize
from tritonforge.evaluate.timing import TimingConfig
from tritonforge.domain.verdict import CaseVerdict, Speedup, Status, Verdict, worst
from tritonforge.problem.module import syntax_error
from tritonforge.problem.spec import Case, Problem, ProblemError

INTERPRETER_LABEL = "interpreter, not GPU"
# Statuses that concern the file as a whole: no point trying its other cases.
_WHOLE_FILE = {Status.INCOMPATIBLE, Status.LOAD_ERROR, Status.REJECTED}
# Phases in which a crash or a hang is the problem's own fault, not the candidate's.
_PROBLEM_PHASES = {"load_problem", "make_inputs", "entry", "reference"}


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


def load_problem(path: Path, worker: WorkerProcess, *, entry: str | None = None,
                 specs: list[str] | None = None, timeout: float = 300.0) -> Problem:
    """Read a problem's declarations through a worker. Raises ProblemError (one line)."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError(path, "no such file")
    where = syntax_error(path)
    if where:
        raise ProblemError(path, where)
    reply = worker.request({"op": "describe", **_problem_fields(path, entry, specs)}, timeout)
    return Problem.from_json(_problem_answer(path, reply, "loading it", "loaded")["problem"])


def _problem_answer(path: Path, reply: Reply, doing: str, done: str) -> dict[str, Any]:
    """The answer to a request about the problem alone; any failure is the problem's (one line)."""
    if reply.result is None:
        raise ProblemError(path, f"{doing} {_failure_words(reply)}")
    if "problem_error" in reply.result:
        raise ProblemError(path, reply.result["problem_error"])
    if "internal_error" in reply.result:
        raise ProblemError(path, f"could not be {done}: {reply.result['internal_error']}")
    return reply.result


class Evaluator:
    def __init__(self, problem: Problem, worker: WorkerProcess, options: EvalOptions) -> None:
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
            reply = self.worker.request({"op": "env"}, timeout=120)
            self._env = dict(reply.result or {"device": self.options.device})
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
            reply = self._request("time", candidate, case, self.options.time_timeout_s,
                                  seed=secrets.randbits(31), config=self.options.timing.to_json(),
                                  against=str(Path(against).resolve()))
            fault = self._fault(reply, case, candidate)
            if fault:
                raise RuntimeError(f"timing {candidate} against {against} failed: {fault.message}")
            samples = reply.result or {}
            ups.append(speedup(samples["baseline"], samples["candidate"]))
        return ups

    def _prepare(self) -> None:
        """Run the problem's own checks in a fresh worker before it imports any candidate."""
        if self._prepared_start == self.worker.starts and self.worker.alive():
            return
        req = {"op": "prepare", **_problem_fields(self.problem.path, self.problem.entry, self.problem.inputs_specs),
               "cases": [c.to_json() for c in self.cases], "seed": secrets.randbits(31)}
        reply = self.worker.request(req, self.options.check_timeout_s)
        _problem_answer(self.problem.path, reply, reply.phase or "loading", "checked")
        self._prepared_start = self.worker.starts

    # --- one case -----------------------------------------------------------------
    def _request(self, op: str, candidate: Path | None, case: Case, timeout: float, **extra: Any) -> Reply:
        if candidate is not None:
            self._prepare()
        req = {"op": op, **_problem_fields(self.problem.path, self.problem.entry, self.problem.inputs_specs),
               "candidate": str(Path(candidate).resolve()) if candidate else None, "case": case.to_json(), **extra}
        return self.worker.request(req, timeout)

    def _check(self, candidate: Path | None, case: Case) -> CaseVerdict:
        seeds = [secrets.randbits(31) for _ in range(self.options.draws)]
        reply = self._request("check", candidate, case, self.options.check_timeout_s, seeds=seeds)
        cv = self._fault(reply, case, candidate)
        if cv:
            return cv
        r = reply.result or {}
        return CaseVerdict(case=case.label, status=Status(r["status"]), message=r.get("message", ""),
                           max_abs_err=r.get("max_abs_err"), max_rel_err=r.get("max_rel_err"),
                           draws=r.get("draws", 0))

    def _time(self, candidate: Path | None, case: Case, cv: CaseVerdict) -> None:
        reply = self._request("time", candidate, case, self.options.time_timeout_s,
                              seed=secrets.randbits(31), config=self.options.timing.to_json(),
                              with_reference=self.options.reference_timing)
        fault = self._fault(reply, case, candidate)
        if fault:
            cv.status, cv.message = fault.status, f"while timing: {fault.message}"
            return
        samples = reply.result or {}
        cv.baseline = summarize(samples["baseline"])
        if "candidate" in samples:
            cv.candidate = summarize(samples["candidate"])
            cv.speedup = speedup(samples["baseline"], samples["candidate"])
        if "reference" in samples:
            cv.reference = summarize(samples["reference"])

    def _fault(self, reply: Reply, case: Case, candidate: Path | None) -> CaseVerdict | None:
        """A verdict for a reply that is not a plain answer; raises for the problem's own faults."""
        r = reply.result
        if r is not None and "problem_error" in r:
            raise ProblemError(self.problem.path, r["problem_error"])
        if r is not None and "internal_error" in r:
            return CaseVerdict(case=case.label, status=Status.ERROR,
                               message=f"evaluator error: {r['internal_error']}")
        if r is not None and not r.get("fatal"):
            return None
        if r is None and candidate is not None and reply.phase in ("entry", "reference") \
                and self._prepared_start == self.worker.starts:
            # This process ran the problem's own code fine before it imported the candidate.
            status = Status.TIMEOUT if reply.failure == "timeout" else Status.CRASH
            return CaseVerdict(case=case.label, status=status,
                               message=f"the {reply.phase} {_failure_words(reply)} once the candidate was loaded")
        if r is None and reply.phase in _PROBLEM_PHASES:
            raise ProblemError(self.problem.path, f"{reply.phase or 'loading'} on {case.label} "
                                                  f"{_failure_words(reply)}")
        if r is not None:
            status, message = Status(r["status"]), r.get("message", "")
        else:
            status = Status.TIMEOUT if reply.failure == "timeout" else Status.CRASH
            message = reply.error or reply.failure or ""
        if candidate is None:  # the problem's own entry failed: the problem is unusable
            raise ProblemError(self.problem.path, f"entry '{self.problem.entry}' on {case.label}: "
                                                  f"{status.value}: {message}")
        return CaseVerdict(case=case.label, status=status, message=message)


def _problem_fields(path: Path, entry: str | None, specs: list[str] | None) -> dict[str, Any]:
    return {"problem": str(Path(path).resolve()), "entry": entry, "specs": list(specs or [])}


def _failure_words(reply: Reply) -> str:
    if reply.failure == "timeout":
        return f"did not finish ({reply.error})"
    return f"crashed the worker ({reply.error or 'no message'})"
