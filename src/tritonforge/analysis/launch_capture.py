"""Record the Triton kernel launches an entry function makes, without needing a GPU.

While `capture_launches` runs, `JITFunction.run` (and the interpreter's
`InterpretedFunction.run`, and `Autotuner.run`) are wrapped at class level and restored
afterwards, even when the entry raises. Each launch becomes a `LaunchRecord`: the kernel,
the evaluated grid, every argument bound to its parameter name, and the launch options.

Each argument also carries the type string and alignment attribute that Triton's JIT
would specialize it to ("*fp16" + divisible by 16, "i32", "constexpr", ...), so that
`tritonforge.analysis.compiled.compile_offline` can rebuild the same compilation.

The class-level patch is visible to every thread of the process: do not launch kernels
from other threads while a capture runs.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from tritonforge import triton_hooks
from tritonforge.analysis.host_state import call_lines, cuda_stand_ins, host_frames, launch_origin

# Options every launch has; other keyword options (maxnreg, debug, ...) go to `options`.
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")
# Keywords of `run` itself, not of the kernel.
_RUN_KEYWORDS = ("grid", "warmup")


def _triton_defaults() -> dict[str, int]:
    """Triton's CUDA defaults for launches that do not say (4 warps, 3 stages, 1 CTA)."""
    defaults = {"num_warps": 4, "num_stages": 3, "num_ctas": 1}
    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except ImportError:
        return defaults
    fields = CUDAOptions.__dataclass_fields__
    return {k: fields[k].default if k in fields else v for k, v in defaults.items()}


# --- records ----------------------------------------------------------------------------
@dataclass
class ArgRecord:
    """One kernel argument, bound to its parameter name.

    kind: "tensor", "int", "float", "bool", "none", "constexpr" (a tl.constexpr parameter)
    or "other". `triton_type` is the JIT's signature string for it ("*fp16", "i32",
    "constexpr"; an int equal to 1 also becomes "constexpr"), None when Triton cannot
    specialize it. `divisible16` is the JIT's alignment specialization (tt.divisibility=16),
    None where Triton does not specialize on alignment.
    """

    name: str
    kind: str
    triton_type: str | None
    divisible16: bool | None = None
    value: Any = None  # scalars and constexprs, JSON-friendly (repr for other objects)
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    aligned16: bool | None = None  # data_ptr % 16 == 0
    device: str | None = None
    # The original constexpr object (a tl.dtype, a function, ...), needed to compile again.
    raw: Any = field(default=None, repr=False, compare=False)
    # Triton's attribute string for it ("D", ""), as the JIT passes it to the compiler.
    spec_attr: str | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "name": self.name, "kind": self.kind, "triton_type": self.triton_type,
            "divisible16": self.divisible16, "value": self.value,
        }
        if self.kind == "tensor":
            out.update(dtype=self.dtype, shape=list(self.shape or ()), strides=list(self.strides or ()),
                       aligned16=self.aligned16, device=self.device)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ArgRecord":
        shape, strides = data.get("shape"), data.get("strides")
        rec = cls(name=data["name"], kind=data["kind"], triton_type=data.get("triton_type"),
                  divisible16=data.get("divisible16"), value=data.get("value"), dtype=data.get("dtype"),
                  shape=tuple(shape) if shape is not None else None,
                  strides=tuple(strides) if strides is not None else None,
                  aligned16=data.get("aligned16"), device=data.get("device"))
        rec.raw = rec.value
        if rec.divisible16 is not None:
            rec.spec_attr = "D" if rec.divisible16 else ""
        return rec


