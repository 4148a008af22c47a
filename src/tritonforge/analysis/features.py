"""Static features of Triton kernels, read from Python source with `ast`.

Nothing is imported or run: a problem file or candidate kernel can be described before
any worker process touches it, and without a GPU. Every function decorated with
`@triton.jit` (bare or with arguments, imported under any alias, under `@triton.autotune`
or `@triton.heuristics`) gets a `KernelFeatures`: its memory operations, dots, reductions,
atomics, loops, launch-grid use and other ops worth a strategy's attention.

A kernel that calls (or passes as a combine function) another jitted function of the same
source also carries that helper's operations, each record naming the function it is in.

What the AST cannot know it does not guess: operand dtypes of `tl.dot` come from Triton's
TTIR (`dot_dtypes_from_ttir`), and a loop bound is "static" only when it is built from
literals, constexpr parameters, module constants and shape attributes.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from tritonforge.analysis.astfold import fold_binop

_TL = "triton.language"

# Signatures of the triton.language calls whose arguments we read, positional order.
_LOAD_ARGS = ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
              "eviction_policy", "volatile")
_STORE_ARGS = ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy")
_DOT_ARGS = ("input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype")
_DOT_SCALED_ARGS = ("lhs", "lhs_scale", "lhs_format", "rhs", "rhs_scale", "rhs_format", "acc")
_ATOMIC_ARGS = ("pointer", "val", "mask", "sem", "scope")
_ATOMIC_CAS_ARGS = ("pointer", "cmp", "val", "sem", "scope")
_RANGE_ARGS = ("arg1", "arg2", "step")

_REDUCTIONS = frozenset({"sum", "max", "min", "reduce", "argmax", "argmin", "cumsum", "cumprod", "xor_sum",
                         "associative_scan", "reduce_or"})
_ATOMICS = frozenset({"atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and",
                      "atomic_or", "atomic_xor"})
_NOTABLE = frozenset({
    "where", "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "softmax", "sin", "cos", "erf",
    "fma", "fdiv", "div_rn", "abs", "floor", "ceil", "clamp", "maximum", "minimum", "umulhi", "cast",
    "inline_asm_elementwise", "debug_barrier", "device_assert", "device_print", "static_assert", "assume",
    "multiple_of", "max_contiguous", "max_constancy", "histogram", "gather", "join", "split", "interleave",
    "trans", "permute", "reshape", "view", "broadcast_to", "cat", "rand", "randn", "randint", "randint4x",
})
# Tensor methods worth counting among notable ops (x.to(...) is a dtype conversion).
_NOTABLE_METHODS = frozenset({"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "softmax", "abs", "trans",
                              "permute", "reshape", "to", "cast"})
_BLOCK_PTR_MAKERS = frozenset({"make_block_ptr", "advance"})
_DESC_MAKERS = frozenset({"make_tensor_descriptor", "_experimental_make_tensor_descriptor"})
_DESC_LOADS = frozenset({"load_tensor_descriptor", "_experimental_descriptor_load"})
_DESC_STORES = frozenset({"store_tensor_descriptor", "_experimental_descriptor_store"})
# Calls that keep an expression a compile-time constant when their arguments are.
_STATIC_CALLS = frozenset({"cdiv", "next_power_of_2", "min", "max", "int", "len", "abs", "constexpr"})
_PY_BUILTINS = frozenset({"range", "len", "min", "max", "int", "float", "bool", "abs", "print", "isinstance",
                          "tuple", "list", "getattr", "zip", "enumerate", "str", "type"})


class _Json:
    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class MemoryOp(_Json):
    """One load or store. `masked` is true for a raw-pointer mask or a block-pointer boundary check."""
    kind: str  # "load" | "store"
    line: int
    function: str
    pointer: str  # "raw" | "block_ptr" | "tensor_descriptor"
    masked: bool
    has_other: bool = False
    boundary_check: str | None = None
    padding_option: str | None = None
    cache_modifier: str | None = None
    eviction_policy: str | None = None
    volatile: str | None = None


@dataclass
class DotOp(_Json):
    line: int
    function: str
    kind: str = "dot"  # "dot" | "dot_scaled"
    has_acc: bool = False
    input_precision: str | None = None
    allow_tf32: str | None = None
    out_dtype: str | None = None
    max_num_imprecise_acc: str | None = None
    formats: tuple[str, str] | None = None  # dot_scaled's lhs/rhs formats


@dataclass
class ReductionOp(_Json):
    op: str
    line: int
    function: str
    method_form: bool = False
    axis: str | None = None


@dataclass
class AtomicOp(_Json):
    op: str
    line: int
    function: str
    masked: bool = False
    sem: str | None = None
    scope: str | None = None


@dataclass
class LoopInfo(_Json):
    """A for or while loop. `static` loops have compile-time bounds (trip_count when literal)."""
    kind: str  # "range" | "tl.range" | "static_range" | "for" | "while"
    line: int
    function: str
    static: bool
    trip_count: int | None = None
    depth: int = 0  # loops enclosing this one in the same function
    options: dict[str, str] = field(default_factory=dict)  # tl.range kwargs: num_stages, loop_unroll_factor...

    @property
    def num_stages(self) -> str | None:
        return self.options.get("num_stages")

    @property
    def loop_unroll_factor(self) -> str | None:
        return self.options.get("loop_unroll_factor")


@dataclass
class KernelFeatures(_Json):
    name: str
    line: int
    params: list[str]
    constexpr_params: list[str]
    decorators: list[str]
    jit_kwargs: dict[str, str] = field(default_factory=dict)
    autotune_configs: int | None = None  # how many configs, when the list is literal
    autotune_key: list[str] = field(default_factory=list)
    heuristics: list[str] = field(default_factory=list)
    loads: list[MemoryOp] = field(default_factory=list)
    stores: list[MemoryOp] = field(default_factory=list)
    dots: list[DotOp] = field(default_factory=list)
    reductions: list[ReductionOp] = field(default_factory=list)
    atomics: list[AtomicOp] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    program_id_axes: list[int] = field(default_factory=list)
    num_programs_axes: list[int] = field(default_factory=list)
    notable_ops: dict[str, int] = field(default_factory=dict)
    callees: list[str] = field(default_factory=list)  # jitted helpers reached, transitively
    called_by: list[str] = field(default_factory=list)  # jitted functions that reference this one
    unresolved_calls: list[str] = field(default_factory=list)  # calls to names not known as jitted here

    @property
    def uses_num_programs(self) -> bool:
        return bool(self.num_programs_axes) or "num_programs" in self.notable_ops

    @property
    def pointer_style(self) -> str:
        """"raw", "block_ptr", "tensor_descriptor", "mixed" or "none"."""
        styles = {op.pointer for op in self.loads + self.stores}
        if not styles:
            return "none"
        return styles.pop() if len(styles) == 1 else "mixed"

    @property
    def masked_loads(self) -> int:
        return sum(op.masked for op in self.loads)

    @property
    def unmasked_loads(self) -> int:
        return sum(not op.masked for op in self.loads)

    @property
    def has_runtime_loop(self) -> bool:
        return any(not loop.static for loop in self.loops)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["summary"] = {
            "pointer_style": self.pointer_style,
            "loads": len(self.loads),
            "masked_loads": self.masked_loads,
            "unmasked_loads": self.unmasked_loads,
            "stores": len(self.stores),
            "masked_stores": sum(op.masked for op in self.stores),
            "dots": len(self.dots),
            "reductions": len(self.reductions),
            "atomics": len(self.atomics),
            "loops": len(self.loops),
            "runtime_loops": sum(not loop.static for loop in self.loops),
            "uses_num_programs": self.uses_num_programs,
        }
        return out


# --- public API -------------------------------------------------------------------------

def features_of_source(source: str) -> dict[str, KernelFeatures]:
    """Features of every `@triton.jit` function in `source`, by function name."""
    tree = ast.parse(source)
    aliases = _import_aliases(tree)
    functions = _jitted_functions(tree, aliases)
    module = _ModuleInfo(aliases, frozenset(functions), _module_constants(tree))
    scans = {name: _FunctionScanner(fn, module).scan() for name, fn in functions.items()}
    return {name: _assemble(name, functions[name], scans, module) for name in functions}


def features_of_file(path: str | Path) -> dict[str, KernelFeatures]:
    return features_of_source(Path(path).read_text())


_MLIR_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i8": "int8", "i32": "int32",
               "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
               "f8E4M3B11FNUZ": "fp8e4b15"}
_DOT_LINE = re.compile(r"\"?\b(?:tt\.dot|ttng\.warp_group_dot)\"?[\s(]")
# The head of a shaped type, e.g. tensor<64x32xf16, ...> or !ttg.memdesc<64x32xf16, ...>.
_SHAPED_TYPE = re.compile(r"(?:tensor|memdesc)<(?:\d+x)+([A-Za-z0-9_]+)")


def dot_dtypes_from_ttir(ttir: str) -> list[tuple[str, str, str]]:
    """(a, b, accumulator) element types of each `tt.dot` in TTIR, in Triton's names ("fp16", "fp32"...).

    TTGIR works too (`ttng.warp_group_dot` included). `tt.dot_scaled` is not a `tt.dot`.
    """
    found = []
    for line in ttir.splitlines():
        if not _DOT_LINE.search(line):
            continue
        types = _SHAPED_TYPE.findall(line)
        if len(types) >= 3:
            found.append(tuple(_MLIR_TYPES.get(t, t) for t in (types[0], types[1], types[-1])))
    return found


# --- module level ----------------------------------------------------------------------

@dataclass(frozen=True)
class _ModuleInfo:
    aliases: dict[str, str]  # local name -> qualified triton name
    jitted: frozenset[str]
    constants: dict[str, int]  # module-level integer constants (Triton treats globals as constexpr)

    def qualify(self, node: ast.AST) -> str | None:
        """Dotted triton name of `node` (e.g. tl.load -> "triton.language.load"), or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def tl_op(self, node: ast.AST) -> str | None:
        """Short name of a triton.language function (tl.math.exp -> "exp"), or None."""
        name = self.qualify(node)
        if not name or not name.startswith(_TL + "."):
            return None
        parts = name[len(_TL) + 1:].split(".")
        return f"libdevice.{parts[-1]}" if "libdevice" in parts[:-1] else parts[-1]


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "triton":
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases["triton"] = "triton"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "triton":
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _decorator_name(dec: ast.AST, module: _ModuleInfo) -> str | None:
    target = dec.func if isinstance(dec, ast.Call) else dec
    name = module.qualify(target)
    if name in ("triton.runtime.jit", "triton.runtime.jit.jit"):
        return "triton.jit"
    if name and name.startswith("triton.runtime.autotuner."):
        return "triton." + name.rsplit(".", 1)[1]
    return name


