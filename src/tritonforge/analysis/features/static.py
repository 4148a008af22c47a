"""Which names in a kernel hold compile-time values, and which hold block pointers or
tensor descriptors: what the scanner needs to call a loop static or a load a block load."""

from __future__ import annotations

import ast
from typing import Iterable

from tritonforge.analysis.astfold import fold_binop
from tritonforge.analysis.kernel_source import KernelSource

BLOCK_PTR_MAKERS = frozenset({"make_block_ptr", "advance"})
_DESC_MAKERS = frozenset({"make_tensor_descriptor", "_experimental_make_tensor_descriptor"})
# Calls that keep an expression a compile-time constant when their arguments are.
_STATIC_CALLS = frozenset({"cdiv", "next_power_of_2", "min", "max", "int", "len", "abs", "constexpr"})


def assignments(fn: ast.FunctionDef) -> Iterable[tuple[str, ast.AST | None]]:
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


def pointer_kinds_of_names(fn: ast.FunctionDef, module: KernelSource) -> dict[str, str]:
    """Names bound to block pointers or tensor descriptors anywhere in `fn` (flow-insensitive)."""
    kinds: dict[str, str] = {}
    for name, value in assignments(fn):
        if isinstance(value, ast.Call):
            op = module.tl_op(value.func)
            if op in BLOCK_PTR_MAKERS:
                kinds[name] = "block_ptr"
            elif op in _DESC_MAKERS:
                kinds[name] = "tensor_descriptor"
    return kinds


class StaticNames:
    """Which names in a function hold compile-time values, and the values that are literal."""

    def __init__(self, fn: ast.FunctionDef, module: KernelSource, constexprs: set[str]):
        self.module = module
        self.values: dict[str, int | None] = {n: None for n in constexprs}
        self.values.update(module.constants)
        self._add_static_locals(fn)

    def _add_static_locals(self, fn: ast.FunctionDef) -> None:
        by_name: dict[str, list[ast.AST | None]] = {}
        for name, value in assignments(fn):
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