@dataclass
class LaunchRecord:
    """One kernel launch as the entry function made it (or, under an autotuner, one per config)."""

    kernel_name: str
    grid: tuple[int, int, int]
    args: list[ArgRecord]
    num_warps: int
    num_stages: int
    num_ctas: int
    options: dict[str, Any] = field(default_factory=dict)  # other launch options (maxnreg, ...)
    interpreted: bool = False
    autotune_config_index: int | None = None
    autotune_configs: list[dict[str, Any]] | None = None  # every config of the autotuner
    source_file: str | None = None
    # Locals of the source file's functions on the stack at the launch (analysis.host_state).
    frames: dict[str, dict[str, Any]] = field(default_factory=dict)
    line: int | None = None  # the source file's line that made the launch (analysis.host_state)
    col: int | None = None  # the column of the call on that line
    caller: str | None = None  # the function of the source file that line is in
    calls: tuple[int, ...] = ()  # the lines of the source file's frames, outermost first (host_state.call_lines)
    grid_callable: bool = False  # the grid was a function of the launch's meta-parameters
    # The launch options (num_warps, num_stages, num_ctas) the launch was passed, not left to
    # Triton's defaults; None where not recorded.
    given: tuple[str, ...] | None = None
    # The JITFunction (or InterpretedFunction): needed to compile, never serialized.
    kernel: Any = field(default=None, repr=False, compare=False)
    # With execute=True on a GPU: the CompiledKernel that actually ran, for its real facts.
    compiled: Any = field(default=None, repr=False, compare=False)

    @property
    def grid_size(self) -> int:
        return math.prod(self.grid)

    def arg(self, name: str) -> ArgRecord:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f"{self.kernel_name} has no parameter {name!r}")

    @property
    def constexprs(self) -> dict[str, Any]:
        """Values of the tl.constexpr parameters, by name."""
        return {a.name: a.value for a in self.args if a.kind == "constexpr"}

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel_name": self.kernel_name, "grid": list(self.grid),
            "args": [a.to_json() for a in self.args],
            "num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": self.num_ctas,
            "options": dict(self.options), "interpreted": self.interpreted,
            "autotune_config_index": self.autotune_config_index,
            "autotune_configs": self.autotune_configs, "source_file": self.source_file,
            "frames": self.frames, "line": self.line, "col": self.col, "caller": self.caller,
            "calls": list(self.calls), "grid_callable": self.grid_callable,
            "given": None if self.given is None else list(self.given),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], kernel: Any = None) -> "LaunchRecord":
        """Rebuild a record (e.g. in another process); pass `kernel` to compile it there."""
        return cls(kernel_name=data["kernel_name"], grid=tuple(data["grid"]),  # type: ignore[arg-type]
                   args=[ArgRecord.from_json(a) for a in data["args"]],
                   num_warps=data["num_warps"], num_stages=data["num_stages"], num_ctas=data["num_ctas"],
                   options=dict(data.get("options") or {}), interpreted=data.get("interpreted", False),
                   autotune_config_index=data.get("autotune_config_index"),
                   autotune_configs=data.get("autotune_configs"), source_file=data.get("source_file"),
                   frames=dict(data.get("frames") or {}), line=data.get("line"), col=data.get("col"), caller=data.get("caller"),
                   calls=tuple(data.get("calls") or ()), grid_callable=bool(data.get("grid_callable")),
                   given=None if data.get("given") is None else tuple(data["given"]), kernel=kernel)


# --- specialization, as triton/runtime/jit.py does it -----------------------------------
@dataclass(frozen=True)
class _ParamFlags:
    is_constexpr: bool
    is_const: bool = False
    do_not_specialize: bool = False
    do_not_specialize_on_alignment: bool = False
    annotation_type: str = ""


def _param_flags(kernel: Any, sig: inspect.Signature) -> dict[str, _ParamFlags]:
    params = getattr(kernel, "params", None)
    if params is None:  # InterpretedFunction keeps only the decorator's keyword arguments
        params = _kernel_params(sig, getattr(kernel, "kwargs", {}) or {})
    if params is None:
        return {n: _ParamFlags(is_constexpr="constexpr" in str(p.annotation)) for n, p in sig.parameters.items()}
    return {
        p.name: _ParamFlags(
            is_constexpr=bool(p.is_constexpr), is_const=bool(getattr(p, "is_const", False)),
            do_not_specialize=bool(p.do_not_specialize),
            do_not_specialize_on_alignment=bool(getattr(p, "do_not_specialize_on_alignment", False)),
            annotation_type=getattr(p, "annotation_type", "") or "",
        )
        for p in params
    }