def _jitted_functions(tree: ast.Module, aliases: dict[str, str]) -> dict[str, ast.FunctionDef]:
    probe = _ModuleInfo(aliases, frozenset(), {})
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            if any(_decorator_name(d, probe) == "triton.jit" for d in node.decorator_list):
                found[node.name] = node
    return found


def _module_constants(tree: ast.Module) -> dict[str, int]:
    consts = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = _literal_int(node.value) if node.value is not None else None
            if value is not None:
                for t in targets:
                    if isinstance(t, ast.Name):
                        consts[t.id] = value
    return consts


def _literal_int(node: ast.AST) -> int | None:
    """An int literal, also when wrapped in tl.constexpr(...)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


# --- per-function scan -----------------------------------------------------------------

@dataclass
class _Scan:
    """What one function does itself, before helpers are merged in."""
    loads: list[MemoryOp] = field(default_factory=list)
    stores: list[MemoryOp] = field(default_factory=list)
    dots: list[DotOp] = field(default_factory=list)
    reductions: list[ReductionOp] = field(default_factory=list)
    atomics: list[AtomicOp] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    program_id_axes: set[int] = field(default_factory=set)
    num_programs_axes: set[int] = field(default_factory=set)
    notable: Counter = field(default_factory=Counter)
    references: list[str] = field(default_factory=list)  # jitted functions named in the body
    unresolved: list[str] = field(default_factory=list)


def _bind(call: ast.Call, names: tuple[str, ...], skip: int = 0) -> dict[str, ast.AST]:
    """Map a call's arguments onto parameter names (skip: leading params bound elsewhere, e.g. self)."""
    bound = {names[i + skip]: a for i, a in enumerate(call.args) if i + skip < len(names)}
    bound.update({k.arg: k.value for k in call.keywords if k.arg})
    return bound


