"""The parent's one way to ask a worker process anything.

`WorkerClient` owns two `WorkerProcess`es (each started on its first request, replaced
after any fault): the judging worker, which imports candidates and runs them, and the
referee, which never does: it computes the reference and compares outputs handed over to
it, so nothing a candidate does in its own process can bend either. The client offers one
typed method per request. Each returns the answer, or raises a `WorkerFault` for every
reply that is not one (see faults.py):

- `ProcessFailed`: the process crashed or gave no answer in time;
- `ProblemFault`: the problem's own code failed;
- `InternalFault`: the worker itself failed;
- `CandidateFault`: the candidate failed, with its verdict status and whether it was fatal.

Every fault carries the last phase the worker announced, so callers can tell whose code
was running. Which fault is whose (the candidate's or the problem's) is the caller's call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonforge.domain.verdict import Status
from tritonforge.problem.spec import Case, Problem
from tritonforge.profiling.ceilings import Ceilings
from tritonforge.worker.faults import CandidateFault, ProblemFault, ProcessFailed, WorkerFault, fault_of
from tritonforge.worker.process import WorkerProcess


@dataclass
class CheckResult:
    """A candidate's outputs against the reference on one case: correct or wrong."""

    status: Status
    message: str
    max_abs_err: float | None
    max_rel_err: float | None
    draws: int  # input draws compared before the verdict


