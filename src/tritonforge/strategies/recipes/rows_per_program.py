"""Row kernels launched one program per row: several short rows a program.

A row kernel given one short row a program (a few hundred elements) does little work per
program: launch and scheduling overhead, and the latency of its one or two loads, are paid
per row. Handing each program ROWS consecutive rows amortizes them and gives the compiler
independent rows to overlap.

The rewrite wraps the kernel's body in `for r in tl.static_range(ROWS):` with the row
`pid * ROWS + r` in place of the program id, and masks every load and store by
`row < n_rows` as well, so the last program's spare rows touch nothing. The launch sets
ROWS from the block a row is read in (up to 8 rows, about 4096 elements a program, in a
local the launch search can tune) and divides its grid by it. Each row is computed exactly
as before, so rounding does not change.

Applies only where that is the same computation: the program id read once, on axis 0, in a
top-level assignment, and not scaled by a block a `tl.arange` spans (that is a tile, not a row); no loop over
the row with a runtime bound (long rows are not this recipe), except in the `else` of a
constexpr flag the launch sets (row_one_pass's fallback, where ROWS is then 1); no early
`return`, `tl.dot`, atomics, `tl.num_programs` or block pointers; a grid of one entry, as a
tuple, a name set to one, or `lambda meta: (...)`, that does not divide a count into blocks.
"""

from __future__ import annotations

import ast
from typing import Callable

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, program_axis
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keywords
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import first_kernel, fresh_name, per_launch, statement_of

MAX_ROWS = 8  # rows a program at most: the body is unrolled that many times
ROW_ELEMENTS = 4096  # elements a program aims at: rows of BLOCK share a program up to this
ROWS = "ROWS"
_LOAD_ARGS, _STORE_ARGS = ("pointer", "mask", "other"), ("pointer", "value", "mask")


