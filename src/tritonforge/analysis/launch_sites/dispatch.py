"""Launchers called through a table (`_LAUNCH[x.dtype](x, out, n)`, the dispatch dicts of
lightllm's and SGLang's wrappers): each function or lambda the table holds, as a def that
launch analysis walks like any helper."""

from __future__ import annotations

import ast

from tritonforge.analysis.launch_sites.resolve import Scope, SourceModule


def table_launchers(module: SourceModule, f: ast.expr, scope: Scope) -> list[tuple[ast.FunctionDef, str]]:
    """(def, label) of each launcher a call `TABLE[key](...)` may reach: the file's functions
    and lambdas held as the values of a dict display bound once to TABLE."""
    if not (isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name)):
        return []
    table = module.exact_value(f.value.id, scope)
    if not isinstance(table, ast.Dict):
        return []
    out = []
    for key, value in zip(table.keys, table.values):
        label = f"{f.value.id}[{ast.unparse(key)}]" if key is not None else f.value.id
        if isinstance(value, ast.Lambda):
            out.append((as_def(value), label))
        elif isinstance(value, ast.Name) and value.id in module.functions and value.id not in module.kernels:
            out.append((module.functions[value.id], label))
    return out


def as_def(lam: ast.Lambda) -> ast.FunctionDef:
    """A lambda as the def it stands for, named as Python names its frame: its own nodes, so
    that the spans of its literals, and edits of them, are the file's."""
    body = [ast.copy_location(ast.Return(lam.body), lam.body)]
    return ast.copy_location(ast.FunctionDef("<lambda>", lam.args, body, [], None, None), lam)
