"""Count Triton kernel launches in the worker, so that an entry that launches none is caught.

Wraps `JITFunction.run` (compiled kernels, autotuned ones included) and the interpreter's
`InterpretedFunction.run` at class level; both exist in every Triton this project supports.
"""

from __future__ import annotations

import functools
from typing import Any


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
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
            return original(fn_self, *args, **kwargs)

        run._tf_counted = True  # type: ignore[attr-defined]
        cls.run = run

    def reset(self) -> None:
        self.count = 0
