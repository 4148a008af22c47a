"""Count Triton kernel launches in the worker, so that an entry that launches none is caught.

Wraps `JITFunction.run` (compiled kernels, autotuned ones included) and the interpreter's
`InterpretedFunction.run` at class level; both exist in every Triton this project supports.
It also notes the CUDA stream of each launch: work on another stream than the one the
evaluator times would escape its events.
"""

from __future__ import annotations

import functools
from typing import Any


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
        self.depth = 0  # > 0 while a launch is in progress
        self.streams: set[int] = set()
        self.supported = False
        try:
            from triton.runtime.jit import JITFunction
        except ImportError:
            return
        self._wrap(JITFunction)
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:
            pass
        else:
            self._wrap(InterpretedFunction)
        self.supported = True

    def _wrap(self, cls: type) -> None:
        original = cls.run
        if getattr(original, "_tf_counted", False):
            return
        counter = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("warmup", False):
                counter.count += 1
                stream = current_stream()
                if stream is not None:
                    counter.streams.add(stream)
            counter.depth += 1
            try:
                return original(fn_self, *args, **kwargs)
            finally:
                counter.depth -= 1

        run._tf_counted = True  # type: ignore[attr-defined]
        cls.run = run

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