def _given(bound: dict[str, ast.AST], name: str) -> bool:
    node = bound.get(name)
    if node is None or (isinstance(node, (ast.Tuple, ast.List)) and not node.elts):
        return False
    # Identity, not ==: other=0.0 is given although 0.0 == False.
    return not (isinstance(node, ast.Constant) and (node.value is None or node.value is False or node.value == ""))


def _text(bound: dict[str, ast.AST], name: str) -> str | None:
    """A hint's value: the string for a literal, the source text otherwise, None when absent or empty."""
    if not _given(bound, name):
        return None
    node = bound[name]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ast.unparse(node)


def _int_arg(bound: dict[str, ast.AST], name: str) -> int | None:
    node = bound.get(name)
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


class _FunctionScanner(ast.NodeVisitor):
    def __init__(self, fn: ast.FunctionDef, module: _ModuleInfo):
        self.fn = fn
        self.module = module
        self.out = _Scan()
        self.depth = 0
        self.constexprs = set(_constexpr_params(fn, module))
        self.pointer_names = _pointer_kinds_of_names(fn, module)
        self.static = _StaticNames(fn, module, self.constexprs)

    def scan(self) -> _Scan:
        for stmt in self.fn.body:
            self.visit(stmt)
        return self.out

    # loops
    def visit_For(self, node: ast.For) -> None:
        self.out.loops.append(self._loop_of(node))
        self._visit_loop_body(node)

    def visit_While(self, node: ast.While) -> None:
        self.out.loops.append(LoopInfo("while", node.lineno, self.fn.name, static=False, depth=self.depth))
        self._visit_loop_body(node)

    def _visit_loop_body(self, node: ast.For | ast.While) -> None:
        for part in ([node.iter, node.target] if isinstance(node, ast.For) else [node.test]):
            self.visit(part)
        self.depth += 1
        for stmt in node.body + node.orelse:
            self.visit(stmt)
        self.depth -= 1

    def _loop_of(self, node: ast.For) -> LoopInfo:
        it = node.iter
        kind = self._range_kind(it.func) if isinstance(it, ast.Call) else None
        if kind is None:
            return LoopInfo("for", node.lineno, self.fn.name, static=False, depth=self.depth)
        bound = _bind(it, _RANGE_ARGS)
        bounds = [bound[k] for k in _RANGE_ARGS if k in bound]
        static = kind == "static_range" or all(self.static.is_static(b) for b in bounds)
        options = {k: ast.unparse(v) for k, v in bound.items() if k not in _RANGE_ARGS}
        return LoopInfo(kind, node.lineno, self.fn.name, static=static, depth=self.depth,
                        trip_count=self._trip_count(bound) if static else None, options=options)

    def _range_kind(self, func: ast.AST) -> str | None:
        if isinstance(func, ast.Name) and func.id == "range" and func.id not in self.module.aliases:
            return "range"
        op = self.module.tl_op(func)
        return {"range": "tl.range", "static_range": "static_range"}.get(op or "")

    def _trip_count(self, bound: dict[str, ast.AST]) -> int | None:
        values = [self.static.value(bound[k]) if k in bound else None for k in _RANGE_ARGS]
        start, stop, step = values
        if "arg2" not in bound:
            start, stop = 0, start
        step = 1 if "step" not in bound else step
        if None in (start, stop, step) or step == 0:
            return None
        return len(range(start, stop, step))

    # calls
    def visit_Call(self, node: ast.Call) -> None:
        op = self.module.tl_op(node.func)
        if op is not None:
            self._tl_call(op, node)
        elif isinstance(node.func, ast.Attribute) and self.module.qualify(node.func) is None:
            self._method_call(node)
        elif isinstance(node.func, ast.Name):
            self._plain_call(node.func.id)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        # Named, not only called: tl.reduce(x, 0, combine) passes a jitted helper too.
        if node.id in self.module.jitted and node.id != self.fn.name and node.id not in self.out.references:
            self.out.references.append(node.id)

    def _plain_call(self, name: str) -> None:
        known = name in self.module.jitted or name in self.module.aliases or name in _PY_BUILTINS
        if not known and name not in self.out.unresolved:
            self.out.unresolved.append(name)

    def _tl_call(self, op: str, node: ast.Call) -> None:
        line, out = node.lineno, self.out
        if op == "load":
            out.loads.append(self._load(node, _bind(node, _LOAD_ARGS)))
        elif op == "store":
            out.stores.append(self._store(node, _bind(node, _STORE_ARGS)))
        elif op in _DESC_LOADS or op in _DESC_STORES:
            kind = "load" if op in _DESC_LOADS else "store"
            getattr(out, kind + "s").append(MemoryOp(kind, line, self.fn.name, "tensor_descriptor", masked=False))
        elif op in ("dot", "dot_scaled"):
            out.dots.append(self._dot(op, node))
        elif op in _REDUCTIONS:
            axis = _bind(node, ("input", "axis")).get("axis")
            out.reductions.append(ReductionOp(op, line, self.fn.name, axis=_unparse(axis)))
        elif op in _ATOMICS:
            out.atomics.append(self._atomic(op, node))
        elif op in ("program_id", "num_programs"):
            axis = _int_arg(_bind(node, ("axis",)), "axis")
            target = out.program_id_axes if op == "program_id" else out.num_programs_axes
            target.add(axis if axis is not None else -1)  # -1: axis not a literal
        if op in _NOTABLE or op.startswith("libdevice."):
            out.notable[op] += 1

    def _method_call(self, node: ast.Call) -> None:
        attr, receiver = node.func.attr, node.func.value  # type: ignore[attr-defined]
        if attr in ("load", "store"):
            kind = self._receiver_pointer(receiver)
            bound = _bind(node, _LOAD_ARGS if attr == "load" else _STORE_ARGS, skip=1)
            if kind == "tensor_descriptor":
                op = MemoryOp(attr, node.lineno, self.fn.name, kind, masked=False)
            else:  # x.store(value, mask=...) on a pointer tensor
                op = self._store(node, bound) if attr == "store" else self._load(node, bound)
            getattr(self.out, attr + "s").append(op)
        elif attr in _REDUCTIONS:
            axis = _bind(node, ("input", "axis"), skip=1).get("axis")
            self.out.reductions.append(ReductionOp(attr, node.lineno, self.fn.name, method_form=True,
                                                   axis=_unparse(axis)))
        elif attr in _NOTABLE_METHODS:
            self.out.notable["cast" if attr == "to" else attr] += 1

    def _receiver_pointer(self, receiver: ast.AST) -> str:
        if isinstance(receiver, ast.Name) and receiver.id in self.pointer_names:
            return self.pointer_names[receiver.id]
        # A method .load/.store on anything else is a host-made tensor descriptor in practice.
        return "tensor_descriptor"

    def _pointer_kind(self, ptr: ast.AST | None, bound: dict[str, ast.AST]) -> str:
        if isinstance(ptr, ast.Call):
            op = self.module.tl_op(ptr.func)
            if op in _BLOCK_PTR_MAKERS:
                return "block_ptr"
        if isinstance(ptr, ast.Name) and ptr.id in self.pointer_names:
            return self.pointer_names[ptr.id]
        if _given(bound, "boundary_check") or _given(bound, "padding_option"):
            return "block_ptr"
        return "raw"

    def _load(self, node: ast.Call, bound: dict[str, ast.AST]) -> MemoryOp:
        pointer = self._pointer_kind(bound.get("pointer"), bound)
        return MemoryOp(
            "load", node.lineno, self.fn.name, pointer,
            masked=_given(bound, "mask") or _given(bound, "boundary_check"),
            has_other=_given(bound, "other"),
            boundary_check=_text(bound, "boundary_check"),
            padding_option=_text(bound, "padding_option"),
            cache_modifier=_text(bound, "cache_modifier"),
            eviction_policy=_text(bound, "eviction_policy"),
            volatile=_text(bound, "volatile"),
        )

    def _store(self, node: ast.Call, bound: dict[str, ast.AST]) -> MemoryOp:
        pointer = self._pointer_kind(bound.get("pointer"), bound)
        return MemoryOp(
            "store", node.lineno, self.fn.name, pointer,
            masked=_given(bound, "mask") or _given(bound, "boundary_check"),
            boundary_check=_text(bound, "boundary_check"),
            cache_modifier=_text(bound, "cache_modifier"),
            eviction_policy=_text(bound, "eviction_policy"),
        )

    def _dot(self, op: str, node: ast.Call) -> DotOp:
        if op == "dot_scaled":
            bound = _bind(node, _DOT_SCALED_ARGS)
            formats = (_text(bound, "lhs_format") or "?", _text(bound, "rhs_format") or "?")
            return DotOp(node.lineno, self.fn.name, kind=op, has_acc=_given(bound, "acc"),
                         out_dtype=_text(bound, "out_dtype"), formats=formats)
        bound = _bind(node, _DOT_ARGS)
        return DotOp(node.lineno, self.fn.name, has_acc=_given(bound, "acc"),
                     input_precision=_text(bound, "input_precision"), allow_tf32=_text(bound, "allow_tf32"),
                     out_dtype=_text(bound, "out_dtype"),
                     max_num_imprecise_acc=_text(bound, "max_num_imprecise_acc"))

    def _atomic(self, op: str, node: ast.Call) -> AtomicOp:
        bound = _bind(node, _ATOMIC_CAS_ARGS if op == "atomic_cas" else _ATOMIC_ARGS)
        return AtomicOp(op, node.lineno, self.fn.name, masked=_given(bound, "mask"),
                        sem=_text(bound, "sem"), scope=_text(bound, "scope"))

    # jitted functions nested in this one are scanned on their own
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        pass


