"""Count Triton kernel launches in the worker, so that an entry that launches none is caught.

Wraps `JITFunction.run` (compiled kernels, autotuned ones included) and the interpreter's
`InterpretedFunction.run` at class level; both exist in every Triton this project supports.
It also notes the CUDA stream of each launch: work on another stream than the one the
evaluator times would escape its events.
"""

from __future__ import annotations

from typing import Any, Callable

from tritonforge import triton_hooks


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
        self.depth = 0  # > 0 while a launch is in progress
        self.streams: set[int] = set()
        self.failures: list[str] = []  # launches since the last reset that raised
        jit = triton_hooks.jit_function()
        self.supported = jit is not None
        for cls in (jit, triton_hooks.interpreted_function()):
            run = getattr(cls, "run", None)
            if run is not None and not getattr(run, "_tf_counted", False):
                triton_hooks.wrap(cls, "run", self.on_run)  # for the life of the process
                cls.run._tf_counted = True  # type: ignore[attr-defined]

    def on_run(self, original: Callable, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        self.depth += 1
        try:
            out = original(kernel, *args, **kwargs)
        except Exception as e:
            # An entry that catches its kernel's error and carries on without it (a torch
            # fallback) launched nothing: counted as such, with the error kept to say why.
            self.failures.append(f"{_kernel_name(kernel)} raised {type(e).__name__}: {_last_line(e)}")
            raise
        finally:
            self.depth -= 1
        if not kwargs.get("warmup", False):
            self.count += 1
            stream = current_stream()
            if stream is not None:
                self.streams.add(stream)
        return out

    def why_none(self) -> str:
        """What to add to "launched no Triton kernel": the launches that raised, if any."""
        if not self.failures:
            return ""
        return f" (its launch of {self.failures[0]}; the entry caught the error and went on without the kernel)"

    def off_stream(self, stream: int | None) -> bool:
        """Whether a launch since the last reset went to another stream than `stream` (None: no CUDA)."""
        return stream is not None and bool(self.streams - {stream})

    def reset(self) -> None:
        self.count = 0
        self.streams.clear()
        self.failures.clear()


def _kernel_name(kernel: Any) -> str:
    fn = getattr(kernel, "fn", kernel)
    return getattr(fn, "__name__", type(kernel).__name__)


def _last_line(e: Exception) -> str:
    """The line of an error message that says what went wrong (Triton puts it last)."""
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else "(no message)"


def current_stream() -> int | None:
    """The current CUDA stream's handle, or None where CUDA is not in use."""
    import torch

    if not torch.cuda.is_initialized():
        return None
    return torch.cuda.current_stream().cuda_stream
