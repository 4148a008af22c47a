"""What one kernel function does itself: its loads, stores, dots, reductions, atomics,
loops and notable triton.language calls, each recorded with the function it is in."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field

from tritonforge.analysis.features.model import AtomicOp, DotOp, LoopInfo, MemoryOp, ReductionOp
from tritonforge.analysis.features.static import BLOCK_PTR_MAKERS, StaticNames, pointer_kinds_of_names
from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments

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
_DESC_LOADS = frozenset({"load_tensor_descriptor", "_experimental_descriptor_load"})
_DESC_STORES = frozenset({"store_tensor_descriptor", "_experimental_descriptor_store"})
_PY_BUILTINS = frozenset({"range", "len", "min", "max", "int", "float", "bool", "abs", "print", "isinstance",
                          "tuple", "list", "getattr", "zip", "enumerate", "str", "type"})


@dataclass
class Scan:
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


class FunctionScanner(ast.NodeVisitor):
    """Records what one kernel or jitted helper does, without following calls."""

    def __init__(self, kernel: Kernel, module: KernelSource):
        self.fn = fn = kernel.fn
        self.module = module
        self.out = Scan()
        self.depth = 0
        self.constexprs = set(kernel.constexprs)
        self.pointer_names = pointer_kinds_of_names(fn, module)
        self.static = StaticNames(fn, module, self.constexprs)

    def scan(self) -> Scan:
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
        bound = call_arguments(it, _RANGE_ARGS)
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
        if node.id in self.module.kernels and node.id != self.fn.name and node.id not in self.out.references:
            self.out.references.append(node.id)

    def _plain_call(self, name: str) -> None:
        known = name in self.module.kernels or name in self.module.aliases or name in _PY_BUILTINS
        if not known and name not in self.out.unresolved:
            self.out.unresolved.append(name)

    def _tl_call(self, op: str, node: ast.Call) -> None:
        line, out = node.lineno, self.out
        if op == "load":
            out.loads.append(self._load(node, call_arguments(node, _LOAD_ARGS)))
        elif op == "store":
            out.stores.append(self._store(node, call_arguments(node, _STORE_ARGS)))
        elif op in _DESC_LOADS or op in _DESC_STORES:
            kind = "load" if op in _DESC_LOADS else "store"
            getattr(out, kind + "s").append(MemoryOp(kind, line, self.fn.name, "tensor_descriptor", masked=False))
        elif op in ("dot", "dot_scaled"):
            out.dots.append(self._dot(op, node))
        elif op in _REDUCTIONS:
            axis = call_arguments(node, ("input", "axis")).get("axis")
            out.reductions.append(ReductionOp(op, line, self.fn.name, axis=_unparse(axis)))
        elif op in _ATOMICS:
            out.atomics.append(self._atomic(op, node))
        elif op in ("program_id", "num_programs"):
            axis = _int_arg(call_arguments(node, ("axis",)), "axis")
            target = out.program_id_axes if op == "program_id" else out.num_programs_axes
            target.add(axis if axis is not None else -1)  # -1: axis not a literal
        if op in _NOTABLE or op.startswith("libdevice."):
            out.notable[op] += 1

    def _method_call(self, node: ast.Call) -> None:
        attr, receiver = node.func.attr, node.func.value  # type: ignore[attr-defined]
        if attr in ("load", "store"):
            kind = self._receiver_pointer(receiver)
            bound = call_arguments(node, _LOAD_ARGS if attr == "load" else _STORE_ARGS, skip=1)
            if kind == "tensor_descriptor":
                op = MemoryOp(attr, node.lineno, self.fn.name, kind, masked=False)
            else:  # x.store(value, mask=...) on a pointer tensor
                op = self._store(node, bound) if attr == "store" else self._load(node, bound)
            getattr(self.out, attr + "s").append(op)
        elif attr in _REDUCTIONS:
            axis = call_arguments(node, ("input", "axis"), skip=1).get("axis")
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
            if op in BLOCK_PTR_MAKERS:
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
            bound = call_arguments(node, _DOT_SCALED_ARGS)
            formats = (_text(bound, "lhs_format") or "?", _text(bound, "rhs_format") or "?")
            return DotOp(node.lineno, self.fn.name, kind=op, has_acc=_given(bound, "acc"),
                         out_dtype=_text(bound, "out_dtype"), formats=formats)
        bound = call_arguments(node, _DOT_ARGS)
        return DotOp(node.lineno, self.fn.name, has_acc=_given(bound, "acc"),
                     input_precision=_text(bound, "input_precision"), allow_tf32=_text(bound, "allow_tf32"),
                     out_dtype=_text(bound, "out_dtype"),
                     max_num_imprecise_acc=_text(bound, "max_num_imprecise_acc"))

    def _atomic(self, op: str, node: ast.Call) -> AtomicOp:
        bound = call_arguments(node, _ATOMIC_CAS_ARGS if op == "atomic_cas" else _ATOMIC_ARGS)
        return AtomicOp(op, node.lineno, self.fn.name, masked=_given(bound, "mask"),
                        sem=_text(bound, "sem"), scope=_text(bound, "scope"))

    # jitted functions nested in this one are scanned on their own
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        pass


def _unparse(node: ast.AST | None) -> str | None:
    return None if node is None else ast.unparse(node)

