"""What host-code replay computes with: values seen at run time (tensors as their shape, dtype
and strides), the functions and operators of host code it can evaluate, and the file's own
enums and dotted names. Anything else is `UNKNOWN`, never a guess (see `replay`)."""

from __future__ import annotations

import ast
import bisect
import itertools
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

from tritonforge.analysis.astfold import last_name
from tritonforge.analysis.launch_sites.syntax import record_fields


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
MAX_DEPTH = 40


class Items(tuple):
    """A tuple or list the file writes out (`return BLOCK_SIZE, num_warps`) with the literals
    each item read, so that unpacking or indexing it charges one item's literals alone."""

    parts: tuple[tuple[ast.Constant, ...], ...]

    def __new__(cls, items: list[Any], parts: list[tuple[ast.Constant, ...]]) -> "Items":
        made = super().__new__(cls, items)
        made.parts = tuple(parts)
        return made


@dataclass
class TensorValue:
    """A captured tensor: what host code may read of it without its data."""

    shape: tuple[int, ...]
    dtype: str  # "torch.float16"
    strides: tuple[int, ...] = ()
    device: str = ""  # "cuda:0", "cpu"; "" where not recorded

    def attr(self, name: str) -> Any:
        if name == "shape":
            return self.shape
        if name == "dtype":
            return self.dtype
        if name == "device":
            return DeviceValue(self.device) if self.device else UNKNOWN
        if name == "ndim":
            return len(self.shape)
        if name in ("is_cuda", "is_contiguous"):
            return UNKNOWN
        return UNKNOWN

    def method(self, name: str, args: list[Any]) -> Any:
        if name == "numel" and not args:
            return math.prod(self.shape)
        if name in ("size", "stride") and len(args) <= 1:
            seq = self.shape if name == "size" else self.strides
            if not args:
                return tuple(seq)
            i = args[0]
            return seq[i] if isinstance(i, int) and -len(seq) <= i < len(seq) else UNKNOWN
        if name == "dim" and not args:
            return len(self.shape)
        if name == "element_size" and not args:
            return ELEMENT_SIZE.get(self.dtype.replace("torch.", ""), UNKNOWN)
        return UNKNOWN


@dataclass(frozen=True)
class DeviceValue:
    """A captured tensor's device (`x.device.type == "cuda"` picks a config by device). Under
    the capture's CUDA stand-ins a CPU tensor still says "cpu" here, as it did to the host code."""

    name: str  # "cuda:0", "cpu"

    def attr(self, name: str) -> Any:
        kind, _, index = self.name.partition(":")
        if name == "type":
            return kind
        if name == "index":
            return int(index) if index.isdigit() else None
        return UNKNOWN


ELEMENT_SIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
                 "int32": 4, "int64": 8, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1}


def runtime_value(data: Any) -> Any:
    """A captured local (as `launch_capture.snapshot_value` wrote it) as Replay reads it."""
    if isinstance(data, dict) and "__tensor__" in data:
        t = data["__tensor__"]
        return TensorValue(tuple(t["shape"]), t["dtype"], tuple(t.get("strides") or ()), t.get("device") or "")
    if isinstance(data, dict) and "__object__" in data:
        return UNKNOWN
    if isinstance(data, dict) and "__dict__" in data:
        return {_key(k): runtime_value(v) for k, v in data["__dict__"]}
    if isinstance(data, list):
        return tuple(runtime_value(v) for v in data)
    return data


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k


def same_key(a: Any, b: Any) -> bool:
    """Dict keys as host code writes them: `torch.float16` and the captured "torch.float16"."""
    if isinstance(a, str) and isinstance(b, str):
        return a.removeprefix("torch.") == b.removeprefix("torch.")
    return a == b and type(a) is type(b)


def literal_int(node: ast.Constant) -> int | None:
    """The integer a literal stands for as a launch value: an int, or a string of decimal
    digits (an environment variable's default, converted by `int(...)`)."""
    v = node.value
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) < 10:
        return int(v)
    return None


def _next_power_of_2(n: Any) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _cdiv(a: Any, b: Any) -> int:
    return -(-int(a) // int(b))


def _sequence(items: Any) -> Any:
    """`list(...)`/`tuple(...)` of a sequence replay holds (as a tuple, as list displays are)."""
    return tuple(items) if isinstance(items, (tuple, str)) else UNKNOWN


# Callables host code uses to size launches, by dotted name as written.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "abs": abs, "int": int, "float": float, "round": round, "len": len, "bool": bool,
    "str": lambda v: v if isinstance(v, str) else str(v) if isinstance(v, (int, float)) else UNKNOWN,
    "math.ceil": math.ceil, "math.floor": math.floor, "math.log2": math.log2, "math.sqrt": math.sqrt,
    "math.prod": math.prod, "math.gcd": math.gcd, "divmod": divmod,
    "list": _sequence, "tuple": _sequence,
    "itertools.product": lambda *seqs: tuple(itertools.product(*seqs)) if all(
        isinstance(s, tuple) for s in seqs) else UNKNOWN,
    "bisect.bisect_left": bisect.bisect_left, "bisect.bisect_right": bisect.bisect_right, "bisect.bisect": bisect.bisect,
}
INT_METHODS = ("bit_length", "bit_count")
STR_METHODS = ("upper", "lower", "strip", "title", "capitalize")
# Taking string arguments: `str(x.dtype).split(".")[-1]`, `name.removeprefix("torch.")`.
STR_ARG_METHODS = ("split", "rsplit", "removeprefix", "removesuffix", "replace", "startswith", "endswith")
# Asked of this process, which sees the GPU the candidates run on (or none, as the interpreter's
# worker does): a capture answers them the same way (worker.analysis_ops).
DEVICE_QUERIES = ("torch.cuda.is_available", "torch.cuda.get_device_capability")