class RowsPerProgram(Recipe):
    name = "rows_per_program"
    points_to = frozenset({"latency_bound_little_in_flight", "latency_bound_low_occupancy",
                           "memory_bound_far_from_peak"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl, triton = ks.alias("triton.language"), ks.alias("triton")
        if tl is None or triton is None:
            return "triton and triton.language are not both imported under a name"

        def share(kernel: Kernel) -> Rewrite | str:
            plan = share_rows(ks, kernel, tl, triton, "rows_per_program", MAX_ROWS, self.name)
            if isinstance(plan, str):
                return plan
            edits, plan = plan
            rewritten = _wrap_body(apply_edits(source, _kernel_edits(ks, kernel, plan, tl) + edits),
                                   kernel.name, plan, tl)
            return Rewrite(rewritten, f"{kernel.name}: up to {MAX_ROWS} short rows a program "
                                      f"(about {ROW_ELEMENTS} elements), the grid divided to match")

        return first_kernel(ks, share)


def share_rows(ks: KernelSource, kernel: Kernel, tl: str, triton: str, local: str, max_rows: int, recipe: str,
               check: Callable[["_Plan"], str | None] = lambda plan: None) -> tuple[list[Edit], "_Plan"] | str:
    """The host's edits for a kernel whose programs are to take up to `max_rows` rows (ROWS in
    a local named after `local`, the grid divided by it), and the kernel's plan with its row
    count found; or why not (`check`: a recipe's own reason to refuse the plan)."""
    plan = _plan(ks, kernel, tl)
    if isinstance(plan, str):
        return plan
    why = check(plan)
    if why:
        return why
    taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
    var = fresh_name(local, taken)
    host = per_launch(ks, kernel, lambda call: _host_edits(ks, kernel, call, plan, triton, var, max_rows, recipe))
    if isinstance(host, str):
        return host
    counts = {count for _, count in host}
    if len(counts) != 1:
        return "its launches pass the row count to different parameters"
    plan.count = counts.pop()
    return [e for h, _ in host for e in h], plan


def row_parameters(kernel: Kernel, plan: "_Plan", tl: str) -> Edit:
    """The kernel's new parameters: the row count (where no parameter holds it yet) and ROWS."""
    new = ([] if plan.count else [plan.names["count"] + ("=0" if kernel.fn.args.defaults else "")]) \
        + [f"{ROWS}: {tl}.constexpr = 1"]
    return append_parameter(kernel.fn, ", ".join(new))


def masked(ks: KernelSource, call: ast.Call, op: str, live: str, tl: str) -> list[Edit]:
    """A load's or store's mask also requiring `live` (the row exists)."""
    mask = call_arguments(call, _LOAD_ARGS if op == "load" else _STORE_ARGS).get("mask")
    if mask is None:
        return [insert_keywords(call, [("mask", live)])]
    if isinstance(mask, ast.Constant) and mask.value is None:
        return [Edit(Place.of(mask), live)]
    # `where`, not `mask & live`: Triton 3.9's interpreter refuses the scalar-and-block `&`
    # (its mask comes out int32); `where` gives a boolean block in both. Written around the
    # mask, not in its place, so that edits inside it still apply.
    return [Edit(Place.point(mask.lineno, mask.col_offset), f"{tl}.where({live}, "),
            Edit(Place.point(mask.end_lineno, mask.end_col_offset), ", False)", order=1)]


class _Plan:
    """What the rewrite of one kernel needs."""

    def __init__(self, pid: ast.Call, flag: str | None, blocks: list[str], saved: list[str], names: dict[str, str]):
        self.pid = pid  # the one tl.program_id(0) call
        self.flag = flag  # a constexpr flag whose `else` holds the row loops (ROWS is 1 there)
        self.blocks = blocks  # constexpr parameters a row is read in blocks of (tl.arange bounds)
        self.saved = saved  # parameters the body reassigns: each row starts from their value
        self.names = names  # fresh kernel-local names: r, row, live, count, and one per saved parameter
        self.count: str | None = None  # the existing parameter holding the row count, if any


def _plan(ks: KernelSource, kernel: Kernel, tl: str) -> _Plan | str:
    fn = kernel.fn
    if kernel.autotuned or kernel.heuristics:
        return "its block is set by @triton.autotune or @triton.heuristics"
    if ROWS in kernel.params:
        return "already handles several rows a program"
    if fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
        return "keyword-only or variadic parameters"
    ops = {ks.tl_op(n.func) or "" for n in ast.walk(fn) if isinstance(n, ast.Call)}
    why = _forbidden(fn, ops)
    if why:
        return why
    pid = _program_id(ks, fn, kernel.constexprs)
    if isinstance(pid, str):
        return pid
    flag, why = _row_loops(ks, kernel)
    if why:
        return why
    why = _helpers_touch_memory(ks, fn)
    if why:
        return why
    blocks = sorted({n.args[1].id for n in ast.walk(fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "arange"
                     and len(n.args) == 2 and isinstance(n.args[1], ast.Name) and n.args[1].id in kernel.constexprs})
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    saved = [p for p in kernel.params if p in stored]
    taken = set(kernel.params) | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    names = {k: fresh_name(v, taken) for k, v in
             (("r", "_r"), ("row", "_row"), ("live", "_row_live"), ("count", "n_rows_total"))}
    names.update({p: fresh_name(f"_{p}_first", taken) for p in saved})
    return _Plan(pid, flag, blocks, saved, names)


def _forbidden(fn: ast.FunctionDef, ops: set[str]) -> str | None:
    """What in the kernel the per-row loop cannot keep the same."""
    if any(isinstance(n, ast.Return) for n in ast.walk(fn)):
        return "returns early: the rows after it in a program would be skipped"
    if "dot" in ops:
        return "uses tl.dot: a tile kernel, not a row kernel"
    if any(op.startswith("atomic") for op in ops):
        return "uses atomics: what it stores may depend on the order programs run in"
    if "num_programs" in ops:
        return "reads tl.num_programs, which the rewrite changes"
    if ops & {"make_block_ptr", "make_tensor_descriptor", "advance"}:
        return "uses block pointers, which a row mask cannot guard"
    return None


def _program_id(ks: KernelSource, fn: ast.FunctionDef, constexprs: tuple[str, ...]) -> ast.Call | str:
    """The one `name = ...tl.program_id(0)...` at the kernel's top level, not scaled by a block."""
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "program_id"]
    if not calls:
        return "does not read its program id"
    if len(calls) > 1 or program_axis(calls[0]) != 0:
        return "reads program ids on other axes or more than once: not one program per row"
    stmt = next((s for s in fn.body if any(n is calls[0] for n in ast.walk(s))), None)
    row = stmt.targets[0].id if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) else None
    # `pid * BLOCK`, BLOCK a tl.arange extent: the program's first element, not its row. A
    # constexpr that is no extent (`x += pid * D`, D the row length) is a row's stride.
    extents = {ast.unparse(n.args[-1]) for n in ast.walk(fn) if isinstance(n, ast.Call)
               and ks.tl_op(n.func) == "arange" and n.args}
    for n in ast.walk(fn):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            sides = {ast.unparse(n.left), ast.unparse(n.right)}
            scale = sides - {row, ast.unparse(calls[0])}
            if len(scale) < len(sides) and scale and scale <= (set(constexprs) | set(ks.constants)) & extents:
                return f"scales its program id by the constexpr {scale.pop()}: each program handles a tile, not a row"
    if not (row and len(stmt.targets) == 1 and (stmt.value is calls[0] or _is_cast(stmt.value, calls[0]))):
        return "does not set its row from tl.program_id(0) in a top-level assignment"
    return calls[0]


def _is_cast(value: ast.expr, pid: ast.Call) -> bool:
    """`tl.program_id(0).to(tl.int64)`: the row read as a wider integer."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
        and value.func.value is pid


def _row_loops(ks: KernelSource, kernel: Kernel) -> tuple[str | None, str | None]:
    """(the constexpr flag whose `else` holds every loop with a runtime bound, if any; why not)."""
    static = set(kernel.constexprs) | set(ks.constants) | {"range", "min", "max"} | set(ks.aliases)
    flag = None
    for stmt in kernel.fn.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id in kernel.constexprs \
                and not _runtime_loop(stmt.body, static) and _runtime_loop(stmt.orelse, static):
            if flag is not None and flag != stmt.test.id:
                return None, "keeps its row loops behind more than one constexpr flag"
            flag = stmt.test.id
        elif _runtime_loop([stmt], static):
            return None, "loops over the row with a runtime bound: long rows are not this recipe"
    return flag, None


def _runtime_loop(stmts: list[ast.stmt], static: set[str]) -> bool:
    """A `while`, or a `for` whose range reads a name that is not a constexpr or a constant."""
    for node in (n for s in stmts for n in ast.walk(s)):
        if isinstance(node, ast.While):
            return True
        if isinstance(node, ast.For) and {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)} - static:
            return True
    return False


def _helpers_touch_memory(ks: KernelSource, fn: ast.FunctionDef) -> str | None:
    """Jit helpers the kernel calls are not masked by the row: they must not load or store."""
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        helper = ks.kernels.get(call.func.id)
        if helper and any(isinstance(n, ast.Call) and (ks.tl_op(n.func) or "") in ("load", "store")
                          for n in ast.walk(helper.fn)):
            return f"calls {helper.name}, whose loads and stores the row mask cannot reach"
    return None


def _kernel_edits(ks: KernelSource, kernel: Kernel, plan: _Plan, tl: str) -> list[Edit]:
    """The row count and ROWS as parameters, the program id read as the row, every access masked."""
    live = plan.names["live"]
    edits = [row_parameters(kernel, plan, tl), Edit(Place.of(plan.pid), plan.names["row"])]
    for call in (n for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)):
        op = ks.tl_op(call.func)
        if op in ("load", "store"):
            edits += masked(ks, call, op, live, tl)
    return edits


def _wrap_body(source: str, name: str, plan: _Plan, tl: str) -> str:
    """The kernel's body (after its docstring) indented under the loop over its rows."""
    fn = KernelSource(source).kernels[name].fn
    body = fn.body[1:] if _docstring(fn) else fn.body
    first, n = body[0], plan.names
    pad = " " * first.col_offset
    count = plan.count or n["count"]
    head = [f"{n[p]} = {p}  # each row starts from the parameter's own value" for p in plan.saved]
    head += [f"for {n['r']} in {tl}.static_range({ROWS}):  # {ROWS} consecutive rows a program (rows_per_program)",
             f"    {n['row']} = {tl}.program_id(0) * {ROWS} + {n['r']}",
             f"    {n['live']} = {n['row']} < {count}  # the last program's spare rows load and store nothing"]
    head += [f"    {p} = {n[p]}" for p in plan.saved]
    lines = source.splitlines(keepends=True)
    start, end = first.lineno - 1, body[-1].end_lineno
    inner = [("    " + line if line.strip() else line) for line in lines[start:end]]
    return "".join(lines[:start] + [pad + h + "\n" for h in head] + inner + lines[end:])


def _docstring(fn: ast.FunctionDef) -> bool:
    s = fn.body[0]
    return len(fn.body) > 1 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) \
        and isinstance(s.value.value, str)