class WorkerClient:
    def __init__(self, device: str, *, gpu: int | None = None, python: str | None = None) -> None:
        self.device = device
        self.process = WorkerProcess(device, gpu=gpu, python=python)
        self.referee = WorkerProcess(device, gpu=gpu, python=python, role="referee")
        self._refereed: set[tuple] = set()  # (problem and cases, referee start) prepared there

    # --- lifecycle ----------------------------------------------------------------
    @property
    def starts(self) -> int:
        """Judging processes started so far: a change means a fresh process took over."""
        return self.process.starts

    def alive(self) -> bool:
        return self.process.alive()

    def close(self) -> None:
        self.process.close()
        self.referee.close()

    def __enter__(self) -> "WorkerClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests about the problem or the machine ----------------------------------
    def describe(self, path: Path, *, entry: str | None = None, specs: list[str] | None = None,
                 timeout: float = 300.0) -> Problem:
        """The problem's declarations (cases, tolerance, entry...)."""
        answer = self._ask({"op": "describe", **_problem_fields(path, entry, specs)}, timeout)
        return Problem.from_json(answer["problem"])

    def prepare(self, problem: Problem, cases: list[Case], seed: int, timeout: float) -> int:
        """Run the problem's own checks on `cases`: in the referee (repeatable inputs, a
        deterministic reference), then in the judging process (repeatable inputs), before it
        imports a candidate. The number of cases prepared."""
        req = {"op": "prepare", **_fields_of(problem), "cases": [c.to_json() for c in cases], "seed": seed}
        key = (req["problem"], tuple(c.label for c in cases))
        if (key, self.referee.starts) not in self._refereed or not self.referee.alive():
            self._ask_referee(req, timeout, None)
            self._refereed.add((key, self.referee.starts))
        return int(self._ask(req, timeout)["prepared"])

    def env(self, timeout: float = 120.0) -> dict[str, Any]:
        """The worker's machine: device, python, torch, triton, numpy; on a GPU its name,
        sm_count, capability, memory_gb, cuda and driver."""
        return self._ask({"op": "env"}, timeout)

    def ceilings(self, timeout: float = 300.0) -> Ceilings:
        """The GPU's copy bandwidth and matmul rates, measured in the worker."""
        return Ceilings.from_json(self._ask({"op": "ceilings"}, timeout)["ceilings"])

    # --- requests about a candidate (None: the problem's own entry) ---------------------
    def check(self, problem: Problem, case: Case, candidate: Path | None, seeds: list[int],
              timeout: float) -> CheckResult:
        """The candidate's outputs against the reference, one input draw per seed: run in the
        judging process, compared in the referee."""
        result = CheckResult(Status.CORRECT, "", 0.0, 0.0, 0)
        varying = []
        for draw, seed in enumerate(seeds):
            ran = self._ask({**_case_fields(problem, case, candidate), "op": "check", "seed": seed,
                             "first": draw == 0}, timeout)
            varying.append(tuple(ran.get("varying") or ()))
            judged = self._judge(problem, case, candidate, seed, ran["inputs"], ran["outputs"], timeout)
            result.draws = draw + 1
            for which, r in zip(ran["calls"], judged):
                result.max_abs_err = max(result.max_abs_err or 0.0, r.get("max_abs_err", 0.0))
                result.max_rel_err = max(result.max_rel_err or 0.0, r.get("max_rel_err", 0.0))
                if not r["ok"]:
                    result.status, result.message = Status.WRONG, f"draw {draw + 1} (seed {seed}{which}): {r['message']}"
                    return result
        if len(varying) > 1 and len(set(varying)) == 1 and varying[0]:
            raise ProblemFault(f"make_inputs returns the same inputs for every seed ({case.label})", "make_inputs")
        return result

    def time(self, problem: Problem, case: Case, candidate: Path | None, *, seed: int, config: dict[str, Any],
             timeout: float, with_reference: bool = False, against: Path | None = None) -> dict[str, list[float]]:
        """Samples in ms by role: "baseline" (the entry, or `against`), "candidate" when given,
        "reference" when asked for and the problem has one. A few timed calls of the
        candidate, picked in secret, are checked by the referee."""
        req = {**_case_fields(problem, case, candidate), "op": "time", "seed": seed, "config": config}
        if with_reference:
            req["with_reference"] = True
        if against is not None:
            req["against"] = str(Path(against).resolve())
        reply = self._ask(req, timeout)
        for kept in reply.get("kept", []):
            r = self._judge(problem, case, candidate, kept["seed"], None, [kept["outputs"]], timeout)[0]
            if not r["ok"]:
                self.process.close()  # as after any fatal fault: the next request starts afresh
                raise CandidateFault(Status.REJECTED, f"timed call {kept['rep'] + 1} returned a wrong result "
                                                      f"({r['message']}); it behaves differently when timed",
                                     fatal=True, phase="checks")
        return reply["samples"]

    def compile(self, problem: Problem, case: Case, candidate: Path, *, arch: int, timeout: float) -> list[dict]:
        """Compile facts of each kernel the candidate launches, compiled offline for sm_<arch>."""
        req = {**_case_fields(problem, case, candidate), "op": "compile", "arch": arch}
        return self._ask(req, timeout).get("facts", [])

    def second_opinion(self, problem: Problem, case: Case, candidate: Path, *, seed: int,
                       timeout: float) -> dict[str, Any]:
        """{"baseline": ms, "candidate": ms, "timed", "no_graph", "plain": {...}, "rounds": {...}}:
        medians of do_bench, alternating (worker/opinion.py)."""
        req = {**_case_fields(problem, case, candidate), "op": "second_opinion", "seed": seed}
        return self._ask(req, timeout)

    def capture(self, problem: Problem, case: Case, candidate: Path | None, timeout: float) -> dict[str, Any]:
        """{"launches": LaunchRecord.to_json() of each launch one call makes (recorded, not run),
        with the host locals around it ("frames"); "shapes": of the entry's positional
        arguments (None where not a tensor)}."""
        reply = self._ask({**_case_fields(problem, case, candidate), "op": "capture"}, timeout)
        return {"launches": reply["launches"], "shapes": reply.get("shapes") or []}

    def analyze(self, problem: Problem, case: Case, candidate: Path | None, timeout: float) -> dict[str, Any]:
        """{"launches": [{"launch", "facts" or "error"}], "work": {"bytes", "declared_bytes",
        "declared_flops"}} of one call, captured without running a kernel."""
        return self._ask({**_case_fields(problem, case, candidate), "op": "analyze"}, timeout)

    def launched(self, problem: Problem, case: Case, candidate: Path | None, timeout: float) -> list[dict]:
        """[{"launch", "facts"}] of the kernels one call actually launched (on a GPU)."""
        return self._ask({**_case_fields(problem, case, candidate), "op": "launched"}, timeout)["launches"]

    def count_flops(self, problem: Problem, case: Case, candidate: Path | None, timeout: float) -> dict[str, Any]:
        """`FlopCount.to_json()` of one call, counted in Triton's interpreter."""
        return self._ask({**_case_fields(problem, case, candidate), "op": "count_flops"}, timeout)["flops"]

    # --- the one place replies are read ---------------------------------------------------
    def _ask(self, req: dict[str, Any], timeout: float, process: WorkerProcess | None = None) -> dict[str, Any]:
        reply = (process or self.process).request(req, timeout)
        if reply.result is None:
            raise ProcessFailed(reply.failure or "crash", reply.error, reply.phase)
        fault = fault_of(reply.result, reply.phase)
        if fault is not None:
            raise fault
        return reply.result

    def _judge(self, problem: Problem, case: Case, candidate: Path | None, seed: int, inputs: list | None,
               outputs: list[dict], timeout: float) -> list[dict[str, Any]]:
        """The referee's comparison of outputs made on the inputs of `seed`, one result per call."""
        req = {"op": "judge", **_fields_of(problem), "case": case.to_json(), "seed": seed, "inputs": inputs,
               "outputs": outputs}
        return self._ask_referee(req, timeout, candidate)["results"]

    def _ask_referee(self, req: dict[str, Any], timeout: float, candidate: Path | None) -> dict[str, Any]:
        """A request to the referee. Its faults are the problem's: no candidate runs there. But
        the referee shares the GPU with the judging process, so running out of memory while a
        candidate is judged is that candidate's doing (it holds the memory)."""
        try:
            return self._ask(req, timeout, self.referee)
        except WorkerFault as fault:
            text = fault.message if not isinstance(fault, ProcessFailed) else fault.error
            if candidate is not None and "out of memory" in text.lower():
                self.process.close()
                raise CandidateFault(Status.OOM, f"the reference ran out of memory beside the candidate: {text}",
                                     fatal=True, phase=fault.phase) from None
            if isinstance(fault, ProcessFailed):
                words = "gave no answer" if fault.failure == "timeout" else "crashed"
                raise ProblemFault(f"the reference process {words} while in {fault.phase or 'loading'} "
                                   f"({fault.error})", fault.phase) from None
            raise


def _problem_fields(path: Path, entry: str | None, specs: list[str] | None) -> dict[str, Any]:
    return {"problem": str(Path(path).resolve()), "entry": entry, "specs": list(specs or [])}


def _fields_of(problem: Problem) -> dict[str, Any]:
    return _problem_fields(problem.path, problem.entry, problem.inputs_specs)


def _case_fields(problem: Problem, case: Case, candidate: Path | None) -> dict[str, Any]:
    return {**_fields_of(problem), "candidate": str(Path(candidate).resolve()) if candidate else None,
            "case": case.to_json()}