def _kernel_params(sig: inspect.Signature, decorator_kwargs: dict[str, Any]) -> list | None:
    try:
        from triton.runtime.jit import KernelParam
    except ImportError:
        return None
    dns = decorator_kwargs.get("do_not_specialize") or []
    dns_oa = decorator_kwargs.get("do_not_specialize_on_alignment") or []
    try:
        return [KernelParam(i, p, i in dns or p.name in dns, i in dns_oa or p.name in dns_oa)
                for i, p in enumerate(sig.parameters.values())]
    except TypeError:  # constructor changed between versions
        return None


def _native_specializer() -> Callable | None:
    try:
        from triton._C.libtriton import native_specialize_impl
        from triton.backends.compiler import BaseBackend
    except ImportError:
        return None
    # The alignment rules live in BaseBackend's static methods; the CUDA backend inherits them.
    return functools.partial(native_specialize_impl, BaseBackend)


_TORCH_TO_TRITON = {
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
    "uint32": "u32", "uint64": "u64", "bool": "u1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
    "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16",
}


def _fallback_specialize(value: Any, is_const: bool, specialize: bool, align: bool) -> tuple[Any, Any]:
    """Triton 3.6's rules, for versions without `native_specialize_impl`."""
    if value is None:
        return "constexpr", None
    if isinstance(value, bool):
        return "u1", None
    if isinstance(value, int):
        if specialize and value == 1:
            return "constexpr", 1
        ty = "i32" if -2**31 <= value < 2**31 else "u64" if value >= 2**63 else "i64"
        attr = ("D" if align and value % 16 == 0 else "") if specialize else None
        return ty, attr
    if isinstance(value, float):
        return "fp32", None
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        ty = _TORCH_TO_TRITON.get(str(value.dtype).replace("torch.", ""))
        if ty is None:
            raise TypeError(f"no Triton type for {value.dtype}")
        attr = ("D" if align and value.data_ptr() % 16 == 0 else "") if specialize else None
        return ("*k" if is_const else "*") + ty, attr
    if type(value).__name__ == "constexpr":
        return "constexpr", value
    raise TypeError(f"cannot specialize {type(value).__name__}")


def _specialize(value: Any, flags: _ParamFlags, native: Callable | None) -> tuple[Any, Any]:
    """(signature type, attribute) exactly as the JIT's binder computes them."""
    if flags.is_constexpr:
        return "constexpr", value
    impl = native or _fallback_specialize
    ann = flags.annotation_type
    try:
        ty, attr = impl(value, flags.is_const, not flags.do_not_specialize, not flags.do_not_specialize_on_alignment)
    except (TypeError, ValueError, RuntimeError):
        if not ann:
            return None, None
        ty, attr = ann, None
    if ann:
        # The JIT never specializes annotated floats/bools; other annotations keep the attribute.
        if ann == "u1" or ann[:2] in ("fp", "bf"):
            return ann, None
        return ann, attr
    return ty, attr


# --- arguments --------------------------------------------------------------------------
def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__name__ == "constexpr":
        return _jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "dtype") and hasattr(value, "stride")


def _arg_record(name: str, value: Any, flags: _ParamFlags, native: Callable | None) -> ArgRecord:
    ty, attr = _specialize(value, flags, native)
    spec_attr = attr if isinstance(attr, str) else None
    rec = ArgRecord(name=name, kind=_kind(value, flags), triton_type=ty if isinstance(ty, str) else None,
                    divisible16=None if spec_attr is None or ty == "constexpr" else "D" in spec_attr,
                    spec_attr=spec_attr, raw=value)
    if rec.kind == "tensor":
        rec.dtype = str(value.dtype).replace("torch.", "")
        rec.shape, rec.strides = tuple(value.shape), tuple(value.stride())
        rec.aligned16 = value.data_ptr() % 16 == 0
        rec.device = str(value.device)
        rec.raw = None  # never keep a tensor alive through a record
    else:
        rec.value = _jsonable(value)
    return rec