def _host_edits(ks: KernelSource, kernel: Kernel, call: ast.Call, plan: _Plan, triton: str, var: str,
                max_rows: int, recipe: str) -> tuple[list[Edit], str | None] | str:
    """ROWS (at most `max_rows`) chosen in a local before the launch, the grid divided by it,
    ROWS and the row count passed; also the existing parameter that already holds the row
    count, if one does."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return "its launch passes arguments with * or **"
    grid = _grid(ks, call, triton, var)
    if isinstance(grid, str):
        return grid
    node, rows, new_grid = grid
    args = call_arguments(call, kernel.params)
    rows_text = _rows_expr(ks, kernel, args, plan, max_rows)
    if rows_text is None:
        return f"its launch does not pass {', '.join(plan.blocks + ([plan.flag] if plan.flag else []))}"
    stmt = statement_of(ks.tree, call)
    if stmt is None:
        return "its launch is not inside a function's statements"
    count = next((p for p, a in args.items() if p not in kernel.constexprs and ks.text(a) == rows), None)
    edits = [Edit(Place.point(stmt.lineno, stmt.col_offset), f"{var} = {rows_text}  # rows a program handles: "
                                                             f"short rows share one ({recipe})\n"
                                                             + " " * stmt.col_offset),
             Edit(Place.of(node), new_grid),
             insert_keywords(call, ([] if count else [(plan.names["count"], rows)]) + [(ROWS, var)], order=3)]
    return edits, count


def _rows_expr(ks: KernelSource, kernel: Kernel, args: dict[str, ast.AST], plan: _Plan,
               max_rows: int) -> str | None:
    """`max(1, min(8, 4096 // BLOCK))`, 1 where the launch's flag takes the row loops."""
    defaults = dict(zip([a.arg for a in kernel.fn.args.args][-len(kernel.fn.args.defaults):],
                        kernel.fn.args.defaults)) if kernel.fn.args.defaults else {}
    values = [args.get(b, defaults.get(b)) for b in plan.blocks]
    if None in values:
        return None
    texts = [ks.text(v) for v in values]
    block = texts[0] if len(texts) == 1 else f"max({', '.join(texts)})"
    expr = f"max(1, min({max_rows}, {ROW_ELEMENTS} // {block}))" if texts else str(max_rows)
    if plan.flag is None:
        return expr
    flag = args.get(plan.flag)
    return None if flag is None else f"({expr} if {ks.text(flag)} else 1)"


