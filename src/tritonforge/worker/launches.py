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
        jit = triton_hooks.jit_function()
        self.supported = jit is not None
        for cls in (jit, triton_hooks.interpreted_function()):
            run = getattr(cls, "run", None)
            if run is not None and not getattr(run, "_tf_counted", False):
                triton_hooks.wrap(cls, "run", self.on_run)  # for the life of the process
                cls.run._tf_counted = True  # type: ignore[attr-defined]

    def on_run(self, original: Callable, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if not kwargs.get("warmup", False):
            self.count += 1
            stream = current_stream()
            if stream is not None:
                self.streams.add(stream)
        self.depth += 1
        try:
            return original(kernel, *args, **kwargs)
        finally:
            self.depth -= 1

    def off_stream(self, stream: int | None) -> bool:
        """Whether a launch since the last reset went to another stream than `stream` (None: no CUDA)."""
        return stream is not None and bool(self.streams - {stream})

    def reset(self) -> None:
        self.count = 0
        self.streams.clear()


def current_stream() -> int | None:
    """The current CUDA stream's handle, or None where CUDA is not in use."""
    import torch

    if not torch.cuda.is_initialized():
        return None
    return torch.cuda.current_stream().cuda_stream
