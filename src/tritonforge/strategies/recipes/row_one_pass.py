"""Row kernels that read their row more than once: hold the row in registers, read it once.

A row kernel written for any row length walks the row in blocks, once per pass (the
maximum, then the sum of exponentials, then the output, say), so each element is loaded
from memory once per pass. When the row fits in one block, every pass is one iteration
over the same addresses, and the later loads can reuse the first one's values.

The rewrite keeps the general code and adds a one-pass path beside it, chosen by a
constexpr flag the launch sets from the row length: rows up to `CAP` elements get a block
that covers them (the next power of two) and the one-pass path, where each loop becomes
one straight run with its loop variable at 0 and each load of an address already loaded
becomes that earlier value (`tl.where(mask, first, other)` when the fill values differ);
longer rows keep the original loops and block. Applies only where that is provably the
same computation: the loops are `for v in range(0, N, BLOCK)` at the kernel's top level
with the same bound and block, a reused load's address and mask depend on nothing the
passes change, and no pass before the last writes memory.
"""

from __future__ import annotations

import ast
import copy
import textwrap

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keyword
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import Expand
from tritonforge.strategies.recipes.host import first_kernel, fresh_name, per_launch, statement_of

CAP = 16384  # longest row (elements) held in registers: 32 fp32 registers a thread at 16 warps
FLAG = "ROW_ONE_PASS"


class RowOnePass(Recipe):
    name = "row_one_pass"
    points_to = frozenset({"redundant_traffic", "memory_bound_far_from_peak", "l2_thrashing"})
    rounding = "reduces each row in one block instead of block by block (another order of additions)"

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl = ks.alias("triton.language")
        triton = ks.alias("triton")
        if tl is None or triton is None:
            return "triton and triton.language are not both imported under a name"

        def one_pass(kernel: Kernel) -> Rewrite | str:
            plan = _plan(ks, kernel, tl)
            if isinstance(plan, str):
                return plan
            taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
            host = per_launch(ks, kernel, lambda call: _host_edits(ks, kernel, call, plan, triton,
                                                                   fresh_name("row_block", taken)))
            if isinstance(host, str):
                return host
            edits = [append_parameter(kernel.fn, f"{FLAG}: {tl}.constexpr = False"), _region_edit(ks, kernel, plan, tl)]
            edits += [e for h in host for e in h]
            return Rewrite(apply_edits(source, edits),
                           f"{kernel.name}: rows up to {CAP} elements read once, held in registers "
                           f"({plan.reused} later load{'s' if plan.reused != 1 else ''} reuse the first)",
                           runs_if=(kernel.name, plan.bound, CAP))

        return first_kernel(ks, one_pass)


class _Plan:
    """What the rewrite of one kernel needs: its row loops, their bound and block, and the
    one-pass statements."""

    def __init__(self, first: int, last: int, bound: str, block: str, body: list[ast.stmt], reused: int):
        self.first, self.last = first, last  # indexes of the first and last row loop in the kernel body
        self.bound, self.block = bound, block  # the kernel parameters the loops run to and step by
        self.body, self.reused = body, reused


def row_loop(ks: KernelSource, stmt: ast.stmt, kernel: Kernel) -> tuple[str, str, str] | None:
    """(loop variable, bound parameter, block parameter) of `for v in range(0, N, BLOCK)`."""
    if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and not stmt.orelse
            and isinstance(stmt.iter, ast.Call) and len(stmt.iter.args) == 3 and not stmt.iter.keywords):
        return None
    fn = stmt.iter.func
    if not ((isinstance(fn, ast.Name) and fn.id == "range") or ks.tl_op(fn) in ("range", "static_range")):
        return None
    start, stop, step = stmt.iter.args
    if not (isinstance(start, ast.Constant) and start.value == 0 and isinstance(stop, ast.Name)
            and isinstance(step, ast.Name) and stop.id in kernel.params and step.id in kernel.constexprs
            and stop.id not in kernel.constexprs):
        return None
    return stmt.target.id, stop.id, step.id


