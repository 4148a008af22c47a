"""Launches behind PyTorch operators the file registers: `torch.ops.NS.NAME(...)` is followed
to the function registered as that operator, by decorator (`@torch.library.custom_op`,
`@triton_op`) or by a call at import (`lib.impl`, vLLM's `direct_register_custom_op`)."""

from __future__ import annotations

import ast

from tritonforge.analysis.astfold import dotted_name
from tritonforge.analysis.launch_sites.resolve import SourceModule
from tritonforge.analysis.launch_sites.syntax import last_name
from tritonforge.problem.custom_ops import library_namespaces


def library_op(module: SourceModule, f: ast.expr) -> str | None:
    """The function of this file `torch.ops.NS.NAME(...)` (or `.default`) calls, or None."""
    parts = dotted_name(f).split(".") if isinstance(f, ast.Attribute) else []
    if parts[:2] != ["torch", "ops"] or len(parts) not in (4, 5) or parts[4:] not in ([], ["default"]):
        return None
    qualified = f"{parts[2]}::{parts[3]}"
    decorated = next((name for name, fn in module.functions.items() for d in fn.decorator_list
                      if isinstance(d, ast.Call) and last_name(d.func) in ("custom_op", "triton_op") and d.args
                      and isinstance(d.args[0], ast.Constant) and d.args[0].value == qualified), None)
    return decorated or _registered_impl(module, parts[2], parts[3])


def _registered_impl(module: SourceModule, ns: str, op: str) -> str | None:
    """The function a call at import registers as operator `op` of a namespace one of the
    file's libraries defines: `lib.impl("op", fn, ...)`, or a helper taking the name and the
    function first (vLLM's `direct_register_custom_op("op", fn, mutates_args=...)`)."""
    if ns not in library_namespaces(module.tree).values():
        return None
    for stmt in module.tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and len(call.args) >= 2 and isinstance(call.args[0], ast.Constant) \
                and str(call.args[0].value).split("(")[0] == op and isinstance(call.args[1], ast.Name) \
                and call.args[1].id in module.functions:
            return call.args[1].id
    return None
