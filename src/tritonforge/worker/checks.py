"""Run a candidate on one draw of inputs and check what its calls did (the "check" request).

A candidate that computes with torch instead of Triton kernels, aliases its inputs, or
writes arguments it does not own is refused here; its outputs go to the referee (a
process no candidate has touched), which compares them with the reference.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from tritonforge import triton_hooks
from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule
from tritonforge.problem.spec import Case, ProblemError
from tritonforge.worker import compare as cmp
from tritonforge.worker.calls import fingerprint, poison, sync, with_outputs, written_args
from tritonforge.worker.candidate import CandidateCalls
from tritonforge.worker.faults import CandidateFault
from tritonforge.worker.torch_ops import TorchOps, computing


class Checks(CandidateCalls):
    def op_check(self, req: dict[str, Any]) -> dict[str, Any]:
        """Run the candidate on the inputs of one seed and hand its outputs to the referee.

        Checked here: what the calls did (kernels launched, torch used, inputs written,
        memory shared); the outputs are compared in the referee, where the reference is.
        Reply: {"inputs": a fingerprint of the inputs, "outputs": [package per call], "calls": [...]}.
        """
        self.outbox.clear()
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        candidate = self.candidate_entry(pm, req.get("candidate"))
        key = (req["problem"], case.label)
        seed = int(req["seed"])
        self.phase("make_inputs")
        args = pm.make_args(case, seed, self.device)
        self.candidate_ops = set()  # the torch operations this draw's calls ran
        varying = check_inputs(pm, args, seed)
        if req.get("first"):
            self.check_repeatable_inputs(pm, case, seed, args, key)
        prints = fingerprint(args)
        before = cmp.snapshot(args)
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
        packages = [self.outbox.package(with_outputs(out, call_args, pm)) for out, call_args, _ in outs]
        return {"inputs": prints, "varying": varying, "outputs": packages,
                "calls": [which for _, _, which in outs]}

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


def check_inputs(pm: ProblemModule, args: tuple, seed: int) -> list[float]:
    """Refuse inputs that would hide bugs: constant floating-point tensors. Returns a print of
    the floating-point inputs, to tell whether two seeds gave different ones."""
    if not pm.required <= len(args) <= len(pm.param_names):
        takes = str(len(pm.param_names)) if pm.required == len(pm.param_names) else \
            f"{pm.required} to {len(pm.param_names)}"
        raise ProblemError(pm.path, f"make_inputs returned {len(args)} values; {pm.entry_name} takes "
                                    f"{takes} ({', '.join(pm.param_names)})")
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
    return prints
