"""Grouped tile order for 2-D tiled kernels with `tl.dot` (a matmul, say): programs that run
at the same time work on a group of neighbouring output tiles, so the input tiles they share
stay in L2 instead of each being read again from memory.

The kernel's two tile indices, read from `tl.program_id(0)` and `tl.program_id(1)` on
consecutive lines, are replaced by `tl.swizzle2d` of the same two ids over the launch order
(id 0 varies fastest), which visits every tile exactly once: the grid and the host code are
left alone, and the file keeps its number of lines.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite

GROUP = 8  # tiles per group along the axis that varies slowest, as in Triton's matmul tutorial


class GroupedTileOrder(Recipe):
    name = "tile_order"

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        reasons = []
        for kernel in ks.kernels.values():
            found = _tile_ids(ks, kernel)
            if isinstance(found, str):
                reasons.append(f"{kernel.name}: {found}")
                continue
            tl = next((n for n, home in ks.aliases.items() if home == "triton.language"), None)
            if tl is None:
                reasons.append(f"{kernel.name}: triton.language is not imported under a name")
                continue
            first, second = found
            names = {_axis(ks, s.value): s.targets[0].id for s in found}
            a, b = names[0], names[1]  # id 0 varies fastest in the launch order
            prefix = f"{b}, {a} = {tl}.swizzle2d("
            text = (f"{prefix}{tl}.program_id(1), {tl}.program_id(0),  # grouped tile order\n"
                    f"{' ' * (first.col_offset + len(prefix))}{tl}.num_programs(1), {tl}.num_programs(0), {GROUP})")
            edit = Edit(Place(first.lineno, first.col_offset, second.end_lineno, second.end_col_offset), text)
            return Rewrite(apply_edits(source, [edit]), f"{kernel.name}: tiles in groups of {GROUP} (tl.swizzle2d)")
        return "; ".join(reasons) or "no Triton kernel in the file"


def _tile_ids(ks: KernelSource, kernel: Kernel) -> tuple[ast.Assign, ast.Assign] | str:
    """The two consecutive top-level assignments `x = tl.program_id(0)`, `y = tl.program_id(1)`
    (either order), or why the kernel is not a 2-D tiled one this recipe can reorder."""
    if not any(ks.tl_op(n.func) == "dot" for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        return "no tl.dot: not a tiled product"
    if any(ks.tl_op(n.func) in ("swizzle2d", "num_programs") for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        return "already reorders its tiles (swizzle2d or num_programs)"
    reads = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "program_id"]
    body = kernel.fn.body
    for first, second in zip(body, body[1:]):
        pair = (first, second)
        if all(_simple_id(ks, s) for s in pair) and {_axis(ks, s.value) for s in pair} == {0, 1}:
            if len(reads) != 2:
                return "reads program ids elsewhere too"
            if second.lineno != first.end_lineno + 1:
                return "its two program ids are not on consecutive lines"
            return pair
    return "its tiles do not come from tl.program_id(0) and tl.program_id(1) on consecutive lines"


def _simple_id(ks: KernelSource, stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and ks.tl_op(stmt.value.func) == "program_id"
            and _axis(ks, stmt.value) in (0, 1))


def _axis(ks: KernelSource, call: ast.Call) -> int | None:
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, int) else None
