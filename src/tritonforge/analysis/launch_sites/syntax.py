"""Small `ast` helpers for launch code: spans, constant folding, defaults, and every
way a name is bound in a function or module body."""

from __future__ import annotations

import ast
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

from tritonforge.analysis.astfold import fold_binop, last_name
from tritonforge.analysis.launch_sites.model import Span


def span_of(node: ast.AST, delta: int = 0) -> Span:
    return Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, delta)  # type: ignore[attr-defined]


def literal_span(node: ast.Constant) -> Span:
    """Where a literal's value is written: a string of digits (an environment variable's
    default) inside its quotes, so that the new digits keep them."""
    if isinstance(node.value, str) and node.lineno == node.end_lineno and \
            node.end_col_offset - node.col_offset == len(node.value) + 2:  # type: ignore[operator]
        return Span(node.lineno, node.col_offset + 1, node.end_lineno, node.end_col_offset - 1)  # type: ignore[arg-type]
    return span_of(node)


def env_default(node: ast.expr) -> ast.Constant | None:
    """The default of `int(os.getenv("NAME", "64"))` (or `os.environ.get`), a string of digits,
    where NAME is not set in this process (a variable that is set is the user's and stays)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int"
            and len(node.args) == 1 and isinstance(inner := node.args[0], ast.Call)):
        return None
    if ast.unparse(inner.func) not in ("os.getenv", "os.environ.get") or len(inner.args) != 2 or inner.keywords:
        return None
    name, default = inner.args
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value not in os.environ):
        return None
    ok = isinstance(default, ast.Constant) and isinstance(default.value, str) and default.value.isdigit()
    return default if ok else None  # type: ignore[return-value]


def fold(node: ast.expr) -> int | None:
    """The integer a constant expression stands for (`64`, `1 << 10`, `2 * 32`), else None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = fold(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp):
        a, b = fold(node.left), fold(node.right)
        if a is None or b is None:
            return None
        return fold_binop(node.op, a, b)
    return None