def _plan(ks: KernelSource, kernel: Kernel, tl: str) -> _Plan | str:
    if kernel.autotuned or kernel.heuristics:
        return "its block is set by @triton.autotune or @triton.heuristics"
    if FLAG in kernel.params:
        return "already has a one-pass path"
    body = kernel.fn.body
    loops = {i: row_loop(ks, s, kernel) for i, s in enumerate(body)}
    loops = {i: v for i, v in loops.items() if v}
    if len(loops) < 2:
        return "fewer than two passes over a row (for v in range(0, N, BLOCK) at the top level)"
    if len({(b, k) for _, b, k in loops.values()}) != 1:
        return "its passes run to different bounds or step by different blocks"
    first, last = min(loops), max(loops)
    region = body[first:last + 1]
    assigned = assigned_names(region)
    for i in loops:
        if i != last and writes_memory(ks, body[i]):
            return "a pass before the last writes memory"
    _, bound, block = loops[first]
    if bound in assigned or block in assigned:
        return "the loop bound or block changes inside the passes"
    peeled, reused = _peel(ks, region, {i - first: loops[i][0] for i in loops}, assigned, tl)
    if reused == 0:
        return "no pass loads what an earlier pass loaded"
    if _writes_before_reuse(ks, body[last]):
        return "the last pass writes memory before it loads"
    return _Plan(first, last, bound, block, peeled, reused)


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    names = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


def statement_lists(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    """The kernel's body and the branches of its `if`s (row_one_pass keeps the loops in one)."""
    out, todo = [], [fn.body]
    while todo:
        stmts = todo.pop(0)
        out.append(stmts)
        todo += [b for s in stmts if isinstance(s, ast.If) for b in (s.body, s.orelse)]
    return out


def writes_memory(ks: KernelSource, node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and (ks.tl_op(n.func) or "").startswith(("store", "atomic"))
               for n in ast.walk(node))


def _writes_before_reuse(ks: KernelSource, loop: ast.stmt) -> bool:
    """In the last pass, a store or atomic that comes before one of its loads."""
    seen_write = False
    for stmt in loop.body:
        calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
        if seen_write and any(ks.tl_op(c.func) == "load" for c in calls):
            return True
        seen_write = seen_write or any((ks.tl_op(c.func) or "").startswith(("store", "atomic")) for c in calls)
    return False


def _load_key(ks: KernelSource, call: ast.Call, env: dict[str, ast.expr], unstable: set[str]) -> str | None:
    """What a load reads, as text that is equal only for the same addresses and mask; None when
    it depends on something the passes change."""
    args = call_arguments(call, ("pointer", "mask", "other"))
    parts = []
    for name in ("pointer", "mask"):
        node = args.get(name)
        if node is None:
            parts.append("-")
            continue
        expanded = Expand(env).visit(copy.deepcopy(node))
        if any(isinstance(n, ast.Name) and n.id in unstable for n in ast.walk(expanded)):
            return None
        parts.append(ast.dump(expanded))
    extra = [k.arg for k in call.keywords if k.arg not in ("mask", "other")] + \
        (["..."] if len(call.args) > 3 else [])
    return None if extra else "|".join(parts)


def _peel(ks: KernelSource, region: list[ast.stmt], loop_vars: dict[int, str], assigned: set[str],
          tl: str) -> tuple[list[ast.stmt], int]:
    """The region with each row loop run once at 0, and loads of addresses already loaded reused."""
    out: list[ast.stmt] = []
    first_load: dict[str, tuple[str, ast.expr | None]] = {}  # key -> (name holding it, its `other`)
    reused = 0
    for i, stmt in enumerate(region):
        if i not in loop_vars:
            out.append(copy.deepcopy(stmt))
            continue
        var = loop_vars[i]
        out.append(ast.Assign(targets=[ast.Name(var, ast.Store())], value=ast.Constant(0), lineno=0))
        env: dict[str, ast.expr] = {var: ast.Constant(0)}
        counts: dict[str, int] = {}
        for s in stmt.body:
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
        for s in stmt.body:
            s = copy.deepcopy(s)
            before: list[ast.stmt] = []
            for call in [n for n in ast.walk(s) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "load"]:
                unstable = (assigned - set(env)) | {v for v in loop_vars.values() if v != var}
                key = _load_key(ks, call, env, unstable)
                if key is None:
                    continue
                args = call_arguments(call, ("pointer", "mask", "other"))
                if key not in first_load:
                    name = f"_row{len(first_load)}"
                    first_load[key] = (name, args.get("other"))
                    before.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=copy.deepcopy(call),
                                             lineno=0))
                    _replace(s, call, ast.Name(name, ast.Load()))
                    continue
                name, other = first_load[key]
                reused += 1
                same_fill = ast.dump(other) == ast.dump(args["other"]) if other is not None and "other" in args \
                    else other is None and "other" not in args
                value: ast.expr = ast.Name(name, ast.Load())
                if not same_fill and "mask" in args and "other" in args:
                    value = ast.Call(ast.Attribute(ast.Name(tl, ast.Load()), "where", ast.Load()),
                                     [copy.deepcopy(args["mask"]), value, copy.deepcopy(args["other"])], [])
                elif not same_fill:
                    reused -= 1
                    continue
                _replace(s, call, value)
            out += before + [s]
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and counts.get(s.targets[0].id) == 1:
                env[s.targets[0].id] = s.value
    return out, reused


