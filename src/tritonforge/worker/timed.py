"""Time a candidate against the baseline (the "time" request), and hand over what some timed calls returned.

Every timed call of the candidate is guarded (it must launch a Triton kernel, on the timed
stream); a few of them, picked in secret, have their outputs handed to the referee, which
checks them against the reference on the same (regenerated) inputs, so a candidate cannot
behave differently when timed.
"""

from __future__ import annotations

from typing import Any, Callable

from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule
from tritonforge.problem.spec import Case, ProblemError
from tritonforge.worker import timing
from tritonforge.worker.calls import classify, with_outputs
from tritonforge.worker.candidate import CandidateCalls
from tritonforge.worker.faults import CandidateFault

# Timed calls of a candidate whose results are checked, picked at random after the fact: a
# candidate that cheats in more than half of its timed calls (the share that could move a
# median) escapes with probability below 2**-6.
TIMED_CHECKS = 6


class TimedCalls(CandidateCalls):
    def op_time(self, req: dict[str, Any]) -> dict[str, Any]:
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        candidate = self.candidate_entry(pm, req.get("candidate"))
        # The comparison defaults to the problem's own entry; the loop may pit a candidate
        # against the best so far instead.
        against = self.candidate_entry(pm, req["against"]) if req.get("against") else pm.entry
        fns: dict[str, Callable[..., object]] = {"baseline": against}
        if req.get("candidate"):
            fns["candidate"] = self.guarded(candidate, pm)
        if req.get("with_reference") and pm.reference is not None:
            fns["reference"] = pm.reference
        seed = int(req["seed"])

        def inputs(rep: int, fn: int) -> tuple:
            # Fresh inputs every call, made anew for each function (an entry may write its
            # outputs into its arguments): make_inputs is seeded, so the values are the same.
            return pm.make_args(case, seed + 1 + rep, self.device)

        self.outbox.clear()
        self.phase("timing")
        config = timing.TimingConfig(**req.get("config", {}))
        verify = (list(fns).index("candidate"), TIMED_CHECKS) if "candidate" in fns else None
        self.violations = []
        self.launches.reset()
        try:
            m = timing.measure(list(fns.values()), self.device, config, inputs, keep=verify)
        except ProblemError as e:
            if not req.get("candidate"):
                raise
            # make_inputs worked for this case while it was checked: what changed is the
            # candidate, holding memory, say.
            status = Status.OOM if "out of memory" in e.what else Status.ERROR
            raise CandidateFault(status, f"while timed, {e.what}", fatal=True) from None
        except Exception as e:
            raise classify(e) from None
        if self.violations:
            raise CandidateFault(Status.REJECTED, f"while timed, {self.violations[0]}", fatal=True)
        tampered = self.integrity.violations()  # before the evaluator's own code packs what was kept
        if tampered:
            raise CandidateFault(Status.REJECTED, f"while timed, the candidate replaced {tampered}", fatal=True)
        # The calls picked for checking go to the referee, with the seeds of their inputs.
        kept = [{"rep": rep, "seed": seed + 1 + rep, "outputs": self.outbox.package(got)}
                for (_, rep), got in sorted(m.kept.items(), key=lambda kv: kv[0][1])]
        return {"samples": dict(zip(fns, m.samples)), "kept": kept}

    def guarded(self, fn: Callable, pm: ProblemModule) -> Callable[..., object]:
        """`fn`, noting any call that launches no Triton kernel or launches on a side stream.

        It returns what the call produced (with the arguments it writes, for problems that
        declare OUTPUTS), for the timed calls picked for checking.
        """
        launches = self.launches
        stream = self.timed_stream()

        def call(*args: Any) -> object:
            before = launches.count
            out = fn(*args)
            if launches.supported and launches.count == before:
                self.violations.append("a call launched no Triton kernel")
            if launches.off_stream(stream):
                self.violations.append("a kernel was launched on another stream than the timed one")
            return with_outputs(out, args, pm)

        return call
