"""The program Nsight Compute runs: one profiled call of a problem's entry on one case.

    python -m tritonforge.profiling.ncu.target <target.json | inline JSON>

The JSON is a `ProfileTarget` plus "result": a path where this script writes
{"ok": true, "launches": N, "kernels": [names]} (or {"ok": false, "error": "..."}).
It calls the entry `warmup` times (compiling and autotuning happen there), then once
more between cudaProfilerStart and cudaProfilerStop, so that under
`ncu --profile-from-start off` only the launches of that last call are profiled.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from tritonforge import triton_hooks
from tritonforge.profiling.profiler import ProfileTarget


class KernelRecorder:
    """Names of the Triton kernels launched, in order (wraps JITFunction.run for the process's life)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        jit = triton_hooks.jit_function()
        if jit is None:
            raise ImportError("triton.runtime.jit.JITFunction is not available")
        triton_hooks.wrap(jit, "run", self.on_run)

    def on_run(self, original: Callable, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if not kwargs.get("warmup", False):  # warmup=True compiles without launching
            self.names.append(getattr(kernel, "__name__", None) or "?")
        return original(kernel, *args, **kwargs)

    def reset(self) -> None:
        self.names = []


def load_config(arg: str) -> dict[str, Any]:
    text = arg if arg.lstrip().startswith("{") else Path(arg).read_text()
    return json.loads(text)


def entry_of(target: ProfileTarget) -> tuple[Callable, tuple]:
    """The function to profile and fresh CUDA arguments for the target's case."""
    from tritonforge.problem.module import ProblemModule, import_file
    from tritonforge.problem.spec import Case

    pm = ProblemModule(Path(target.problem), target.entry, target.specs or None)
    fn = pm.entry
    if target.candidate:
        module = import_file(Path(target.candidate), "candidate")
        fn = getattr(module, pm.entry_name, None)
        if not callable(fn):
            raise RuntimeError(f"{target.candidate} has no function '{pm.entry_name}'")
    spec = target.spec or (target.specs[0] if target.specs else None)
    case = Case(params=dict(target.params), spec=spec)
    return fn, pm.make_args(case, target.seed, "cuda")


def profile_once(target: ProfileTarget) -> dict[str, Any]:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device visible to the profiled process")
    recorder = KernelRecorder()
    fn, args = entry_of(target)
    for _ in range(max(1, target.warmup)):  # at least one: compiling must not be profiled
        fn(*args)
    torch.cuda.synchronize()
    recorder.reset()
    torch.cuda.profiler.start()
    try:
        fn(*args)
        torch.cuda.synchronize()
    finally:
        torch.cuda.profiler.stop()
    return {"ok": True, "launches": len(recorder.names), "kernels": list(dict.fromkeys(recorder.names))}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tritonforge.profiling.ncu.target <target.json | JSON>", file=sys.stderr)
        return 2
    config = load_config(argv[1])
    result_path = config.pop("result", None)
    try:
        result = profile_once(ProfileTarget.from_json(config))
        code = 0
    except BaseException as e:  # the parent needs one line whatever went wrong
        traceback.print_exc()
        result, code = {"ok": False, "error": _one_line(e)}, 1
    if result_path:
        Path(result_path).write_text(json.dumps(result))
    print("tritonforge-ncu-target " + json.dumps(result), flush=True)
    return code


def _one_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


if __name__ == "__main__":
    sys.exit(main(sys.argv))
