"""What one call of user code produced, and how a failed call is judged.

Shared by the request handlers: the outputs of a call (its return value plus the arguments
it is declared to write), the verdict for an exception it raised, and the small acts done
around every call (synchronize, compare inputs, poison answers once read).
"""

from __future__ import annotations

from typing import Any

import torch

from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule, out_of_memory
from tritonforge.worker import compare as cmp
from tritonforge.worker import timing
from tritonforge.worker.faults import CandidateFault
from tritonforge.worker.gpu_only import needs_gpu_note


def with_outputs(returned: Any, args: tuple, pm: ProblemModule) -> Any:
    """What a call produced: its return value plus the arguments it is declared to write.

    A returned tensor that is one of those arguments (out= style) is marked as it, so it is
    judged once, as that argument.
    """
    if not pm.outputs:
        return returned
    written = written_args(args, pm)
    return {"returned": cmp.as_written(returned, written), "written": written}


def written_args(args: tuple, pm: ProblemModule) -> dict[str, Any]:
    """The arguments the problem declares in OUTPUTS, by name."""
    return {n: a for n, a in zip(pm.param_names, args) if n in pm.outputs}


def classify(e: BaseException) -> CandidateFault:
    text = one_line(e)
    name = type(e).__name__
    if out_of_memory(e):
        return CandidateFault(Status.OOM, text, fatal=True)
    if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources", "PTXASError") or \
            type(e).__module__.startswith("triton.compiler"):
        return CandidateFault(Status.COMPILE_ERROR, text, fatal=True)
    lowered = text.lower()
    if any(s in lowered for s in ("cuda error", "illegal memory", "device-side assert", "cuda_error",
                                  "unspecified launch failure", "illegal instruction")):
        return CandidateFault(Status.CRASH, text, fatal=True)
    return CandidateFault(Status.ERROR, text + needs_gpu_note(e), fatal=True)


def sync(device: str) -> None:
    if device != "cpu":
        timing._synchronize()


def same(a: Any, b: Any) -> bool:
    """Equal arguments: tensors bit for bit (NaN matching NaN), other values by ==."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and cmp.same_bits(a, b))
    try:
        return bool(a == b)
    except Exception:  # objects without a usable ==: nothing to compare
        return True


def poison(obj: Any) -> None:
    for t in cmp.tensors(obj):
        if t.is_floating_point():
            t.fill_(float("nan"))


def one_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    # Triton's compile errors put the useful line last.
    text = lines[-1] if lines and type(e).__name__ == "CompilationError" else (lines[0] if lines else "")
    return f"{type(e).__name__}: {text.strip()}" if text else type(e).__name__


def fingerprint(args: tuple) -> list[Any]:
    """A cheap print of a call's inputs (JSON), to tell that two processes made the same ones."""
    out: list[Any] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            t = torch.view_as_real(a.detach()) if a.is_complex() else a.detach()
            d = t.double().nan_to_num(0.0, 0.0, 0.0)
            out += [f"{t.dtype}{tuple(t.shape)}", float(d.sum()), float(d.abs().sum())]
        else:
            out.append(repr(a)[:200])
    return out
