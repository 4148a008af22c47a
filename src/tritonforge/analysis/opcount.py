"""Floating-point operation counts of an entry call, measured with Triton's interpreter.

`count_flops(fn, args)` calls `fn(*args)` with every Triton launch intercepted: instead of
running the whole grid, each launch runs a few sampled programs (first, middle and last in
row-major grid order by default), counts the floating-point work each one does, and scales
the average by the number of programs. Kernels that do the same work in every program
(most of them: masked-off lanes are computed too) are counted exactly; kernels whose work
depends on the program id (causal attention, ragged rows) get an estimate, exact when the
work is linear in the program's position and the grid has an odd number of programs.

Counting rules, per element of the result of each block (or scalar) operation:

- elementwise: fadd, fsub, fmul, fdiv, frem, negation (a subtraction from 0), float
  maximum/minimum, abs, floor, ceil = 1; fma = 2; clamp = 2 (a max and a min).
  An add of a `tl.dot` result whose accumulator was all zeros counts 0: Triton folds
  `acc += tl.dot(a, b)` into the dot's accumulator, so the GPU does no separate add.
- special (transcendental): exp, exp2, log, log2, sqrt, rsqrt, sin, cos, erf = 1 each.
  Functions the standard library writes in Triton count as what they are made of:
  `tl.sigmoid(x)` = 1 / (1 + exp(-x)) = 3 elementwise + 1 special.
- reductions: tl.sum/max/min/argmax/argmin/reduce/xor_sum and scans (cumsum, cumprod,
  associative_scan) over a float block = 1 per input element; ops inside a custom combine
  function are not counted again.
- dot: `tl.dot` = 2*M*N*K per call (times the batch for 3-D dots), reported by operand
  dtype: "fp16", "bf16", "fp8e4nv", ...; fp32 operands carry the input precision,
  "fp32/tf32" (Triton's default), "fp32/tf32x3" or "fp32/ieee"; int8 dots are counted
  as operations under "int8", like TOPS.
- not counted: integer arithmetic (index and pointer math), comparisons, tl.where and
  other selects, casts, loads, stores, atomics.

`total` = elementwise + special + reductions + all dot operations; the four parts do not
overlap.

Only a process that set TRITON_INTERPRET=1 before its kernels were decorated can count:
kernels decorated otherwise are compiled for a GPU, and launching one here raises
`InterpreterRequired`. Run the counting in a subprocess with that environment.

Partial execution has consequences: outputs hold results only where sampled programs
wrote them, so an entry that inspects results on the host, or a kernel whose work depends
on an earlier kernel's output, may count differently from a full run. Autotuned kernels
are not benchmarked: the first config that survives pruning is used, and the autotuners'
caches are cleared afterwards.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Callable

import numpy as np

from tritonforge import triton_hooks

# (category, operations per result element) of each counted interpreter-builder method.
_BUILDER_RULES = MappingProxyType({
    **{name: ("elementwise", 1) for name in (
        "create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_precise_divf", "create_frem",
        "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf",
        "create_fabs", "create_floor", "create_ceil", "create_fneg")},
    "create_fma": ("elementwise", 2),
    "create_clampf": ("elementwise", 2),
    **{name: ("special", 1) for name in (
        "create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt", "create_precise_sqrt",
        "create_rsqrt", "create_sin", "create_cos", "create_erf")},
})
_CATEGORIES = ("elementwise", "special", "reductions")
# Marks a dot result whose accumulator was zero: an add of it is folded into the dot.
_FOLDABLE = "tritonforge.opcount.zero_acc_dot"


class InterpreterRequired(RuntimeError):
    """count_flops was called where Triton kernels are compiled rather than interpreted."""


@dataclass
class KernelCount:
    """One kernel launch: its grid, the programs that ran, and the scaled counts."""
    name: str
    grid: tuple[int, int, int]
    sampled_programs: list[tuple[int, int, int]]
    total: int
    elementwise: int
    special: int
    reductions: int
    dot_flops_by_dtype: dict[str, int] = field(default_factory=dict)

    @property
    def programs(self) -> int:
        return math.prod(self.grid)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FlopCount:
    """Counts of a whole entry call; `per_kernel` has one entry per launch, in launch order."""
    total: int
    dot_flops_by_dtype: dict[str, int]
    elementwise: int
    special: int
    reductions: int
    per_kernel: list[KernelCount]

    @property
    def dot_flops(self) -> int:
        return sum(self.dot_flops_by_dtype.values())

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "dot_flops": self.dot_flops}


def count_flops(fn: Callable, args: tuple, kwargs: dict | None = None, *, samples: int = 3) -> FlopCount:
    """Call `fn(*args, **kwargs)` with each Triton launch sampled and counted (see module docstring).

    `samples` programs per launch, spread evenly over the grid (at most the grid's size).
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    _require_interpreter()
    triton_hooks.install_interpreter_compat()  # Triton 3.6 under numpy 2 cannot run runtime loop bounds without it
    recorder = _Recorder(samples)
    with ExitStack() as stack:
        _install_hooks(stack, recorder)
        fn(*args, **(kwargs or {}))
    return recorder.result()


# --- recording -------------------------------------------------------------------------

@dataclass
class _ProgramTally:
    counts: Counter = field(default_factory=Counter)  # category -> operations
    dots: Counter = field(default_factory=Counter)  # dtype label -> operations


class _Recorder:
    """Counts of the program now running, and the finished launches of one count_flops call."""

    def __init__(self, samples: int):
        self.samples = samples
        self.current: _ProgramTally | None = None
        self.reduction_depth = 0  # > 0 inside a reduction, whose combine ops are already counted
        self.launches: list[KernelCount] = []
        self.autotuners: list[Any] = []

    def add(self, category: str, ops: int) -> None:
        if self.current is not None and self.reduction_depth == 0:
            self.current.counts[category] += ops

    def add_dot(self, dtype: str, ops: int) -> None:
        if self.current is not None and self.reduction_depth == 0:
            self.current.dots[dtype] += ops

    def finish_launch(self, name: str, grid: tuple[int, int, int], programs: list[tuple[int, int, int]],
                      tallies: list[_ProgramTally]) -> None:
        n = math.prod(grid)

        def scaled(values: list[int]) -> int:
            return round(Fraction(sum(values) * n, len(values))) if values else 0

        parts = {c: scaled([t.counts[c] for t in tallies]) for c in _CATEGORIES}
        dtypes = sorted({d for t in tallies for d in t.dots})
        dots = {d: scaled([t.dots[d] for t in tallies]) for d in dtypes}
        total = sum(parts.values()) + sum(dots.values())
        self.launches.append(KernelCount(name, grid, programs, total, dot_flops_by_dtype=dots, **parts))

    def result(self) -> FlopCount:
        dots: Counter = Counter()
        for launch in self.launches:
            dots.update(launch.dot_flops_by_dtype)
        parts = {c: sum(getattr(k, c) for k in self.launches) for c in _CATEGORIES}
        return FlopCount(total=sum(k.total for k in self.launches), dot_flops_by_dtype=dict(sorted(dots.items())),
                         per_kernel=list(self.launches), **parts)


# --- hooks into the interpreter --------------------------------------------------------

def _require_interpreter() -> None:
    import triton

    if not triton.knobs.runtime.interpret:
        raise InterpreterRequired(
            "count_flops runs kernels in Triton's interpreter: set TRITON_INTERPRET=1 in the environment "
            "before the kernels are decorated (e.g. run the counting in a subprocess with it set)")
    from triton.runtime import interpreter

    needed = [(interpreter, "interpreter_builder"), (interpreter, "_patch_lang"), (interpreter, "_implicit_cvt"),
              (interpreter.GridExecutor, "_init_args_hst"), (interpreter.GridExecutor, "_restore_args_dev"),
              (interpreter.ReduceOps, "apply_impl"), (interpreter.ScanOps, "apply_impl"),
              (interpreter.InterpretedFunction, "rewrite")]
    missing = [name for owner, name in needed if not hasattr(owner, name)]
    if missing:
        raise RuntimeError(f"opcount knows Triton 3.6's interpreter; triton {triton.__version__} lacks {missing}")


def _swap(stack: ExitStack, owner: Any, name: str, value: Any) -> None:
    """Set owner.name for the life of `stack`, then put back exactly what was there."""
    stack.callback(triton_hooks.replace(owner, name, value))


def _install_hooks(stack: ExitStack, recorder: _Recorder) -> None:
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    for method, (category, per_element) in _BUILDER_RULES.items():
        if method == "create_fadd":
            continue  # its own wrapper below also folds dot accumulation
        if not hasattr(builder, method):
            continue  # not in this Triton (create_fneg is new in 3.7; older ones subtract from 0)
        _swap(stack, builder, method, _counting(getattr(builder, method), category, per_element, recorder))
    _swap(stack, builder, "create_fadd", _counting_fadd(getattr(builder, "create_fadd"), recorder))
    _swap(stack, builder, "create_dot", _counting_dot(getattr(builder, "create_dot"), recorder))
    for cls in (interpreter.ReduceOps, interpreter.ScanOps):
        _swap(stack, cls, "apply_impl", _counting_reduction(cls.apply_impl, recorder))
    _swap(stack, triton_hooks.interpreted_function(), "run", _sampled_run(recorder))
    _swap(stack, triton_hooks.jit_function(), "run", _refuse_compiled_run)
    _swap(stack, triton_hooks.autotuner(), "_bench", _skip_bench(recorder))
    # Registered after the swaps, so it runs before they are undone.
    stack.callback(lambda: [tuner.cache.clear() for tuner in recorder.autotuners])


def _counting(method: Callable, category: str, per_element: int, recorder: _Recorder) -> Callable:
    def counted(*args: Any) -> Any:
        out = method(*args)
        recorder.add(category, per_element * out.data.size)
        return out
    return counted


def _counting_fadd(method: Callable, recorder: _Recorder) -> Callable:
    def counted(lhs: Any, rhs: Any) -> Any:
        out = method(lhs, rhs)
        if not (lhs.attr.get(_FOLDABLE) or rhs.attr.get(_FOLDABLE)):
            recorder.add("elementwise", out.data.size)
        return out
    return counted


def _counting_dot(method: Callable, recorder: _Recorder) -> Callable:
    def counted(a: Any, b: Any, acc: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        out = method(a, b, acc, input_precision, max_num_imprecise_acc)
        *batch, m, k = a.data.shape
        n = b.data.shape[-1]
        recorder.add_dot(_dot_label(a.dtype, input_precision), 2 * math.prod(batch) * m * n * k)
        if not np.any(acc.data):
            out.set_attr(_FOLDABLE, True)
        return out
    return counted


def _dot_label(dtype: Any, input_precision: Any) -> str:
    name = getattr(dtype, "name", str(dtype))
    if name == "fp32":
        return f"fp32/{getattr(input_precision, 'name', str(input_precision)).lower()}"
    return name


def _counting_reduction(method: Callable, recorder: _Recorder) -> Callable:
    def counted(self: Any, inputs: tuple) -> Any:
        floats = [t for t in inputs if t.dtype.is_floating()]
        if floats:
            recorder.add("reductions", floats[0].handle.data.size)
        recorder.reduction_depth += 1
        try:
            return method(self, inputs)
        finally:
            recorder.reduction_depth -= 1
    return counted


def _refuse_compiled_run(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise InterpreterRequired(
        f"kernel {self.fn.__name__} was decorated before TRITON_INTERPRET=1 was set, so it is compiled, "
        "not interpreted; set TRITON_INTERPRET=1 before importing the module that defines it")


def _skip_bench(recorder: _Recorder) -> Callable:
    # Interpreter timings mean nothing: every config ties and the autotuner keeps the first.
    def bench(self: Any, *args: Any, config: Any, **kwargs: Any) -> list[float]:
        if self not in recorder.autotuners:
            recorder.autotuners.append(self)
        return [0.0, 0.0, 0.0]
    return bench


def _sampled_run(recorder: _Recorder) -> Callable:
    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        if warmup:
            return
        from triton.runtime.interpreter import GridExecutor

        executor = GridExecutor(self.rewrite(), self.arg_names, grid, self.pre_run_hooks)
        _run_sampled(executor, recorder, self.__name__, args, kwargs)
    return run


def _sample_programs(grid: tuple[int, int, int], samples: int) -> list[tuple[int, int, int]]:
    """`samples` program ids spread evenly over the grid in row-major order, first and last included."""
    n = math.prod(grid)
    if n == 0:
        return []
    k = min(samples, n)
    linear = sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if k > 1 else [0]
    return [tuple(int(v) for v in np.unravel_index(i, grid)) for i in linear]


def _run_sampled(executor: Any, recorder: _Recorder, name: str, args_dev: tuple, kwargs: dict) -> None:
    """What Triton's GridExecutor.__call__ does, for a few programs of the grid instead of all of them."""
    from triton.runtime import interpreter

    wanted = inspect.getfullargspec(executor.fn).args
    kwargs = {k: v for k, v in kwargs.items() if k in wanted}  # drops num_warps and other launch options
    args_hst, kwargs_hst = executor._init_args_hst(args_dev, kwargs)
    for hook in executor.pre_run_hooks:
        hook(*args_hst, **kwargs_hst)
    scope = interpreter._patch_lang(executor.fn)
    try:
        call_args = inspect.getcallargs(executor.fn, *args_hst, **kwargs_hst)
        call_args = {k: v if k in executor.constexprs else interpreter._implicit_cvt(v) for k, v in call_args.items()}
        grid = executor.grid(call_args) if callable(executor.grid) else executor.grid
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        programs = _sample_programs(grid, recorder.samples)
        tallies = [_run_program(executor.fn, recorder, name, grid, pid, call_args) for pid in programs]
    finally:
        if scope is not None:  # older interpreters patch without a scope to undo
            scope.restore()
    executor._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)
    recorder.finish_launch(name, grid, programs, tallies)


def _run_program(kernel: Callable, recorder: _Recorder, name: str, grid: tuple[int, int, int],
                 pid: tuple[int, int, int], call_args: dict) -> _ProgramTally:
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    builder.set_grid_dim(*grid)
    builder.set_grid_idx(*pid)
    recorder.current = _ProgramTally()
    try:
        kernel(**call_args)
    except InterpreterRequired:
        raise
    except Exception as e:
        raise RuntimeError(f"{name} program {pid} of grid {grid} failed in the interpreter: {e!r}") from e
    finally:
        tally, recorder.current = recorder.current, None
    return tally
