"""Row kernels that read a long row more than once: the last pass walks the row from its end.

Between two passes over a row too long for registers, the program reads the whole row, so
what the next pass reads first (the row's start) is what left the L2 first, and with many
rows in flight little of it is still there. Walked backwards, the last pass starts with the
blocks the pass before read last, the likeliest to be in L2 still. Nothing else changes: the
same blocks are read and written, each once, so the results are bit for bit the same.

Applies only where the order of the last pass' iterations cannot matter: it is
`for v in range(0, N, BLOCK)` after another such pass with the same bound and block in the
same list of statements, it carries no value from one iteration to the next, nothing it sets
is read after it, it has no atomics, every store in it addresses through the loop variable
(each iteration writes its own block), and its loads that move with the loop read at the
offsets its stores write (so an in-place call reads no block already rewritten).
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import first_kernel, fresh_name
from tritonforge.strategies.recipes.row_one_pass import assigned_names, row_loop, statement_lists

MARK = "# the last pass walks the row backwards (reverse_pass)"


class ReversePass(Recipe):
    name = "reverse_pass"
    points_to = frozenset({"redundant_traffic", "memory_bound_far_from_peak"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl = ks.alias("triton.language")
        if tl is None:
            return "triton.language is not imported under a name"

        def reverse(kernel: Kernel) -> Rewrite | str:
            if MARK in ks.text(kernel.fn):
                return "already walks its last pass backwards"
            loop = _last_pass(ks, kernel)
            if isinstance(loop, str):
                return loop
            return Rewrite(apply_edits(source, [_edit(ks, loop, kernel, tl)]),
                           f"{kernel.name}: the last pass over the row walks it backwards, from the blocks "
                           f"the pass before read last")

        return first_kernel(ks, reverse)


def _last_pass(ks: KernelSource, kernel: Kernel) -> ast.For | str:
    """The last of two or more passes over a row, if its order cannot matter, or why not."""
    reason = "fewer than two passes over a row (for v in range(0, N, BLOCK)) with the same bound and block"
    for stmts in statement_lists(kernel.fn):
        loops = [(s, row_loop(ks, s, kernel)) for s in stmts]
        loops = [(s, shape[1:]) for s, shape in loops if shape]
        if len(loops) < 2 or loops[-1][1] not in [shape for _, shape in loops[:-1]]:
            continue
        last = loops[-1][0]
        why = _order_matters(ks, kernel, last)
        if why is None:
            return last
        reason = why
    return reason


def _order_matters(ks: KernelSource, kernel: Kernel, loop: ast.For) -> str | None:
    """Why the loop's iterations could not run in another order, or None."""
    if any(isinstance(n, (ast.For, ast.While)) for s in loop.body for n in ast.walk(s)):
        return "its last pass has a loop inside it"
    if loop.body[0].lineno == loop.lineno:
        return "its last pass is written on one line"
    ops = [ks.tl_op(n.func) or "" for n in ast.walk(loop) if isinstance(n, ast.Call)]
    if any(op.startswith("atomic") for op in ops):
        return "its last pass has atomics (their order would change)"
    var, stored, seen, carried = loop.target.id, assigned_names(loop.body), set(), set()
    for s in loop.body:  # read before this iteration sets it: the last iteration's value
        carried |= (_names(s, ast.Load) - seen) & stored
        seen |= _names(s, ast.Store)
    if carried:
        return f"its last pass carries {', '.join(sorted(carried))} from one block to the next"
    after = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.lineno > loop.end_lineno and n.id in stored | {var}]
    if after:
        return f"'{after[0].id}', set in its last pass, is read after it (the last block's value)"
    derived = _derived(loop.body, var)
    calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call)]
    stores = [_pointer(n) for n in calls if (ks.tl_op(n.func) or "").startswith("store")]
    if any(p is None or not _names(p, ast.Load) & derived for p in stores):
        return "a store in its last pass does not address through the loop variable"
    # With an output that is also an input (an in-place call), a load of another block than
    # the one written would see that block's new values in the other order.
    written = {ast.dump(_offset(p)) for p in stores}
    for p in (_pointer(n) for n in calls if ks.tl_op(n.func) == "load"):
        if stores and (p is None or (_names(p, ast.Load) & derived and ast.dump(_offset(p)) not in written)):
            return "a load in its last pass reads at other offsets than its stores write"
    return None


def _pointer(call: ast.Call) -> ast.expr | None:
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "pointer"), None)


def _offset(ptr: ast.expr) -> ast.expr:
    """`cols` of `base + cols` (the last term added); the whole expression otherwise."""
    return ptr.right if isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) else ptr


def _edit(ks: KernelSource, loop: ast.For, kernel: Kernel, tl: str) -> Edit:
    """`for v in range(0, N, B):` becomes a count of blocks, walked from the last."""
    taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)} | set(kernel.params)
    blocks, i = fresh_name("rev_blocks", taken), fresh_name("rev_i", taken)
    _, bound, block = row_loop(ks, loop, kernel)
    outer, inner = " " * loop.col_offset, " " * loop.body[0].col_offset
    text = (f"{MARK}: it reads first what the pass before read last, still in L2\n"
            f"{outer}{blocks} = {tl}.cdiv({bound}, {block})\n"
            f"{outer}for {i} in {ks.text(loop.iter.func)}(0, {blocks}):\n"
            f"{inner}{loop.target.id} = ({blocks} - 1 - {i}) * {block}\n{inner}")
    return Edit(Place(loop.lineno, loop.col_offset, loop.body[0].lineno, loop.body[0].col_offset), text)


def walks_backwards(stmt: ast.stmt) -> bool:
    """A pass this recipe wrote: `for i in range(0, blocks): v = (blocks - 1 - i) * B`."""
    if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, ast.Call)
            and len(stmt.iter.args) == 2 and isinstance(stmt.iter.args[1], ast.Name)):
        return False
    first, blocks, i = stmt.body[0], stmt.iter.args[1].id, stmt.target.id
    want = f"({blocks} - 1 - {i}) * "
    return isinstance(first, ast.Assign) and ast.unparse(first.value).startswith(want)


def _derived(body: list[ast.stmt], var: str) -> set[str]:
    """The loop variable and the locals computed from it, in the body's order."""
    out = {var}
    for s in body:
        if _names(s, ast.Load) & out:
            out |= _names(s, ast.Store)
    return out


def _names(node: ast.AST, ctx: type) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}
    if ctx is ast.Load:  # `s += x` reads s too
        found |= {n.target.id for n in ast.walk(node)
                  if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    return found
