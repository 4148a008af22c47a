"""The entry's own launches, for recipes that rewrite more than one kernel at once."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonforge.analysis.kernel_source import Kernel, KernelSource


@dataclass(frozen=True)
class Launch:
    """One `kernel[grid](...)` statement of the entry's body."""

    index: int  # its position in the entry's body
    stmt: ast.Expr
    call: ast.Call
    kernel: Kernel


def entry_launches(ks: KernelSource, entry: str) -> tuple[ast.FunctionDef, list[Launch]] | str:
    """The entry function and the launches written as statements of its own body, or why not."""
    fn = next((n for n in ks.tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    if fn is None:
        return f"no function '{entry}' at the top level"
    launches = [Launch(i, s, s.value, ks.kernels[s.value.func.value.id]) for i, s in enumerate(fn.body)
                if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Subscript)
                and isinstance(s.value.func.value, ast.Name) and s.value.func.value.id in ks.kernels]
    if len(launches) < 2:
        return "fewer than two kernel launches in the entry's own body"
    return fn, launches
