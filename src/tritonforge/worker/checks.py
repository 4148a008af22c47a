"""Check a candidate's outputs against the problem's reference (the "prepare" and "check" requests).

The problem's own checks run first, in a process no candidate has touched: repeatable
inputs and a deterministic reference. A reference that fails later, with a candidate
loaded, is then the candidate's fault. A candidate that computes with torch instead of
Triton kernels, aliases its inputs, or writes arguments it does not own is refused.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from tritonforge import triton_hooks
from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule
from tritonforge.problem.spec import Case, ProblemError
from tritonforge.worker import compare as cmp
from tritonforge.worker.calls import one_line, poison, same, sync, with_outputs, written_args
from tritonforge.worker.candidate import CandidateCalls
from tritonforge.worker.faults import CandidateFault
from tritonforge.worker.torch_ops import TorchOps, computing


class Checks(CandidateCalls):
    def op_prepare(self, req: dict[str, Any]) -> dict[str, Any]:
        """The problem's own checks on every case, before any candidate is imported here.

        Repeatable inputs and a deterministic reference, seen in a process no candidate has
        touched: a reference that fails later, with a candidate loaded, is then its fault.
        """
        pm = self.problem(req)
        reference = pm.reference or pm.entry
        for raw in req["cases"]:
            case = Case.from_json(raw)
            key = (req["problem"], case.label)
            self.phase("make_inputs")
            args = pm.make_args(case, req["seed"], self.device)
            self.check_repeatable_inputs(pm, case, req["seed"], args, key)
            self.phase("reference")
            pristine = cmp.snapshot(args)
            poison(self.call_reference(pm, reference, args, case, key, pristine))
        return {"prepared": len(req["cases"])}

    def op_check(self, req: dict[str, Any]) -> dict[str, Any]:
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        candidate = self.candidate_entry(pm, req.get("candidate"))
        reference = pm.reference or pm.entry
        key = (req["problem"], case.label)
        result = {"status": Status.CORRECT.value, "message": "", "max_abs_err": 0.0, "max_rel_err": 0.0}
        fingerprints = []
        for draw, seed in enumerate(req["seeds"]):
            self.phase("make_inputs")
            args = pm.make_args(case, seed, self.device)
            self.candidate_ops = set()  # the torch operations this draw's calls ran
            fingerprints.append(check_inputs(pm, args, seed))
            if draw == 0:
                self.check_repeatable_inputs(pm, case, seed, args, key)
            before = cmp.snapshot(args)
            ref_args = tuple(cmp.snapshot(args))
            watch = bool(req.get("candidate"))  # the problem's own entry may compute with torch
            self.phase("candidate")
            outs = self.judged_calls(candidate, args, before, watch)
            self.phase("checks")
            if watch:
                self.refuse_torch_compute(pm, key, before)
            for out, call_args, _ in outs:  # an out= argument returned is that output, not an alias
                problem = cmp.aliasing(cmp.as_written(out, written_args(call_args, pm)),
                                       [a for a in call_args if isinstance(a, torch.Tensor)], "input")
                if problem:
                    raise CandidateFault(Status.REJECTED, problem)
            problem = cmp.mutated(args, before, pm.param_names, set(pm.outputs))
            if problem:
                raise CandidateFault(Status.WRONG, problem)
            self.phase("reference")
            try:
                want = self.call_reference(pm, reference, ref_args, case, key, before)
            except ProblemError as e:
                if not (req.get("candidate") and key in self.deterministic):
                    raise
                # The reference passed its checks here before this candidate was imported.
                raise CandidateFault(Status.ERROR, f"the reference failed once the candidate was loaded: "
                                                   f"{e.what}", fatal=True) from None
            self.phase("checks")
            want = with_outputs(want, ref_args, pm)
            for out, call_args, which in outs:
                got = with_outputs(out, call_args, pm)
                problem = cmp.aliasing(got, cmp.tensors(want), "the reference's output")
                if problem:
                    raise CandidateFault(Status.REJECTED, problem)
                c = cmp.compare(got, want, pm.tolerance)
                result["max_abs_err"] = max(result["max_abs_err"], c.max_abs_err)
                result["max_rel_err"] = max(result["max_rel_err"], c.max_rel_err)
                result["draws"] = draw + 1
                if not c.ok:
                    poison(want)
                    result.update(status=Status.WRONG.value, message=f"draw {draw + 1} (seed {seed}{which}): {c.message}")
                    return result
            poison(want)  # so a later call cannot find the right answer in freed memory
        if len(fingerprints) > 1 and len(set(fingerprints)) == 1 and fingerprints[0]:
            raise ProblemError(pm.path, f"make_inputs returns the same inputs for every seed ({case.label})")
        return result

    def judged_calls(self, candidate: Callable, args: tuple, before: list[Any],
                     watch: bool) -> list[tuple[Any, tuple, str]]:
        """The calls judged on one draw: (returned, its arguments, which call, for messages).

        The first call on `args`; on a GPU more on the same inputs, since a racy kernel is
        right only some of the time; in the interpreter one more per autotune config the
        first did not run, so that a wrong config cannot hide behind the one the tuner picks.
        """
        with triton_hooks.autotune_runs() as tuned:
            outs = [(self.call_candidate(candidate, args, watch), args, "")]
        for call in range(1, self.repeats):
            again = tuple(cmp.snapshot(before))
            outs.append((self.call_candidate(candidate, again, watch), again,
                         f", call {call + 1} of {self.repeats} on the same inputs"))
        for pin in tuned.untried() if self.device == "cpu" else []:
            again = tuple(cmp.snapshot(before))
            with triton_hooks.autotune_runs(pin) as pinned:
                outs.append((self.call_candidate(candidate, again, watch), again, f", with {pinned.describe()}"))
        return outs

    def check_repeatable_inputs(self, pm: ProblemModule, case: Case, seed: int, args: tuple, key: tuple) -> None:
        """The same seed must give the same inputs: timed outputs are checked on regenerated ones."""
        if key in self.repeatable:
            return
        again = pm.make_args(case, seed, self.device)
        if any(not same(a, b) for a, b in zip(args, again)):
            raise ProblemError(pm.path, f"make_inputs(seed={seed}, {case.label}) gives different inputs for the "
                                        "same seed; draw them from a torch.Generator seeded with `seed`")
        self.repeatable.add(key)

    def call_reference(self, pm: ProblemModule, reference: Callable, ref_args: tuple, case: Case, key: tuple,
                       pristine: list[Any]) -> Any:
        """The reference's answer; the first time per case, also that a second call agrees."""
        what = "reference" if pm.reference else f"entry '{pm.entry_name}'"
        try:
            want = reference(*ref_args)
            sync(self.device)
            if key in self.deterministic:
                return want
            second = tuple(cmp.snapshot(pristine))
            again = with_outputs(reference(*second), second, pm)
            sync(self.device)
        except Exception as e:
            raise ProblemError(pm.path, f"{what} raised {one_line(e)} on {case.label}") from None
        c = cmp.compare(again, with_outputs(want, ref_args, pm), pm.tolerance)
        if not c.ok:
            raise ProblemError(pm.path, f"{what} is not deterministic on {case.label}: two calls on the same "
                                        f"inputs differ ({c.message})")
        self.deterministic.add(key)
        return want

    def refuse_torch_compute(self, pm: ProblemModule, key: tuple, pristine: list[Any]) -> None:
        """Refuse a candidate that ran torch operations beyond glue and its problem's own entry's."""
        if not computing(self.candidate_ops):
            return
        computed = computing(self.candidate_ops, self.ops_of_entry(pm, key, pristine))
        if computed:
            raise CandidateFault(Status.REJECTED, f"the entry computes with torch ({', '.join(computed[:4])}), "
                                                  "not only with Triton kernels")

    def ops_of_entry(self, pm: ProblemModule, key: tuple, pristine: list[Any]) -> set[str]:
        """The torch operations the problem's own entry runs: a candidate may run them too."""
        if key not in self.entry_ops:
            self.phase("entry")
            ops = TorchOps(self.launches, self.timed_stream())
            with ops:
                out = pm.entry(*cmp.snapshot(pristine))
            sync(self.device)
            poison(out)  # a later candidate must not find this answer in freed memory
            self.entry_ops[key] = ops.ops
        return self.entry_ops[key]


def check_inputs(pm: ProblemModule, args: tuple, seed: int) -> tuple:
    """Refuse inputs that would hide bugs: constant floating-point tensors."""
    if len(args) != len(pm.param_names):
        raise ProblemError(pm.path, f"make_inputs returned {len(args)} values; {pm.entry_name} takes "
                                    f"{len(pm.param_names)} ({', '.join(pm.param_names)})")
    prints = []
    for name, a in zip(pm.param_names, args):
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() > 1:
            if name in pm.outputs:
                continue
            flat = a.detach().reshape(-1)
            if bool((flat == flat[0]).all()):
                raise ProblemError(pm.path, f"make_inputs(seed={seed}) returned a constant tensor for '{name}';"
                                            " inputs must be random")
            prints.append(float(flat[:4096].double().sum()))
    return tuple(prints)