def walk_local(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, lambdas, classes."""
    stack = list(reversed(getattr(fn, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def defaults_of(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    out = {p.arg: d for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)}
    out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return out


@dataclass(frozen=True)
class Binding:
    value: ast.expr | None  # None: bound in a way we do not follow (loop, import, +=)
    exact: bool  # False: one part of an unpacked value (`M, K = a.shape`)
    part: int | None = None  # which part, for a name of a flat tuple target (`kernel, block = ...`)


def bindings(nodes: Iterable[ast.AST]) -> dict[str, list[Binding]]:
    """Every way each name is bound among `nodes` (one function's or the module's body)."""
    out: dict[str, list[Binding]] = defaultdict(list)
    for node in nodes:
        _note_binding(node, out)
    return out


def _note_binding(node: ast.AST, out: dict[str, list[Binding]]) -> None:
    if isinstance(node, ast.Assign):
        for t in node.targets:
            _bind_target(t, node.value, out)
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        _bind_target(node.target, node.value, out)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        out[node.target.id].append(Binding(None, False))
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        for n in ast.walk(node.target):
            if isinstance(n, ast.Name):
                out[n.id].append(Binding(None, False))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            for n in ast.walk(item.optional_vars) if item.optional_vars else ():
                if isinstance(n, ast.Name):
                    out[n.id].append(Binding(None, False))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for a in node.names:
            out[(a.asname or a.name).split(".")[0]].append(Binding(None, False))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out[node.name].append(Binding(None, False))


def _bind_target(target: ast.expr, value: ast.expr, out: dict[str, list[Binding]]) -> None:
    if isinstance(target, ast.Name):
        out[target.id].append(Binding(value, True))
    elif isinstance(target, (ast.Tuple, ast.List)):
        same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
        if same and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]):
            for t, v in zip(target.elts, value.elts):  # type: ignore[union-attr]
                _bind_target(t, v, out)
            return
        flat = not any(isinstance(e, ast.Starred) for e in target.elts)
        for i, e in enumerate(target.elts):
            for n in ast.walk(e):
                if isinstance(n, ast.Name):
                    out[n.id].append(Binding(value, False, i if flat and n is e else None))


def record_fields(cls: ast.ClassDef) -> list[tuple[str, ast.expr | None]] | None:
    """A `@dataclass` or `typing.NamedTuple` class's fields in order, with their defaults
    (`field(default=...)` read through, and a `default_factory` lambda's body, which each
    instance gets anew); None for any other class."""
    marks = [last_name(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list]
    if "dataclass" not in marks and not any(last_name(b) == "NamedTuple" for b in cls.bases):
        return None
    out = []
    for n in cls.body:
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            value = n.value
            if isinstance(value, ast.Call) and last_name(value.func) == "field":
                given = {k.arg: k.value for k in value.keywords}
                factory = given.get("default_factory")  # `field(default_factory=lambda: {"BLOCK": 128})`
                value = given.get("default", factory.body if isinstance(factory, ast.Lambda) else None)
            out.append((n.target.id, value))
    return out


def keyword_dict(call: ast.Call) -> ast.Dict:
    """`dict(**base, BLOCK=64)` as the display `{**base, "BLOCK": 64}`."""
    return ast.Dict([None if k.arg is None else ast.Constant(k.arg) for k in call.keywords],
                    [k.value for k in call.keywords])


def config_table(call: ast.Call) -> ast.expr | None:
    """The kwargs dict a `triton.Config(...)` call is given, positionally or as `kwargs=`."""
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "kwargs"), None)


def dict_update(stmt: ast.Expr) -> tuple[str, list[tuple[ast.expr, ast.expr]]] | None:
    """`name.update(k=v, ...)` or `name.update({"k": v, ...})`: the name and the items it adds."""
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"
            and isinstance(call.func.value, ast.Name)):
        return None
    items: list[tuple[ast.expr, ast.expr]] = [(ast.Constant(k.arg), k.value) for k in call.keywords if k.arg]
    if len(items) != len(call.keywords) or len(call.args) > 1:
        return None
    if call.args:
        if not isinstance(call.args[0], ast.Dict) or any(k is None for k in call.args[0].keys):
            return None
        items = [*zip(call.args[0].keys, call.args[0].values), *items]  # type: ignore[list-item]
    return call.func.value.id, items


def dict_setdefault(stmt: ast.Expr) -> tuple[str, ast.expr, ast.expr] | None:
    """`name.setdefault(key, value)` as a statement: the name, the key, and the value the dict
    gets where it lacks the key."""
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "setdefault"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 2 and not call.keywords):
        return None
    return call.func.value.id, call.args[0], call.args[1]


def item_columns(items: list[ast.expr]) -> dict[int, tuple[ast.Constant, ...]] | None:
    """Work items of a loop that launches once per item (apex's multi-tensor apply: `for src,
    dst, block in [(a, out_a, 32), (b, out_b, 32)]`): each position holding one integer in
    every item, as that column's literals keyed by the first item's; None where the items are
    not tuples of one length or a position holds integers that differ (the launches would then
    differ from item to item, and moving the first would move one launch of several)."""
    if not items or not all(isinstance(i, ast.Tuple) for i in items) \
            or len({len(i.elts) for i in items}) != 1:  # type: ignore[attr-defined]
        return None
    out: dict[int, tuple[ast.Constant, ...]] = {}
    for column in zip(*(i.elts for i in items)):  # type: ignore[attr-defined]
        ints = [c.value for c in column if isinstance(c, ast.Constant) and type(c.value) is int]
        if not ints:
            continue
        if len(ints) != len(column) or len(set(ints)) > 1:
            return None
        out[id(column[0])] = column  # type: ignore[assignment]
    return out


def returned_list(fn: ast.FunctionDef | None) -> ast.List | ast.Tuple | None:
    """The list a helper of no parameters returns, when its body is that `return [...]` alone
    (xformers' `get_configs()`, whose configs carry pre_hooks a run-time copy cannot write)."""
    if fn is None or fn.args.args or fn.args.posonlyargs or fn.args.vararg or fn.args.kwonlyargs:
        return None
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
        fn.body[0].value, ast.Constant) else fn.body  # a docstring
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, (ast.List, ast.Tuple)):
        return body[0].value
    return None
