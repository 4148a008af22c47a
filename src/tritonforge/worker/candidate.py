"""Load a candidate file into the worker and call it under guard.

Before import: its syntax, and a scan of its source for reaches into the evaluator. After
import and after each call: that it replaced nothing the evaluator relies on, launched
Triton kernels on the current stream, and returned plain tensors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch

from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule, import_file, signature_of, syntax_error
from tritonforge.worker import compare as cmp
from tritonforge.worker.calls import classify, one_line, sync
from tritonforge.worker.faults import CandidateFault
from tritonforge.worker.source_scan import introspection
from tritonforge.worker.state import WorkerState
from tritonforge.worker.torch_ops import TorchOps


class CandidateCalls(WorkerState):
    def candidate_entry(self, pm: ProblemModule, path: str | None) -> Callable:
        if path is None:
            return pm.entry
        self.phase("load_candidate")
        where = syntax_error(Path(path))
        if where:
            raise CandidateFault(Status.LOAD_ERROR, f"{path} {where}")
        reach = introspection(Path(path).read_text(errors="replace"))
        if reach:
            raise CandidateFault(Status.REJECTED, f"{path} {reach}: a candidate may not reach into the evaluator")
        try:
            module = import_file(Path(path), "candidate")
        except BaseException as e:
            raise CandidateFault(Status.LOAD_ERROR, f"importing {path} raised {one_line(e)}", fatal=True) from None
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"importing the candidate replaced {tampered}", fatal=True)
        entry = getattr(module, pm.entry_name, None)
        if not callable(entry):
            raise CandidateFault(Status.INCOMPATIBLE, f"{path} has no function '{pm.entry_name}'")
        want, got = signature_of(pm.entry), signature_of(entry)
        if [(p.name, p.kind) for p in want] != [(p.name, p.kind) for p in got]:
            raise CandidateFault(
                Status.INCOMPATIBLE,
                f"{pm.entry_name}({_params(got)}) differs from the problem's {pm.entry_name}({_params(want)})",
            )
        return entry

    def call_candidate(self, fn: Callable, args: tuple, watch: bool = False) -> Any:
        """Call a candidate once; `watch`: note the torch operations it runs (self.candidate_ops)."""
        self.launches.reset()
        stream = self.timed_stream()
        ops = TorchOps(self.launches, stream)
        try:
            if watch:
                with ops:
                    out = fn(*args)
            else:
                out = fn(*args)
            sync(self.device)
        except Exception as e:
            raise classify(e) from None
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"the candidate replaced {tampered}", fatal=True)
        if self.launches.supported and self.launches.count == 0:
            raise CandidateFault(Status.REJECTED, "the entry launched no Triton kernel" + self.launches.why_none())
        if ops.foreign_stream or self.launches.off_stream(stream):
            raise CandidateFault(Status.REJECTED, "the entry ran work on another CUDA stream than the "
                                                  "current one, where the evaluator's events cannot see it")
        subclass = next((type(t).__name__ for t in cmp.tensors(out) if type(t) is not torch.Tensor), None)
        if subclass:
            raise CandidateFault(Status.REJECTED, f"the entry returned a {subclass}, not a plain torch.Tensor")
        if watch:
            self.candidate_ops |= ops.ops
        return out


def _params(params: list) -> str:
    return ", ".join(p.name for p in params)