def _grid(ks: KernelSource, call: ast.Call, triton: str, var: str) -> tuple[ast.AST, str, str] | str:
    """(what to replace, the row count's text at the launch, the divided grid) for `(M,)`, a
    name set to a one-entry tuple, or `lambda meta: (M,)`; or why the row count is unknown."""
    g = call.func.slice
    if isinstance(g, ast.Lambda):
        if not isinstance(g.body, ast.Tuple) or len(g.body.elts) != 1:
            return "its grid lambda does not return a one-entry tuple: not one program per row"
        args = {a.arg for a in g.args.args}
        elt = g.body.elts[0]
        if any(isinstance(n, ast.Name) and n.id in args for n in ast.walk(elt)):
            return "its grid is computed from the launch's meta-parameters: not one program per row"
        node, rows = g.body, ks.text(elt)
    elif isinstance(g, ast.Tuple):
        if len(g.elts) != 1:
            return f"its grid has {len(g.elts)} axes: not one program per row"
        node, rows, elt = g, ks.text(g.elts[0]), g.elts[0]
    elif isinstance(g, ast.Name):
        sets = [n.value for n in ast.walk(ks.tree) if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == g.id for t in n.targets)]
        if not sets or not all(isinstance(v, ast.Tuple) and len(v.elts) == 1 for v in sets):
            return f"its grid '{g.id}' is not set to a one-entry tuple: cannot tell the row count"
        node, rows, elt = g, f"{g.id}[0]", sets[0].elts[0]
    else:
        return "its grid is neither a tuple, a name set to one, nor a lambda: cannot tell the row count"
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) or isinstance(n, ast.Call)
           and ast.unparse(n.func).split(".")[-1] == "cdiv" for n in ast.walk(elt)):
        return "its grid divides a count into blocks: programs are tiles, not rows"
    return node, rows, f"({triton}.cdiv({rows}, {var}),)"
