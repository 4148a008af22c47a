"""Grouped tile order for 2-D tiled kernels with `tl.dot` (a matmul, say): programs that run
at the same time work on a group of neighbouring output tiles, so the input tiles they share
stay in L2 instead of each being read again from memory.

Two ways kernels number their tiles are recognised: two ids, `tl.program_id(0)` and
`tl.program_id(1)` on consecutive lines (a 2-D grid), and one id split on consecutive lines
into `pid // num_pid_n` and `pid % num_pid_n` (a 1-D grid, row by row). Either pair of lines
becomes one `tl.swizzle2d` over the launch order, which visits every tile exactly once: the
grid and the host code are left alone, and the file keeps its number of lines.

Every kernel of the file that numbers its tiles so is grouped, not only the first: after the
tma recipe a file holds the tensor-descriptor kernel that GPU cases launch beside the pointer
kernel that CPU tensors (and unaligned operands) take, and grouping only the first would time
the GPU's code unchanged.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource, program_axis
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import each_kernel

GROUP = 8  # tiles per group along the axis that varies slowest, as in Triton's matmul tutorial


class GroupedTileOrder(Recipe):
    name = "tile_order"
    points_to = frozenset({"l2_thrashing", "redundant_traffic", "compute_bound_tensor"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl = ks.alias("triton.language")
        if tl is None:
            return "triton.language is not imported under a name"

        def group(kernel: Kernel) -> list[Edit] | str:
            found = _why_not(ks, kernel) or (_grid_2d(ks, kernel, tl) if _reads(ks, kernel) == 2 else None) \
                or _grid_1d(ks, kernel, tl)
            if isinstance(found, str):
                return found
            first, last, text = found
            return [Edit(Place(first.lineno, first.col_offset, last.end_lineno, last.end_col_offset), text)]

        grouped = each_kernel(ks, group)
        if isinstance(grouped, str):
            return grouped
        edits, done = grouped
        return Rewrite(apply_edits(source, edits), f"{', '.join(done)}: tiles in groups of {GROUP} (tl.swizzle2d)")


Order = tuple[ast.stmt, ast.stmt, str]  # the first and last line replaced, and their new text


def _why_not(ks: KernelSource, kernel: Kernel) -> str | None:
    if not any(ks.tl_op(n.func) == "dot" for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        return "no tl.dot: not a tiled product"
    if any(ks.tl_op(n.func) in ("swizzle2d", "num_programs") for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        return "already reorders its tiles (swizzle2d or num_programs)"
    return None


def _reads(ks: KernelSource, kernel: Kernel) -> int:
    return sum(1 for n in ast.walk(kernel.fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "program_id")


def _two_lines(text_first: str, first: ast.stmt, prefix: str, rest: str) -> str:
    return f"{prefix}{text_first},  # grouped tile order\n{' ' * (first.col_offset + len(prefix))}{rest})"


def _grid_2d(ks: KernelSource, kernel: Kernel, tl: str) -> Order | None:
    """`x = tl.program_id(0)` and `y = tl.program_id(1)` (either order) on consecutive lines."""
    body = kernel.fn.body
    for first, second in zip(body, body[1:]):
        pair = (first, second)
        if not (all(_simple_id(ks, s) for s in pair) and {program_axis(s.value) for s in pair} == {0, 1}):
            continue
        if second.lineno != first.end_lineno + 1:
            return None
        names = {program_axis(s.value): s.targets[0].id for s in pair}
        a, b = names[0], names[1]  # id 0 varies fastest in the launch order
        return first, second, _two_lines(f"{tl}.program_id(1), {tl}.program_id(0)", first,
                                         f"{b}, {a} = {tl}.swizzle2d(", f"{tl}.num_programs(1), {tl}.num_programs(0), {GROUP}")
    return None


def _grid_1d(ks: KernelSource, kernel: Kernel, tl: str) -> Order | str:
    """`m = pid // n_tiles` and `n = pid % n_tiles` (either order) on consecutive lines, where
    `pid = tl.program_id(0)` is the only id read and one other tile count is computed."""
    body = kernel.fn.body
    pids = [s.targets[0].id for s in body if _simple_id(ks, s) and program_axis(s.value) == 0]
    if _reads(ks, kernel) != 1 or len(pids) != 1:
        return "its tiles come neither from tl.program_id(0) and (1) on consecutive lines nor from one id split by // and %"
    pid = pids[0]
    for first, second in zip(body, body[1:]):
        split = {_split(s, pid) for s in (first, second)}
        ops = {op for op, _ in (s for s in split if s)}
        if None in split or ops != {"//", "%"} or len({n for _, n in split}) != 1:
            continue
        if second.lineno != first.end_lineno + 1:
            return "its tile ids are not on consecutive lines"
        per_row = next(iter(split))[1]
        rows = [s.targets[0].id for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id != per_row and _tile_count(ks, s.value)]
        if len(rows) != 1:
            return "cannot tell which computed value is its number of tile rows"
        by_op = {_split(s, pid)[0]: s.targets[0].id for s in (first, second)}
        return first, second, _two_lines(f"{pid} // {per_row}, {pid} % {per_row}", first,
                                         f"{by_op['//']}, {by_op['%']} = {tl}.swizzle2d(", f"{rows[0]}, {per_row}, {GROUP}")
    return "its tiles come neither from tl.program_id(0) and (1) on consecutive lines nor from one id split by // and %"


def _split(stmt: ast.stmt, pid: str) -> tuple[str, str] | None:
    """("//" or "%", the divisor's name) for `x = pid // n` or `x = pid % n`."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    v = stmt.value
    if not (isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) and v.left.id == pid
            and isinstance(v.right, ast.Name) and isinstance(v.op, (ast.FloorDiv, ast.Mod))):
        return None
    return ("//" if isinstance(v.op, ast.FloorDiv) else "%"), v.right.id


def _tile_count(ks: KernelSource, value: ast.AST) -> bool:
    """`tl.cdiv(a, b)` or `(a + b - 1) // b`."""
    if isinstance(value, ast.Call):
        return ks.tl_op(value.func) == "cdiv"
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv) and isinstance(value.left, ast.BinOp)


def _simple_id(ks: KernelSource, stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and ks.tl_op(stmt.value.func) == "program_id"
            and program_axis(stmt.value) in (0, 1))