def _unparse(node: ast.AST | None) -> str | None:
    return None if node is None else ast.unparse(node)


def _constexpr_params(fn: ast.FunctionDef, module: _ModuleInfo) -> list[str]:
    params = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    return [p.arg for p in params if p.annotation is not None and _is_constexpr_annotation(p.annotation, module)]


def _is_constexpr_annotation(node: ast.AST, module: _ModuleInfo) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(".")[-1] == "constexpr"
    return (module.qualify(node) or "").endswith(".constexpr")


def _assignments(fn: ast.FunctionDef) -> Iterable[tuple[str, ast.AST | None]]:
    """(name, value) for each plain-name binding in `fn`; value None when not a simple expression."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    yield t.id, node.value
                elif isinstance(t, (ast.Tuple, ast.List)):
                    yield from ((e.id, None) for e in t.elts if isinstance(e, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
            yield node.target.id, None if isinstance(node, ast.AugAssign) else node.value
        elif isinstance(node, ast.For):
            yield from ((n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name))


def _pointer_kinds_of_names(fn: ast.FunctionDef, module: _ModuleInfo) -> dict[str, str]:
    """Names bound to block pointers or tensor descriptors anywhere in `fn` (flow-insensitive)."""
    kinds: dict[str, str] = {}
    for name, value in _assignments(fn):
        if isinstance(value, ast.Call):
            op = module.tl_op(value.func)
            if op in _BLOCK_PTR_MAKERS:
                kinds[name] = "block_ptr"
            elif op in _DESC_MAKERS:
                kinds[name] = "tensor_descriptor"
    return kinds


class _StaticNames:
    """Which names in a function hold compile-time values, and the values that are literal."""

    def __init__(self, fn: ast.FunctionDef, module: _ModuleInfo, constexprs: set[str]):
        self.module = module
        self.values: dict[str, int | None] = {n: None for n in constexprs}
        self.values.update(module.constants)
        self._add_static_locals(fn)

    def _add_static_locals(self, fn: ast.FunctionDef) -> None:
        by_name: dict[str, list[ast.AST | None]] = {}
        for name, value in _assignments(fn):
            by_name.setdefault(name, []).append(value)
        for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if p.arg not in self.values:
                by_name.setdefault(p.arg, []).append(None)  # a runtime argument
        # Least fixed point: a local is static once every binding of it is static.
        changed = True
        while changed:
            changed = False
            for name, values in by_name.items():
                if name not in self.values and all(v is not None and self.is_static(v) for v in values):
                    self.values[name] = self.value(values[0]) if len(values) == 1 else None
                    changed = True

    def is_static(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.values or node.id in ("True", "False", "None")
        if isinstance(node, ast.Attribute):
            # Shapes, dtypes and .value of constexprs are compile-time; tl.float32 etc. too.
            return node.attr in ("shape", "dtype", "value") or self.module.qualify(node) is not None
        if isinstance(node, ast.Call):
            name = self.module.tl_op(node.func) or self.module.qualify(node.func) or getattr(node.func, "id", "")
            short = name.rsplit(".", 1)[-1]
            return short in _STATIC_CALLS and all(self.is_static(a) for a in node.args)
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript,
                             ast.Tuple, ast.List)):
            return all(self.is_static(c) for c in ast.iter_child_nodes(node)
                       if not isinstance(c, (ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context)))
        return False

    def value(self, node: ast.AST) -> int | None:
        """The integer an expression evaluates to when every leaf is a known literal."""
        if isinstance(node, ast.Constant):
            return node.value if type(node.value) is int else None
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.value(node.operand)
            return None if v is None else -v
        if isinstance(node, ast.BinOp):
            return fold_binop(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Call) and len(node.args) == 2:
            name = (self.module.tl_op(node.func) or self.module.qualify(node.func) or getattr(node.func, "id", ""))
            a, b = (self.value(x) for x in node.args)
            if a is not None and b is not None and name.rsplit(".", 1)[-1] in ("cdiv", "min", "max"):
                return {"cdiv": -(-a // b) if b else None, "min": min(a, b), "max": max(a, b)}[
                    name.rsplit(".", 1)[-1]]
        return None


# --- assembling a kernel ---------------------------------------------------------------

def _assemble(name: str, fn: ast.FunctionDef, scans: dict[str, _Scan], module: _ModuleInfo) -> KernelFeatures:
    callees = _reachable(name, scans)
    parts = [scans[name]] + [scans[c] for c in callees]
    feats = KernelFeatures(
        name=name,
        line=fn.lineno,
        params=[a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs],
        constexpr_params=_constexpr_params(fn, module),
        decorators=[_decorator_name(d, module) or ast.unparse(d) for d in fn.decorator_list],
        callees=callees,
        called_by=[other for other, s in scans.items() if name in s.references],
    )
    _read_decorators(feats, fn, module)
    notable: Counter = Counter()
    for part in parts:
        feats.loads += part.loads
        feats.stores += part.stores
        feats.dots += part.dots
        feats.reductions += part.reductions
        feats.atomics += part.atomics
        feats.loops += part.loops
        notable.update(part.notable)
        feats.unresolved_calls += [u for u in part.unresolved if u not in feats.unresolved_calls]
    feats.program_id_axes = sorted(set().union(*(p.program_id_axes for p in parts)))
    feats.num_programs_axes = sorted(set().union(*(p.num_programs_axes for p in parts)))
    feats.notable_ops = dict(sorted(notable.items()))
    return feats


def _reachable(name: str, scans: dict[str, _Scan]) -> list[str]:
    seen: list[str] = []
    stack = list(reversed(scans[name].references))
    while stack:
        callee = stack.pop()
        if callee == name or callee in seen:
            continue
        seen.append(callee)
        stack.extend(reversed(scans[callee].references))
    return seen


def _read_decorators(feats: KernelFeatures, fn: ast.FunctionDef, module: _ModuleInfo) -> None:
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        bound = {k.arg: k.value for k in dec.keywords if k.arg}
        kind = _decorator_name(dec, module)
        if kind == "triton.jit":
            feats.jit_kwargs = {k: ast.unparse(v) for k, v in bound.items()}
        elif kind == "triton.autotune":
            bound.update(_bind(dec, ("configs", "key")))
            configs = bound.get("configs")
            if isinstance(configs, (ast.List, ast.Tuple)):
                feats.autotune_configs = len(configs.elts)
            key = bound.get("key")
            if isinstance(key, (ast.List, ast.Tuple)):
                feats.autotune_key = [ast.unparse(e).strip("'\"") for e in key.elts]
        elif kind == "triton.heuristics":
            values = bound.get("values") or (dec.args[0] if dec.args else None)
            if isinstance(values, ast.Dict):
                feats.heuristics = [ast.unparse(k).strip("'\"") for k in values.keys if k is not None]
