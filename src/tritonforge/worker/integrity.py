"""Notice when user code replaces what the evaluator relies on.

The worker takes a snapshot of these attributes before importing any problem or
candidate; a candidate whose import or call leaves any of them changed is refused. The
snapshot also holds the code of every function of the worker's own modules (a function
keeps its identity when its `__code__` is swapped) and the process's hooks that would let
code run later, unseen: threads, trace and profile functions, monitoring tools.
"""

from __future__ import annotations

import importlib
import sys
import threading
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


def _functions(prefix: str = "tritonforge") -> dict[str, tuple]:
    """Each function of the loaded `prefix` modules (and of their classes), by qualified name:
    the identity of its code, defaults and closure, which a swap in place would change."""
    found: dict[str, tuple] = {}
    for name, module in list(sys.modules.items()):
        if not (name == prefix or name.startswith(prefix + ".")) or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != name:
                continue
            members = vars(value).items() if isinstance(value, type) else [(attr, value)]
            for member, fn in members:
                fn = getattr(fn, "__func__", fn)  # staticmethod, classmethod
                fn = getattr(fn, "fget", fn)  # property
                if isinstance(fn, types.FunctionType):
                    found[f"{name}.{attr}" + ("" if fn is value else f".{member}")] = (
                        id(fn.__code__), id(fn.__defaults__), id(fn.__kwdefaults__), id(fn.__closure__))
    return found


def _hooks() -> tuple:
    """What would let code run later without being called: threads, tracing, monitoring."""
    monitoring = getattr(sys, "monitoring", None)
    tools = tuple(monitoring.get_tool(i) for i in range(6)) if monitoring else ()
    return (threading.active_count(), sys.gettrace(), sys.getprofile(), threading.gettrace(),
            threading.getprofile(), tools)


class Integrity:
    def __init__(self, watched: list[tuple[str, str]] = WATCHED) -> None:
        self.members = {f"{m}.{d}".rstrip("."): _members(m, d) for m, d in NAMESPACES}
        self.modes = _mode_stacks()
        self.functions = _functions()
        self.hooks = _hooks()
        self.held: list[tuple[str, Any, str, Any, int]] = []  # (label, holder, attribute, value, code id)

        self.expected: dict[str, Any] = {}
        for module, dotted in watched:
            try:
                self.expected[f"{module}.{dotted}"] = (module, dotted, _resolve(module, dotted))
            except (ImportError, AttributeError):
                continue  # not in this version of the library

    def hold(self, label: str, holder: Any, attributes: list[str]) -> None:
        """Watch `holder`'s functions (a loaded problem's entry, reference, make_inputs) too."""
        for attr in attributes:
            fn = getattr(holder, attr, None)
            if fn is not None:
                self.held.append((f"{attr} of {label}", holder, attr, fn, id(getattr(fn, "__code__", None))))

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
        bad += list(dict.fromkeys(label for label, holder, attr, fn, code in self.held
                                  if getattr(holder, attr, None) is not fn
                                  or id(getattr(fn, "__code__", None)) != code))[:3]
        now = _functions()
        bad += [f"the code of {k}" for k, v in self.functions.items() if now.get(k, v) != v][:3]
        if _hooks() != self.hooks:
            bad.append("a thread, trace, profile or monitoring hook left behind")
        return bad