def _replace(tree: ast.AST, old: ast.AST, new: ast.expr) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for j, item in enumerate(value):
                    if item is old:
                        value[j] = new
                        return


def _region_edit(ks: KernelSource, kernel: Kernel, plan: _Plan, tl: str) -> Edit:
    body = kernel.fn.body
    first, last = body[plan.first], body[plan.last]
    indent = " " * first.col_offset
    original = "\n".join(ks.source.splitlines()[first.lineno - 1:last.end_lineno])
    original = textwrap.dedent(original)
    one_pass = "\n".join(ast.unparse(ast.fix_missing_locations(s)) for s in plan.body)
    text = (f"if {FLAG}:  # the row fits one block: read once, held in registers\n"
            + textwrap.indent(one_pass, indent + "    ") + f"\n{indent}else:\n"
            + textwrap.indent(original, indent + "    "))
    return Edit(Place(first.lineno, first.col_offset, last.end_lineno, last.end_col_offset), text)


def _host_edits(ks: KernelSource, kernel: Kernel, call: ast.Call, plan: _Plan, triton: str,
                var: str) -> list[Edit] | str:
    """The launch takes its block from a new local `var` set just before the statement that
    launches, and the flag says whether the row fits that block: whatever later edits do to
    the cap or the fallback block, the one-pass path runs only where it is right."""
    args = call_arguments(call, kernel.params)
    n, block = args.get(plan.bound), args.get(plan.block)
    if n is None or block is None:
        return f"its launch does not pass {plan.bound} and {plan.block}"
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return "its launch passes arguments with * or **"
    stmt = statement_of(ks.tree, call)
    if stmt is None:
        return "its launch is not inside a function's statements"
    rows = ks.text(n)
    fits = f"{rows} <= {var}"
    edits = [Edit(Place.point(stmt.lineno, stmt.col_offset),
                  f"{var} = {triton}.next_power_of_2({rows}) if {rows} <= {CAP} else {ks.text(block)}  "
                  f"# the block a row is read in (row_one_pass)\n" + " " * stmt.col_offset),
             Edit(Place.of(block), var), insert_keyword(call, FLAG, fits, order=1)]
    warps = next((k for k in call.keywords if k.arg == "num_warps"), None)
    wide = f"min(16, max(4, {var} // 256))"  # 8 to 32 elements a thread
    if warps is None:
        edits.append(insert_keyword(call, "num_warps", f"({wide} if {fits} else 4)", order=2))
    else:
        edits.append(Edit(Place.of(warps.value), f"({wide} if {fits} else {ks.text(warps.value)})"))
    return edits