def _kind(value: Any, flags: _ParamFlags) -> str:
    if flags.is_constexpr:
        return "constexpr"
    if _is_tensor(value):
        return "tensor"
    if value is None:
        return "none"
    for kind, t in (("bool", bool), ("int", int), ("float", float)):
        if isinstance(value, t):
            return kind
    return "other"


# --- launches ---------------------------------------------------------------------------
def _python_function(kernel: Any) -> Callable:
    fn = kernel
    while not inspect.isfunction(fn):
        fn = fn.fn
    return fn


def _eval_grid(grid: Any, meta: dict[str, Any]) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(meta)
    dims = [int(g) for g in tuple(grid)]
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, not {len(dims)}")
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


def _make_record(kernel: Any, args: tuple, kwargs: dict[str, Any], native: Callable | None,
                 defaults: dict[str, int]) -> LaunchRecord:
    fn = _python_function(kernel)
    sig = inspect.signature(fn)
    params = {k: v for k, v in kwargs.items() if k in sig.parameters}
    options = {k: v for k, v in kwargs.items() if k not in sig.parameters and k not in _RUN_KEYWORDS}
    bound = sig.bind(*args, **params)
    bound.apply_defaults()
    meta = dict(bound.arguments)  # what the JIT hands a grid callable
    flags = _param_flags(kernel, sig)
    for k in _LAUNCH_OPTIONS:  # a kernel parameter named like an option is both (Triton's softmax tutorial)
        if k in params and params[k] is not None:
            options.setdefault(k, params[k])
    given = tuple(k for k in _LAUNCH_OPTIONS if options.get(k) is not None)
    launch = {k: int(options.pop(k) if options.get(k) is not None else defaults[k]) for k in _LAUNCH_OPTIONS}
    options = {k: _jsonable(v) for k, v in options.items() if v is not None}
    source_file = _source_file(fn)
    line, col, caller = launch_origin(source_file)
    return LaunchRecord(
        kernel_name=fn.__name__, grid=_eval_grid(kwargs.get("grid"), meta),
        args=[_arg_record(n, v, flags[n], native) for n, v in meta.items()],
        options=options, interpreted=not hasattr(kernel, "params") and hasattr(kernel, "rewrite"),
        source_file=source_file, frames=host_frames(source_file), line=line, col=col, caller=caller,
        calls=call_lines(source_file), grid_callable=callable(kwargs.get("grid")), given=given, kernel=kernel,
        **launch,
    )


def _source_file(fn: Callable) -> str | None:
    try:
        return inspect.getsourcefile(fn)
    except TypeError:
        return None


def _config_json(config: Any) -> dict[str, Any]:
    out = {"kwargs": {k: _jsonable(v) for k, v in config.kwargs.items()}}
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        out[k] = getattr(config, k, None)
    out["pre_hook"] = getattr(config, "pre_hook", None) is not None  # code: cannot be written back as text
    return out


