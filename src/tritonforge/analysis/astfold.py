"""Small AST helpers of the analysis: constant folding of integer arithmetic in kernel and launch
code (block sizes, shifts), and the name a call or decorator ends with or is dotted as."""

from __future__ import annotations

import ast


def last_name(func: ast.expr) -> str:
    """`tl.arange` -> "arange", `triton.Config` -> "Config", `f` -> "f", `make()` -> "make"."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Call):
        return last_name(func.func)
    return ""


def dotted_name(node: ast.AST) -> str:
    """`torch.ops.ns.op` -> "torch.ops.ns.op"; below a call or subscript, the names after it
    (`x().a.b` -> "a.b")."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def fold_binop(op: ast.operator, a: int | None, b: int | None) -> int | None:
    """`a op b` for the integer operators launch code uses; None when unknown or unsafe."""
    if a is None or b is None:
        return None
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.FloorDiv) and b:
        return a // b
    if isinstance(op, ast.Mod) and b:
        return a % b
    if isinstance(op, ast.LShift) and 0 <= b < 64:
        return a << b
    if isinstance(op, ast.Pow) and 0 <= b < 64:
        return a**b
    return None


def params_of(fn: ast.FunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def bind_call(fn: ast.FunctionDef, call: ast.Call, skip: int = 0) -> dict[str, ast.expr]:
    """Which argument expression each parameter of `fn` receives at `call`; `skip`: leading
    parameters the call does not pass (a method's `self`, an autograd Function's `ctx`)."""
    out: dict[str, ast.expr] = {}
    positional = [p.arg for p in [*fn.args.posonlyargs, *fn.args.args]][skip:]
    for name, arg in zip(positional, call.args):
        if isinstance(arg, ast.Starred):
            break  # later positions are unknown
        out[name] = arg
    named = {p.arg for p in params_of(fn)}
    extra = [kw for kw in call.keywords if kw.arg is not None and kw.arg not in named]
    for kw in call.keywords:
        if kw.arg is not None and (kw.arg in named or fn.args.kwarg is None):
            out[kw.arg] = kw.value
    if fn.args.kwarg is not None and not any(kw.arg is None for kw in call.keywords):
        # `**kw` receives the keywords no parameter takes: a dict of them, as written at the call.
        # Placed at the call, as the caller's other arguments are (replay reads it in the caller).
        made = ast.Dict([ast.Constant(kw.arg) for kw in extra], [kw.value for kw in extra])
        out[fn.args.kwarg.arg] = ast.copy_location(made, call)
    return out
