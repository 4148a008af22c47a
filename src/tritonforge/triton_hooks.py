"""Every patch TritonForge applies to Triton, and the classes they reach.

Four places intercept Triton's launch path: the worker counts launches
(worker/launches.py), launch capture records them (analysis/launch_capture.py), FLOP
counting samples them in the interpreter (analysis/opcount.py), and the Nsight Compute
target names them (profiling/ncu_target.py). They find the classes here and wrap and
restore methods the same way. `Heuristics.run` reaches its kernel through `fn.run`, so
wrapping `run` covers heuristics-decorated kernels too.

The interpreter's own gaps are filled here as well: the fix for numpy 2 (Triton < 3.7), and
a CPU-clock benchmark for `@triton.autotune` (the interpreter has no driver to time on), with
a way to run each autotuner at every config in turn, so that each config's result can be
checked. Imports no tritonforge folder, so any stage may use it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import dataclass, field
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


# --- @triton.autotune under the interpreter --------------------------------------------------
# Triton's Autotuner times each config with `driver.active.get_benchmarker()`, and under
# TRITON_INTERPRET=1 there is no active driver ("0 active drivers"). In the interpreter it
# gets this benchmark instead: it runs the config once, hooks and all, as a GPU tuner would,
# and times it with the CPU clock. Compiled kernels keep Triton's own benchmark.
def cpu_benchmark(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    start = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def _cpu_do_bench(tuner: Any) -> Callable[..., Any]:
    return cpu_benchmark


_cpu_do_bench._tf_cpu = True  # type: ignore[attr-defined]


def install_interpreter_autotune() -> bool:
    """In an interpreter process, time every Autotuner with `cpu_benchmark`; True when installed."""
    cls = autotuner()
    if os.environ.get("TRITON_INTERPRET") != "1" or cls is None or "do_bench" not in vars(cls):
        return False
    current = vars(cls)["do_bench"]
    if getattr(getattr(current, "fget", None), "_tf_cpu", False):
        return False
    # A property, not a cached one: it wins over anything a tuner cached or was given.
    setattr(cls, "do_bench", property(_cpu_do_bench))
    return True


@dataclass
class TunerRun:
    """One call of a multi-config autotuner: the configs it could run (after pruning), the one it ran."""

    kernel: str
    configs: list[Any]
    index: int | None

    def describe(self) -> str:
        if self.index is None:
            return f"{self.kernel}'s autotune config"
        return f"{self.kernel} at autotune config {self.index + 1} of {len(self.configs)} ({self.configs[self.index]})"


class _Pinned(dict):
    """A tuner's cache that holds one config for every key: the tuner runs it, untimed."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.config = config

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> Any:
        return self.config

    def get(self, key: Any, default: Any = None) -> Any:
        return self.config


@dataclass
class AutotuneRuns:
    """The multi-config autotuner calls seen in an `autotune_runs` block."""

    pin: int | None = None
    runs: list[TunerRun] = field(default_factory=list)

    def untried(self) -> list[int]:
        """The pins that would run a config this block's calls did not: every one, over its rounds."""
        width = max((len(r.configs) for r in self.runs), default=0)
        return [p for p in range(width) if not all(r.index == p % len(r.configs) for r in self.runs)]

    def describe(self) -> str:
        said = "; ".join(dict.fromkeys(r.describe() for r in self.runs))
        return said or f"every autotuner pinned to config {(self.pin or 0) + 1}"

    def on_run(self, original: Callable, tuner: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if len(tuner.configs) <= 1:  # Triton runs its only config without tuning
            return original(tuner, *args, **kwargs)
        tuner.nargs = dict(zip(tuner.arg_names, args))
        try:
            configs = list(tuner.prune_configs(kwargs))  # as the tuner would: prune_configs_by kept
        finally:
            tuner.nargs = None
        if self.pin is None:
            result = original(tuner, *args, **kwargs)
            ran = getattr(tuner, "best_config", None)
        else:
            ran = configs[self.pin % len(configs)]
            saved, tuner.cache = tuner.cache, _Pinned(ran)
            try:
                result = original(tuner, *args, **kwargs)
            finally:
                tuner.cache = saved
        index = next((i for i, c in enumerate(configs) if c is ran), None)
        if index is None:  # a config a prune hook built anew
            index = next((i for i, c in enumerate(configs) if str(c) == str(ran)), None)
        self.runs.append(TunerRun(getattr(tuner.base_fn, "__name__", "kernel"), configs, index))
        return result


@contextlib.contextmanager
def autotune_runs(pin: int | None = None) -> Iterator[AutotuneRuns]:
    """Note every multi-config autotuner call in the block; with `pin`, each runs its
    pin-th config (counted over its pruned configs, modulo their number) instead of the
    tuned one, without timing any, and its cache is left as it was."""
    cls = autotuner()
    runs = AutotuneRuns(pin)
    if cls is None:
        yield runs
        return
    with wrapped(cls, "run", runs.on_run):
        yield runs
