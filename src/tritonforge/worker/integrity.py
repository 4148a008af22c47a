"""Notice when user code replaces what the evaluator relies on.

The worker takes a snapshot of these attributes before importing any problem or
candidate; a candidate whose import or call leaves any of them changed is refused.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

# (module, dotted attribute) pairs whose identity must not change.
WATCHED: list[tuple[str, str]] = [
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("time", "time"), ("time", "monotonic"),
    ("torch", "cuda.Event"), ("torch", "cuda.Event.record"), ("torch", "cuda.Event.elapsed_time"),
    ("torch", "cuda.Event.synchronize"), ("torch", "cuda.synchronize"), ("torch", "cuda.current_stream"),
    ("torch", "cuda.Stream"), ("torch", "allclose"), ("torch", "equal"), ("torch", "isfinite"),
    ("torch", "Tensor.to"), ("torch", "Tensor.clone"), ("torch", "Tensor.__eq__"), ("torch", "Tensor.sub"),
    ("torch", "Tensor.abs"), ("torch", "Tensor.untyped_storage"), ("torch", "Tensor.data_ptr"),
    ("triton.runtime.jit", "JITFunction.run"), ("triton.testing", "do_bench"),
    ("tritonforge.worker.timing", "measure"), ("tritonforge.worker.timing", "_measure_cuda"),
    ("tritonforge.worker.timing", "_Event"), ("tritonforge.worker.timing", "_synchronize"),
    ("tritonforge.worker.timing", "_elapsed"), ("tritonforge.worker.timing", "_perf_counter"),
    ("tritonforge.worker.compare", "compare"), ("tritonforge.worker.compare", "_compare_tensors"),
    ("tritonforge.worker.compare", "aliasing"), ("tritonforge.worker.compare", "mutated"),
    ("tritonforge.worker.compare", "snapshot"), ("tritonforge.worker.compare", "same_bits"),
    ("tritonforge.worker.compare", "_loose"), ("tritonforge.worker.compare", "as_written"),
    ("tritonforge.worker.compare", "same_view"), ("tritonforge.worker.timing", "_measure_cpu"),
    ("tritonforge.worker.timing", "_picked"), ("tritonforge.worker.timing", "_secret"),
    ("tritonforge.worker.torch_ops", "TorchOps"), ("tritonforge.worker.torch_ops", "GLUE"),
    ("tritonforge.worker.launches", "LaunchCounter.reset"), ("tritonforge.worker.launches", "current_stream"),
    ("tritonforge.worker.main", "Worker.call_candidate"), ("tritonforge.worker.main", "Worker.op_check"),
    ("tritonforge.worker.main", "Worker.op_time"), ("tritonforge.worker.main", "Worker.guarded"),
    ("tritonforge.worker.main", "Worker.verify_timed"), ("tritonforge.worker.main", "Worker.candidate_entry"),
]


def _resolve(module: str, dotted: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


# Namespaces watched whole: a reference computed in this process runs through them, so a
# candidate that swaps any of their functions (torch.Tensor.__add__, torch.softmax...) would
# change the answer it is judged against.
NAMESPACES: list[tuple[str, str]] = [("torch", "Tensor"), ("torch", ""), ("torch.nn.functional", ""),
                                     ("torch", "cuda"), ("torch", "_C.TensorBase")]


def _members(module: str, dotted: str) -> dict[str, int]:
    obj = _resolve(module, dotted) if dotted else importlib.import_module(module)
    # Public functions, classes and operators only: torch rebinds private state as it goes
    # (CUDA's lazy init sets torch.cuda._initialized, caches device properties...), and
    # submodules appear as attributes whenever torch imports one lazily.
    return {k: id(v) for k, v in vars(obj).items()
            if callable(v) and not isinstance(v, types.ModuleType) and (k.startswith("__") or not k.startswith("_"))}


def _mode_stacks() -> tuple[int, int]:
    """Torch function and dispatch modes left active (a candidate's mode would see every op)."""
    import torch

    fn = getattr(torch._C, "_len_torch_function_stack", lambda: 0)
    dispatch = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
    return fn(), dispatch()


class Integrity:
    def __init__(self, watched: list[tuple[str, str]] = WATCHED) -> None:
        self.members = {f"{m}.{d}".rstrip("."): _members(m, d) for m, d in NAMESPACES}
        self.modes = _mode_stacks()
        self.expected: dict[str, Any] = {}
        for module, dotted in watched:
            try:
                self.expected[f"{module}.{dotted}"] = (module, dotted, _resolve(module, dotted))
            except (ImportError, AttributeError):
                continue  # not in this version of the library

    def violations(self) -> list[str]:
        bad = []
        for name, (module, dotted, value) in self.expected.items():
            try:
                now = _resolve(module, dotted)
            except (ImportError, AttributeError):
                bad.append(name)
                continue
            if now is not value:
                bad.append(name)
        for (module, dotted), (name, before) in zip(NAMESPACES, self.members.items()):
            now = _members(module, dotted)
            changed = [k for k in before.keys() | now.keys() if before.get(k) != now.get(k)]
            bad += [f"{name}.{k}" for k in sorted(changed)[:3]]
        if _mode_stacks() != self.modes:
            bad.append("a torch function or dispatch mode left active")
        return bad