class _Capture:
    """State of one `capture_launches` call; lives only as long as the call."""

    def __init__(self, execute: bool) -> None:
        self.execute = execute
        self.records: list[LaunchRecord] = []
        self.benchmarking = 0  # > 0 while an autotuner times its configs
        self.native = _native_specializer()
        self.defaults = _triton_defaults()

    def on_run(self, original: Callable, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if kwargs.get("warmup", False) or self.benchmarking:
            # Not a launch of the entry: compile-only warmups and autotuner timing runs.
            return original(kernel, *args, **kwargs) if self.execute else None
        record = _make_record(kernel, args, kwargs, self.native, self.defaults)
        self.records.append(record)
        if not self.execute:
            return None
        result = original(kernel, *args, **kwargs)
        if hasattr(result, "asm"):  # a CompiledKernel (the interpreter returns none)
            record.compiled = result
        return result

    def on_autotune(self, original: Callable, tuner: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        configs = list(tuner.configs)
        summary = [_config_json(c) for c in configs]
        if self.execute:
            start = len(self.records)
            result = original(tuner, *args, **kwargs)
            best = getattr(tuner, "best_config", None)
            index = next((i for i, c in enumerate(configs) if c is best), None)
            self._tag(start, index, summary)
            return result
        # No GPU to time on: record what each config would launch, and launch nothing.
        for index, config in enumerate(configs):
            clash = set(kwargs) & set(config.kwargs)
            if clash:  # as Triton's autotuner refuses them
                raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(clash))}")
            start = len(self.records)
            tuner.nargs = dict(zip(tuner.arg_names, args))
            try:
                self._call_run(tuner.fn, args, {**kwargs, **config.all_kwargs()})
            finally:
                tuner.nargs = None
            self._tag(start, index, summary)
        return None

    def on_bench(self, original: Callable, tuner: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        self.benchmarking += 1
        try:
            return original(tuner, *args, **kwargs)
        finally:
            self.benchmarking -= 1

    def on_getitem(self, original: Callable, kernel: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """kernel[grid] for interpreters whose `run` is per instance (Triton 3.3): go through it."""
        (grid,) = args
        return lambda *a, **kw: self.on_run(_instance_run, kernel, a, {**kw, "grid": grid, "warmup": False})

    def _call_run(self, fn: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        if "run" in getattr(fn, "__dict__", {}):  # a per-instance run no class patch reaches
            return self.on_run(_instance_run, fn, args, kwargs)
        return fn.run(*args, **kwargs)

    def _tag(self, start: int, index: int | None, summary: list[dict[str, Any]]) -> None:
        for rec in self.records[start:]:
            if rec.autotune_configs is None:  # an inner autotuner has already tagged its own
                rec.autotune_config_index, rec.autotune_configs = index, summary


def _instance_run(kernel: Any, *args: Any, **kwargs: Any) -> Any:
    return kernel.run(*args, **kwargs)


def _patch_targets() -> list[tuple[type, str, str]]:
    """(class, method, handler name) for every Triton class this version has."""
    targets = []
    jit, interpreted, tuner = (triton_hooks.jit_function(), triton_hooks.interpreted_function(),
                               triton_hooks.autotuner())
    if jit is not None:
        targets.append((jit, "run", "on_run"))
    if interpreted is not None:
        if triton_hooks.interpreted_run_is_per_instance():  # kernel[grid] bypasses run: go through it
            targets.append((interpreted, "__getitem__", "on_getitem"))
        else:
            targets.append((interpreted, "run", "on_run"))
    if tuner is not None:
        targets.append((tuner, "run", "on_autotune"))
        if hasattr(tuner, "_bench"):
            targets.append((tuner, "_bench", "on_bench"))
    return targets


def capture_launches(fn: Callable, args: tuple, kwargs: dict[str, Any] | None = None, *,
                     execute: bool = False, stand_ins: bool = False) -> list[LaunchRecord]:
    """Call `fn(*args, **kwargs)` and return the Triton launches it made, in order.

    With execute=False no kernel runs (nor compiles): each launch is recorded and skipped,
    so CPU (or meta) tensors do; an autotuned kernel records one launch per config, each
    tagged with `autotune_config_index`. With execute=True kernels launch as usual (on a
    GPU, or under TRITON_INTERPRET=1) and an autotuned kernel records only the launch of
    the config it picked. Exceptions from `fn` propagate; Triton is restored either way.
    `stand_ins` (with CPU tensors): CUDA device calls in the host code do nothing meanwhile.
    """
    capture = _Capture(execute)
    with contextlib.ExitStack() as stack:
        if stand_ins:
            stack.enter_context(cuda_stand_ins())
        for cls, attr, handler in _patch_targets():
            stack.enter_context(triton_hooks.wrapped(cls, attr, getattr(capture, handler)))
        fn(*args, **(kwargs or {}))
    return capture.records
