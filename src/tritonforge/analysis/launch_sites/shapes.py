"""Symbolic tensor shapes inside a kernel, in terms of its constexpr parameters: which
constexprs are tensor dimensions, loop bounds, 2D tiles, and the (M, N, K) of each tl.dot."""

from __future__ import annotations

import ast
from typing import Any, Iterable

from tritonforge.analysis.astfold import params_of
from tritonforge.analysis.launch_sites.syntax import fold, last_name
from tritonforge.analysis.launch_sites.model import LOOP_OPTION_ROLES

_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"}
_SHAPE_KEEPING = {"cumsum", "cumprod", "sort", "flip", "associative_scan"}


class ShapeWalker:
    """Symbolic shapes of a kernel's tensors, in terms of its constexpr parameters.

    A shape is a tuple of dims: a constexpr name, an int, or "?" (an expression). Only
    what launch tuning needs is tracked: which constexprs are tensor dims, which appear
    together in 2D tiles, and the (M, N, K) of each tl.dot.
    """

    def __init__(self, fn: ast.FunctionDef, constexprs: set[str]):
        self.fn = fn
        self.constexprs = constexprs
        self.params = {p.arg for p in params_of(fn)}
        self.env: dict[str, tuple] = {}
        self.roles: dict[str, set[str]] = {c: set() for c in constexprs}
        self.tiles: dict[tuple[str, ...], None] = {}
        self.dots: dict[tuple, None] = {}
        self.arange_ends: dict[str, None] = {}  # `BLOCK // VEC`: sizes computed from constexprs

    def run(self) -> None:
        self._block(self.fn.body)

    # statements
    def _block(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self._stmt(s)

    def _stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                self._bind(t, s.value)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self._bind(s.target, s.value)
        elif isinstance(s, ast.AugAssign):
            shape = self.shape(s.value)
            if isinstance(s.target, ast.Name):
                self.env[s.target.id] = _broadcast(self.env.get(s.target.id, ()), shape)
        elif isinstance(s, (ast.For, ast.While)):
            self._loop(s)
        elif isinstance(s, ast.If):
            self.shape(s.test)
            self._block(s.body)
            self._block(s.orelse)
        elif isinstance(s, ast.With):
            self._block(s.body)
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.shape(child)

    def _loop(self, s: ast.For | ast.While) -> None:
        if isinstance(s, ast.For):
            self._range_roles(s.iter)
            for n in ast.walk(s.target):
                if isinstance(n, ast.Name):
                    self.env[n.id] = ()
        else:
            self.shape(s.test)
        # Twice, so that values carried around the loop reach their uses.
        self._block(s.body)
        self._block(s.body)
        self._block(s.orelse)

    def _range_roles(self, it: ast.expr) -> None:
        if not (isinstance(it, ast.Call) and last_name(it.func) in ("range", "static_range")):
            self.shape(it)
            return
        args = list(it.args)
        for i, a in enumerate(args):
            self._mark(a, "loop_step" if i == 2 else "loop_bound")
            self.shape(a)
        for kw in it.keywords:
            if kw.arg in LOOP_OPTION_ROLES:
                self._mark(kw.value, LOOP_OPTION_ROLES[kw.arg])

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = self.shape(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self._bind(t, v)
                return
            self.shape(value)
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.env[n.id] = ()
        else:
            self.shape(value)

    # expressions
    def shape(self, node: ast.expr) -> tuple:
        s = self._shape(node)
        named = [d for d in s if isinstance(d, str) and d != "?"]
        if len(set(named)) >= 2:
            self.tiles[tuple(named)] = None
            for d in named:
                self.roles[d].add("tile")
        return s

    def _shape(self, node: ast.expr) -> tuple:
        if isinstance(node, ast.Name):
            return self.env.get(node.id, ())
        if isinstance(node, ast.BinOp):
            return _broadcast(self.shape(node.left), self.shape(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.shape(node.operand)
        if isinstance(node, (ast.BoolOp, ast.Compare)):
            parts = node.values if isinstance(node, ast.BoolOp) else [node.left, *node.comparators]
            return _broadcast_all(self.shape(p) for p in parts)
        if isinstance(node, ast.IfExp):
            self.shape(node.test)
            return _broadcast(self.shape(node.body), self.shape(node.orelse))
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self.shape(node.value) if self._is_value(node.value) else ()
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.shape(e)
        return ()

    def _subscript(self, node: ast.Subscript) -> tuple:
        base = self.shape(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out, i = [], 0
        for it in items:
            if isinstance(it, ast.Constant) and it.value is None:
                out.append(1)
            elif isinstance(it, ast.Slice):
                out.append(base[i] if i < len(base) else "?")
                i += 1
            else:
                self.shape(it)
                i += 1  # an index drops the dimension
        return tuple(out) + tuple(base[i:]) if base or out else ()

    def _is_value(self, node: ast.expr) -> bool:
        """A tensor/local (method call receiver), as opposed to a module like `tl`."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and (root.id in self.env or root.id in self.params)

    def _call(self, node: ast.Call) -> tuple:
        name = last_name(node.func)
        method = isinstance(node.func, ast.Attribute) and self._is_value(node.func.value)
        recv = self.shape(node.func.value) if method else None  # type: ignore[union-attr]
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        shapes = [self.shape(a) for a in args] + [self.shape(v) for v in kw.values()]
        first = recv if method else (shapes[0] if shapes else ())
        if name == "arange" and not method:
            end = args[1] if len(args) > 1 else kw.get("end")
            for a in [*args, *kw.values()]:
                self._mark(a, "arange")
            if isinstance(end, ast.BinOp) and any(isinstance(n, ast.Name) and n.id in self.constexprs
                                                  for n in ast.walk(end)):
                self.arange_ends[ast.unparse(end)] = None
            return (self._dim(end),) if end is not None else ("?",)
        if name in ("zeros", "full", "empty") and not method:
            shape_arg = args[0] if args else kw.get("shape")
            return self._dims(shape_arg) if shape_arg is not None else ()
        if name in _BLOCK_POINTERS and not method:  # loads through it have its block's shape
            at, key = _BLOCK_POINTERS[name]
            block = args[at] if len(args) > at else kw.get(key)
            return self._dims(block) if block is not None else ()
        if name in ("zeros_like", "full_like", "empty_like"):
            return first or ()
        if name in ("reshape", "view", "broadcast_to"):
            shape_arg = self._shape_arg(args, kw, method)
            return self._dims(shape_arg) if shape_arg is not None else ()
        if name == "dot":
            a, b = (recv, shapes[0]) if method else (shapes[0] if shapes else (), shapes[1] if len(shapes) > 1 else ())
            return self._dot(a or (), b or ())
        if name in _REDUCTIONS:
            positional = args[:1] if method else args[1:2]  # x.sum(axis) / tl.sum(x, axis)
            return _reduce(first or (), kw.get("axis", positional[0] if positional else None))
        if name in _SHAPE_KEEPING or name == "load":
            return first or ()
        if name in ("trans", "permute") and first and len(first) == 2:
            return tuple(reversed(first))
        if name in ("store", "program_id", "num_programs", "cdiv", "atomic_add", "static_assert", "device_print"):
            return ()
        return _broadcast_all([*([recv] if recv else []), *shapes])

    @staticmethod
    def _shape_arg(args: list[ast.expr], kw: dict[str, ast.expr], method: bool) -> ast.expr | None:
        """The shape of `x.reshape(a, b)` / `x.reshape((a, b))` / `tl.reshape(x, (a, b))`."""
        if method:
            return args[0] if len(args) == 1 else (ast.Tuple(args) if args else kw.get("shape"))
        return args[1] if len(args) > 1 else kw.get("shape")

    def _dot(self, a: tuple, b: tuple) -> tuple:
        if len(a) != 2 or len(b) != 2:
            return ()
        m, k, n = a[0], a[1], b[1]
        names = [d if isinstance(d, str) and d != "?" else None for d in (m, n, k)]
        self.dots[tuple(names)] = None
        for d, role in zip(names, ("dot_m", "dot_n", "dot_k")):
            if d is not None:
                self.roles[d].add(role)
        return (m, n)

    def _dim(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id in self.constexprs:
            return node.id
        v = fold(node)
        return v if v is not None else "?"

    def _dims(self, node: ast.expr) -> tuple:
        self._mark(node, "shape")
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        return tuple(self._dim(e) for e in elts)

    def _mark(self, node: ast.expr, role: str) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.constexprs:
                self.roles[n.id].add(role)


def _broadcast(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        return a or b
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == 1 or x == "?":
            out.append(y if y != 1 else x)
        else:
            out.append(x)
    return tuple(out)


def _broadcast_all(shapes: Iterable[tuple]) -> tuple:
    out: tuple = ()
    for s in shapes:
        out = _broadcast(out, s)
    return out


def _reduce(shape: tuple, axis: ast.expr | None) -> tuple:
    if axis is None or not shape:
        return ()
    a = fold(axis)
    if a is None or not -len(shape) <= a < len(shape):
        return ()
    a %= len(shape)
    return shape[:a] + shape[a + 1:]


# Where a block pointer or tensor descriptor takes its block shape: (position, keyword).
_BLOCK_POINTERS = {"make_block_ptr": (4, "block_shape"), "make_tensor_descriptor": (3, "block_shape")}


def pipelined_loop(node: ast.AST) -> bool:
    """A loop the launch's num_stages pipelines: not `tl.static_range` (unrolled whole) nor a
    `tl.range` that sets its own num_stages (other than through a parameter named `num_stages`,
    which the launch option sets: Triton's softmax tutorial)."""
    if isinstance(node, ast.While):
        return True
    if not isinstance(node, ast.For):
        return False
    it = node.iter
    if isinstance(it, ast.Call) and last_name(it.func) == "static_range":
        return False
    return not (isinstance(it, ast.Call) and any(k.arg == "num_stages" and not (
        isinstance(k.value, ast.Name) and k.value.id == "num_stages") for k in it.keywords))
