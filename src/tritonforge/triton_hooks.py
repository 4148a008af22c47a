"""Every patch TritonForge applies to Triton, and the classes they reach.

Four places intercept Triton's launch path: the worker counts launches
(worker/launches.py), launch capture records them (analysis/launch_capture.py), FLOP
counting samples them in the interpreter (analysis/opcount.py), and the Nsight Compute
target names them (profiling/ncu_target.py). They find the classes here and wrap and
restore methods the same way. `Heuristics.run` reaches its kernel through `fn.run`, so
wrapping `run` covers heuristics-decorated kernels too.

The interpreter fix for numpy 2 (Triton < 3.7) lives here as well. Imports no tritonforge
folder, so any stage may use it.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

# handler(original, obj, args, kwargs): what a wrapped method calls instead of the original.
Handler = Callable[[Callable, Any, tuple, dict], Any]


# --- the classes of the launch path --------------------------------------------------------
def jit_function() -> type | None:
    """Compiled kernels: `JITFunction.run` launches (and, with warmup=True, only compiles)."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None
    return JITFunction


def interpreted_function() -> type | None:
    """Kernels under TRITON_INTERPRET=1."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return InterpretedFunction


def autotuner() -> type | None:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return None
    return Autotuner


def interpreted_run_is_per_instance() -> bool:
    """Triton 3.3 sets the interpreter's `run` per instance, and kernel[grid] bypasses it."""
    cls = interpreted_function()
    return cls is not None and "run" not in cls.__dict__


# --- wrapping and restoring ------------------------------------------------------------------
def wrap(cls: type, attr: str, handler: Handler) -> Callable[[], None]:
    """Route `cls.attr(obj, *a, **kw)` to `handler(original, obj, a, kw)`; returns the undo."""
    original = getattr(cls, attr)

    @functools.wraps(original)
    def wrapper(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return handler(original, obj, args, kwargs)

    return replace(cls, attr, wrapper)


def replace(owner: Any, name: str, value: Any) -> Callable[[], None]:
    """Set owner.name to `value`; returns the undo, which puts back exactly what was there."""
    had_own = name in vars(owner)
    old = vars(owner).get(name)
    setattr(owner, name, value)

    def undo() -> None:
        if had_own:
            setattr(owner, name, old)
        else:
            delattr(owner, name)

    return undo


@contextlib.contextmanager
def wrapped(cls: type, attr: str, handler: Handler) -> Iterator[None]:
    """`wrap` until the block exits, even when it raises."""
    undo = wrap(cls, attr, handler)
    try:
        yield
    finally:
        undo()


# --- Triton 3.6's interpreter under numpy 2 ------------------------------------------------
# Triton (< 3.7) converts a scalar kernel argument to a Python int with `int(array)`, and
# its scalars are 1-element arrays, which numpy 2 refuses ("only 0-dimensional arrays can be
# converted to Python scalars"), so `for k in range(0, K, BLOCK)` fails. The H200 image pairs
# Triton 3.6 with numpy 2.5, and counting FLOPs there needs the interpreter. This wraps the
# interpreter's own patch so that its `__index__` takes the single element instead.
def interpreter_compat_needed() -> bool:
    import numpy
    import triton

    major, minor = (int(x) for x in triton.__version__.split(".")[:2])
    return (major, minor) < (3, 7) and int(numpy.__version__.split(".")[0]) >= 2


def install_interpreter_compat() -> bool:
    """Install the fix where it is needed and possible; True when installed."""
    if not interpreter_compat_needed():
        return False
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_tf_compat", False):
        return False

    def index(self: Any) -> int:
        return int(self.handle.data.reshape(-1)[0])

    def patch_lang_tensor(tensor: Any, scope: Any) -> None:
        real = scope.set_attr

        def set_attr(obj: Any, name: str, value: Any) -> None:
            real(obj, name, index if name == "__index__" else value)

        scope.set_attr = set_attr
        try:
            original(tensor, scope)
        finally:
            del scope.set_attr

    patch_lang_tensor._tf_compat = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patch_lang_tensor
    return True
