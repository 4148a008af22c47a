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