def device_query(name: str) -> Any:
    import torch

    try:
        return getattr(torch.cuda, name.rsplit(".", 1)[1])()
    except (RuntimeError, AssertionError, AttributeError):  # no CUDA here
        return UNKNOWN


def torch_build(name: str) -> Any:
    """`torch.version.hip` or `.cuda` of the torch installed here, which the candidates run on."""
    import torch

    return getattr(torch.version, name, UNKNOWN)


TRITON_FUNCTIONS = {"next_power_of_2": _next_power_of_2, "cdiv": _cdiv}
MODULES = ("triton", "tl", "torch", "math", "triton.language", "bisect", "itertools", "contextvars", "sys")
BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
}
def _torch_names(a: Any, b: Any) -> bool:
    """Both are torch's singletons by name (`x.dtype is torch.float32`), where `is` is `==`."""
    return isinstance(a, str) and isinstance(b, str) and a.startswith("torch.") and b.startswith("torch.")


COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b if a is None or b is None else a == b if _torch_names(a, b) else UNKNOWN,
    ast.IsNot: lambda a, b: a is not b if a is None or b is None else a != b if _torch_names(a, b) else UNKNOWN,
}


@dataclass
class EnumClass:
    """An `enum.Enum` subclass of the file, whose members' values are literals in its body."""

    node: ast.ClassDef

    @property
    def is_int(self) -> bool:
        return any(last_name(b) == "IntEnum" for b in self.node.bases)

    def member(self, name: str) -> ast.expr | None:
        values = [n.value for n in self.node.body if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
        return values[0] if len(values) == 1 else None


@dataclass
class Instance:
    """An instance of a plain class of the file, made where replay can see the call: the
    attributes its `__init__` sets (`self.block = block or 128`), each read where it was set."""

    cls: "ClassValue"
    attrs: dict[str, Any] = field(default_factory=dict)
    # The literals its making read, where it was made before the value replayed (a module's one
    # instance, `self` of the launching method): charged to each attribute its `__init__` set.
    made_reads: tuple[Any, ...] = ()


@dataclass
class ClassValue:
    """A plain class of the file: its attributes are the literals of its body, its static and
    class methods helpers replay can call (`ReluSq.config(n)`, `cls.BLOCK_SMALL`)."""

    node: ast.ClassDef

    def attribute(self, name: str) -> ast.expr | None:
        values = [n.value for n in self.node.body if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
                  and any(isinstance(t, ast.Name) and t.id == name
                          for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        return values[0] if len(values) == 1 else None

    def method(self, name: str) -> tuple[ast.FunctionDef, str] | None:
        """The method and how it binds: "static", "class", "property" or "plain"."""
        fn = next((n for n in self.node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if fn is None:
            return None
        marks = {last_name(d) for d in fn.decorator_list}
        return fn, "static" if "staticmethod" in marks else "class" if "classmethod" in marks else \
            "property" if marks & {"property", "cached_property"} else "plain"

    def fields(self) -> list[tuple[str, ast.expr | None]] | None:
        """A record class's fields and defaults (see `syntax.record_fields`); None for any
        other class (whose `__init__` replay does not follow)."""
        return record_fields(self.node)


@dataclass
class Record:
    """An instance of a record class of the file (`CFG = LaunchConfig(vec=2, num_warps=2)`):
    each field's expression and where it is read, evaluated only when the field is."""

    cls: ClassValue
    fields: dict[str, tuple[ast.expr, Any]]  # name -> (expression, the frame it is read in)


@dataclass(frozen=True)
class ContextVarValue:
    """`contextvars.ContextVar("block", default=32)`: its `.get()` is the default where nothing
    set it (a `with block_size(256):` the cases ran under shows as a value the replay does not
    reproduce, and the value is not moved)."""

    default: ast.expr | None
    frame: Any


@dataclass(frozen=True)
class EnumMember:
    """`Tile.LARGE`: equal to itself alone, as enum members are; `.value` reads its literal."""

    cls: str
    name: str
    value: ast.expr = field(compare=False, hash=False)


@dataclass
class Dotted:
    """A module or a known function, by its dotted name as written (`triton.next_power_of_2`)."""

    name: str


@dataclass(frozen=True)
class ModuleGlobals:
    """The file's own namespace, as `globals()` or `sys.modules[__name__]` gives it: its names
    read as if written out (`globals().get("BLOCK", 128)` reads `BLOCK = 64`)."""


THIS_MODULE = "<the problem's module>"  # `__name__`, as the file's own code sees it
