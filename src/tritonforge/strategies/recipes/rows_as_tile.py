"""Row kernels launched one program per short row: ROWS rows a program, read as one 2-D tile.

rows_per_program unrolls the body once per row, and the compiler cannot move a row's loads
above the previous row's stores (they might alias), so a program still has one short row in
flight. Here the program's rows are one tile instead: the row id
becomes a column of ROWS ids (`pid * ROWS + tl.arange(0, ROWS)[:, None]`), the row's block of
columns a row of the tile (`tl.arange(0, BLOCK)[None, :]`), and every reduction runs along
the columns and keeps that axis (`axis=1, keep_dims=True`), so what was one value per row is
one per tile row and broadcasts as before. All ROWS rows are loaded at once. Loads and stores
are masked by `row < n_rows` as well, so the last program's spare rows touch nothing.

Applies only where every value of the kernel is a scalar or one block of a row, so that this
reading is the same computation: everything rows_per_program asks (one program id on axis 0,
no `tl.dot`, atomics, block pointers or early `return`, a grid of one program per row), and
besides no loop, no indexing, no helper call, and no triton.language function outside those
listed in `_ELEMENTWISE` and `_REDUCTIONS`. A reduction splits a row differently over a tile's
threads than over a block's, hence `rounding`.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource
from tritonforge.strategies.editing import Edit, Place, apply_edits, insert_keywords
from tritonforge.strategies.recipes import rows_per_program as rows
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import first_kernel

MAX_ROWS = 64  # rows a tile at most (a power of two, as tl.arange needs)
_REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "xor_sum"})
_ELEMENTWISE = frozenset({
    "program_id", "arange", "load", "store", "where", "maximum", "minimum", "clamp", "exp", "exp2", "log", "log2",
    "sqrt", "sqrt_rn", "rsqrt", "abs", "fma", "sigmoid", "erf", "cos", "sin", "floor", "ceil", "cdiv", "fdiv",
    "div_rn", "full", "zeros", "cast", "multiple_of", "max_contiguous", "static_assert", "constexpr"})
_BUILTINS = frozenset({"float", "int", "min", "max"})  # on constexprs and scalars only


class RowsAsTile(Recipe):
    name = "rows_as_tile"
    rounding = "a row's reduction runs along a 2-D tile's columns, which its threads may split differently"
    points_to = rows.RowsPerProgram.points_to

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl, triton = ks.alias("triton.language"), ks.alias("triton")
        if tl is None or triton is None:
            return "triton and triton.language are not both imported under a name"

        def tile(kernel: Kernel) -> Rewrite | str:
            plan = rows.share_rows(ks, kernel, tl, triton, "rows_a_tile", MAX_ROWS, self.name,
                                   lambda plan: _not_one_block(ks, kernel, plan))
            if isinstance(plan, str):
                return plan
            edits, plan = plan
            return Rewrite(apply_edits(source, _kernel_edits(ks, kernel, plan, tl) + edits),
                           f"{kernel.name}: up to {MAX_ROWS} short rows a program as one 2-D tile (about "
                           f"{rows.ROW_ELEMENTS} elements), the grid divided to match")

        return first_kernel(ks, tile)


def _not_one_block(ks: KernelSource, kernel: Kernel, plan: rows._Plan) -> str | None:
    """Why some value of the kernel may be more than a scalar or one block of a row."""
    fn = kernel.fn
    if plan.flag is not None or any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(fn)):
        return "loops: a tile of rows would change what each iteration reads"
    if any(isinstance(n, ast.Subscript) for n in ast.walk(fn)):
        return "indexes a value (a 2-D shape or a tuple): not one block of a row"
    if not plan.blocks:
        return "reads its row with no tl.arange over a constexpr block"
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        op = ks.tl_op(call.func)
        if op is None:
            if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
                continue
            if isinstance(call.func, ast.Name) and call.func.id in _BUILTINS:
                continue
            return f"calls {ast.unparse(call.func)}, which a tile of rows may not suit"
        if op not in _ELEMENTWISE | _REDUCTIONS:
            return f"uses tl.{op}, which a tile of rows may not suit"
        if op == "arange" and not _column_arange(call, plan):
            return f"has a tl.arange other than tl.arange(0, {' or '.join(plan.blocks)})"
        if op in _REDUCTIONS:
            why = _reduction_why_not(call)
            if why:
                return why
    return None


def _column_arange(call: ast.Call, plan: rows._Plan) -> bool:
    return len(call.args) == 2 and not call.keywords and isinstance(call.args[0], ast.Constant) \
        and call.args[0].value == 0 and isinstance(call.args[1], ast.Name) and call.args[1].id in plan.blocks


def _reduction_why_not(call: ast.Call) -> str | None:
    """A reduction this rewrite can turn to the columns: over the whole block (axis 0 or none),
    returning one value."""
    known = {"axis", "keep_dims"}
    if len(call.args) > 2 or any(k.arg not in known for k in call.keywords):
        return f"calls {ast.unparse(call.func)} with arguments beyond the input, axis and keep_dims"
    axis = call.args[1] if len(call.args) == 2 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value in (0, None)):
        return f"reduces along {ast.unparse(axis)}: not along its one block"
    return None


def _kernel_edits(ks: KernelSource, kernel: Kernel, plan: rows._Plan, tl: str) -> list[Edit]:
    """ROWS and the row count as parameters, the row a column of ids, the block a row of the
    tile, every reduction along the columns, every access masked by the row."""
    live, count = plan.names["live"], plan.count or plan.names["count"]
    ids = f"({tl}.program_id(0) * {rows.ROWS} + {tl}.arange(0, {rows.ROWS})[:, None])"
    first = kernel.fn.body[1] if rows._docstring(kernel.fn) else kernel.fn.body[0]
    edits = [rows.row_parameters(kernel, plan, tl), Edit(Place.of(plan.pid), ids),
             Edit(Place.point(first.lineno, first.col_offset),
                  f"{live} = {ids} < {count}  # ROWS rows a program as one tile (rows_as_tile); spare rows are masked\n"
                  + " " * first.col_offset)]
    for call in (n for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        op = ks.tl_op(call.func)
        if op == "arange":
            edits.append(Edit(_end(call), "[None, :]"))
        elif op in _REDUCTIONS:
            edits += _along_columns(call)
        elif op in ("load", "store"):
            edits += rows.masked(ks, call, op, live, tl)
    return edits


def _along_columns(call: ast.Call) -> list[Edit]:
    """`axis=1, keep_dims=True` in place of the reduction's axis and keep_dims."""
    edits = [Edit(Place.of(k.value), "True" if k.arg == "keep_dims" else "1") for k in call.keywords]
    if len(call.args) == 2:
        edits.append(Edit(Place.of(call.args[1]), "1"))
    given = {k.arg for k in call.keywords} | ({"axis"} if len(call.args) == 2 else set())
    missing = [(k, v) for k, v in (("axis", "1"), ("keep_dims", "True")) if k not in given]
    return edits + ([insert_keywords(call, missing)] if missing else [])


def _end(node: ast.AST) -> Place:
    return Place.point(node.end_lineno, node.end_col_offset)
