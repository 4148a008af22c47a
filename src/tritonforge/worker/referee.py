"""The referee: a worker process that never imports a candidate ("prepare" and "judge" requests).

It runs the problem's own checks, computes the reference on inputs it makes itself from
the seed, and compares the outputs the judging worker hands over (see handoff.py). Code in
the candidate's process can therefore neither bend the reference nor the comparison, nor
find the expected answer there: it never exists in that process.
"""

from __future__ import annotations

from typing import Any, Callable

from tritonforge.problem.module import ProblemModule
from tritonforge.problem.spec import Case, ProblemError
from tritonforge.worker import compare as cmp
from tritonforge.worker import handoff
from tritonforge.worker.checks import check_inputs
from tritonforge.worker.calls import fingerprint, one_line, sync, with_outputs
from tritonforge.worker.state import WorkerState


class Referee(WorkerState):
    def op_prepare(self, req: dict[str, Any]) -> dict[str, Any]:
        """The problem's own checks on every case: repeatable inputs; in the referee, a
        deterministic reference too. Run before any candidate is judged."""
        pm = self.problem(req)
        for raw in req["cases"]:
            case = Case.from_json(raw)
            key = (req["problem"], case.label)
            self.phase("make_inputs")
            args = pm.make_args(case, req["seed"], self.device)
            check_inputs(pm, args, req["seed"])
            self.check_repeatable_inputs(pm, case, req["seed"], args, key)
            if self.role == "referee":
                self.phase("reference")
                self.call_reference(pm, args, case, key)
        return {"prepared": len(req["cases"])}

    def op_judge(self, req: dict[str, Any]) -> dict[str, Any]:
        """Compare the outputs of one or more calls on the inputs of `seed` with the reference's.

        req["inputs"] is the judging worker's fingerprint of those inputs: both processes
        must have made the same ones.
        """
        self.refuse_outside_referee("judge")
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        seed = int(req["seed"])
        self.phase("make_inputs")
        args = pm.make_args(case, seed, self.device)
        if req.get("inputs") is not None and not _same_print(fingerprint(args), req["inputs"]):
            raise ProblemError(pm.path, f"make_inputs(seed={seed}, {case.label}) gives different inputs in two "
                                        "processes; draw them from a torch.Generator seeded with `seed`")
        self.phase("reference")
        want = self.call_reference(pm, args, case, (req["problem"], case.label))
        self.phase("compare")
        results = []
        for pkg in req["outputs"]:
            try:
                shape, leaves = handoff.unpack(pkg, self.device)
            except handoff.HandoffError as e:
                results.append({"ok": False, "message": f"its outputs could not be read: {e}"})
                continue
            c = cmp.compare_leaves(shape, leaves, want, pm.tolerance)
            results.append({"ok": c.ok, "message": c.message, "max_abs_err": c.max_abs_err,
                            "max_rel_err": c.max_rel_err})
            del leaves
        sync(self.device)
        return {"results": results}

    def call_reference(self, pm: ProblemModule, args: tuple, case: Case, key: tuple) -> Any:
        """The reference's answer with the arguments it writes; the first time per case, also
        that a second call on the same inputs agrees."""
        reference: Callable = pm.reference or pm.entry
        what = "reference" if pm.reference else f"entry '{pm.entry_name}'"
        pristine = cmp.snapshot(args)
        try:
            want = with_outputs(reference(*args), args, pm)
            sync(self.device)
            if key in self.deterministic:
                return want
            second = tuple(cmp.snapshot(pristine))
            again = with_outputs(reference(*second), second, pm)
            sync(self.device)
        except Exception as e:
            raise ProblemError(pm.path, f"{what} raised {one_line(e)} on {case.label}") from None
        c = cmp.compare(again, want, pm.tolerance)
        if not c.ok:
            raise ProblemError(pm.path, f"{what} is not deterministic on {case.label}: two calls on the same "
                                        f"inputs differ ({c.message})")
        self.deterministic.add(key)
        return want

    def refuse_outside_referee(self, op: str) -> None:
        if self.role != "referee":
            raise RuntimeError(f"'{op}' is the referee's request; this worker judges candidates")


def _same_print(a: list, b: Any) -> bool:
    if not isinstance(b, list) or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) and isinstance(y, (int, float)):
            if not (x == y or abs(x - y) <= 1e-9 * max(abs(x), abs(y))):
                return False
        elif x != y:
            return False
    return True

