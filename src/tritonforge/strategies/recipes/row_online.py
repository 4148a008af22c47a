"""Softmax-like row kernels too long to hold in registers: the maximum and the sum in one pass.

A row kernel written for any row length finds the row's maximum in one pass over it
(`m = tl.maximum(m, tl.max(x, 0))`) and sums `exp(x - m)` in a second, so the row is read
once more than the output needs. The online form does both in the second pass' loop: with
the block's maximum folded in first, the sum so far is rescaled to the new maximum,
`s = s * exp(m - m_new) + sum(exp(x - m_new))`; at the end `m` and `s` are the two passes'
values, up to rounding. A softmax then reads its row twice instead of three times, a
logsumexp or a cross-entropy once instead of twice. Where row_one_pass already holds short
rows in registers, this applies to the loops it keeps for long rows.

Spellings recognised: the maximum kept as a scalar or as a vector reduced with `tl.max`
between the passes; the sum as a scalar (`s += tl.sum(t, 0)`) or a vector (`s += t`);
the term `exp(x - m)`, `exp2((x - m) * k)`, either inside `tl.where(c, ..., 0)` or set
in a local first. Applies only where that is provably the same computation: both loops are
`for v in range(0, N, BLOCK)` in one list of statements with the same bound and block, the
exponent's `x` is the expression the maximum was taken of, the sum starts at zero, neither
pass writes memory, and what the first pass computes besides the maximum is not read later.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from tritonforge.analysis.kernel_source import Kernel, KernelSource
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import first_kernel, fresh_name
from tritonforge.strategies.recipes.reverse_pass import walks_backwards
from tritonforge.strategies.recipes.row_one_pass import row_loop, statement_lists, writes_memory

COL = "<column>"  # both loops' variables, renamed alike to compare what they load
CARRIED = "<carried>"  # a name read before the loop body sets it: a value from the last iteration


class RowOnline(Recipe):
    name = "row_online"
    rounding = "rescales the running sum as the maximum grows (another order of operations)"
    points_to = frozenset({"redundant_traffic", "memory_bound_far_from_peak"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl = ks.alias("triton.language")
        if tl is None:
            return "triton.language is not imported under a name"

        def merge(kernel: Kernel) -> Rewrite | str:
            plan = _find(ks, kernel)
            if isinstance(plan, str):
                return plan
            return Rewrite(apply_edits(source, _edits(ks, plan, tl)),
                           f"{kernel.name}: the row's maximum and sum in one pass (online), "
                           f"{plan.passes - 1} passes over the row instead of {plan.passes}")

        return first_kernel(ks, merge)


@dataclass
class _Max:
    update: ast.Assign  # `acc = tl.maximum(acc, tl.max(e, 0))` or `acc = tl.maximum(acc, e)`
    acc: str
    call: ast.Call | None  # the tl.max(e, ...) of a scalar maximum; None for a vector one
    of: ast.expr  # e: what the maximum is taken of


@dataclass
class _Sum:
    update: ast.stmt  # `s += ...` in the second loop
    total: str  # s
    summed: ast.Call | None  # its tl.sum(...) (None: a vector sum)
    term: ast.expr  # what is summed (what a local set to it holds)
    temp: ast.stmt | None  # the statement that set that local: dropped, the term written in
    exp: ast.Call  # the tl.exp/exp2 call in the term
    diff: ast.BinOp  # `x - m` inside that call


@dataclass
class _Plan:
    stmts: list[ast.stmt]  # the list the two loops are in
    i: int  # the loops' indexes in it
    j: int
    mx: _Max
    name: str  # the row maximum the sum pass reads (mx.acc, or what a vector one is reduced into)
    reduce: ast.Call  # tl.max(...) to copy for a block's maximum
    sm: _Sum
    moved: list[ast.stmt] | None = None  # statements between the loops, to go after the merged one
    init: ast.stmt | None = None  # the sum's `= 0` between the loops, to go before it
    passes: int = 0  # loops over the row in that list of statements


def _find(ks: KernelSource, kernel: Kernel) -> _Plan | str:
    """The first pair of a max pass and the pass after it that can merge, or why none."""
    reasons, online, most = [], False, 0
    for stmts in statement_lists(kernel.fn):
        loops = [i for i, s in enumerate(stmts) if row_loop(ks, s, kernel)]
        most = max(most, len(loops))
        online |= any(_looks_online(ks, stmts[i]) for i in loops)
        for i, j in zip(loops, loops[1:]):
            mx = _running_max(ks, stmts[i])
            if mx is not None:
                plan = _plan(ks, kernel, stmts, i, j, mx)
                if not isinstance(plan, str):
                    plan.passes = len(loops) + sum(walks_backwards(s) for s in stmts)
                    return plan
                reasons.append(plan)
    if online:
        return "its maximum and sum already share one pass (online)"
    if reasons:
        return reasons[0]
    if most < 2:
        return "fewer than two passes over a row (for v in range(0, N, BLOCK))"
    return "no pass over the row keeps a running maximum (m = tl.maximum(m, tl.max(x, 0)))"


def _looks_online(ks: KernelSource, loop: ast.stmt) -> bool:
    ops = {ks.tl_op(n.func) for n in ast.walk(loop) if isinstance(n, ast.Call)}
    return bool(ops & {"max", "maximum"}) and bool(ops & {"exp", "exp2"})  # per lane: `tl.maximum(m_i, x)`


def _running_max(ks: KernelSource, loop: ast.For) -> _Max | None:
    """The loop's `acc = tl.maximum(acc, tl.max(e, ...))` (a scalar) or `tl.maximum(acc, e)` (per lane)."""
    for s in loop.body:
        if not (_assigns_one(s) and isinstance(s.value, ast.Call) and ks.tl_op(s.value.func) == "maximum"
                and len(s.value.args) == 2 and not s.value.keywords):
            continue
        acc, (a, b) = s.targets[0].id, s.value.args
        other = b if _is_name(a, acc) else a if _is_name(b, acc) else None
        if other is None:
            continue
        if isinstance(other, ast.Call) and ks.tl_op(other.func) == "max" and other.args:
            return _Max(s, acc, other, other.args[0])
        return _Max(s, acc, None, other)
    return None


def _plan(ks: KernelSource, kernel: Kernel, stmts: list[ast.stmt], i: int, j: int, mx: _Max) -> _Plan | str:
    a, b, between = stmts[i], stmts[j], stmts[i + 1:j]
    _, bound, block = row_loop(ks, a, kernel)
    if row_loop(ks, b, kernel)[1:] != (bound, block) or {bound, block} & _stored(between):
        return "its max and sum passes run to different bounds or step by different blocks"
    if writes_memory(ks, a) or any(writes_memory(ks, s) for s in between):
        return "a pass before the last writes memory"
    if writes_memory(ks, b):
        return "its sum pass writes memory (values made with a maximum not yet final)"
    reduce, name = mx.call, mx.acc
    if mx.call is None:  # a vector maximum: reduced to the row's between the passes
        post = next((s for s in between if _assigns_one(s) and isinstance(s.value, ast.Call)
                     and ks.tl_op(s.value.func) == "max" and s.value.args and _is_name(s.value.args[0], mx.acc)), None)
        if post is None:
            return f"its vector maximum '{mx.acc}' is not reduced with tl.max between the passes"
        reduce, name = post.value, post.targets[0].id
    sm = _sum_of_exp(ks, kernel, b, {name, mx.acc})
    return sm if isinstance(sm, str) else _check(ks, kernel, _Plan(stmts, i, j, mx, name, reduce, sm))


def _sum_of_exp(ks: KernelSource, kernel: Kernel, loop: ast.For, maxima: set[str]) -> _Sum | str:
    """The second pass' `s += sum(exp(x - m))`, taken apart, or why it is not one."""
    readers = [s for s in loop.body if _loaded(s) & maxima]
    update = readers[0] if len(readers) == 1 else None
    temp = update if _accumulation(update)[0] is None and _assigns_one(update) else None
    if temp is not None:  # `p = tl.exp(x - m); s += tl.sum(p)`: p is the term, written in once
        users = [s for s in loop.body if temp.targets[0].id in _loaded(s)]
        update = users[0] if len(users) == 1 else None
    total, value = _accumulation(update)
    if total is None:
        return "the pass after the maximum does not sum exp(x - max)"
    summed = value if isinstance(value, ast.Call) and ks.tl_op(value.func) == "sum" and value.args else None
    term = summed.args[0] if summed else value
    if temp is not None:
        if not _is_name(term, temp.targets[0].id) or _read_elsewhere(kernel.fn, term.id, [temp, update]):
            return "its sum pass uses exp(x - max) otherwise than summed"
        between = loop.body[loop.body.index(temp) + 1:loop.body.index(update)]
        if _loaded(temp) & _stored(between):
            return "its summed term reads names set again before it is added"
        term = temp.value
    shape = _exp_term(ks, term, maxima, _stored(loop.body))
    if shape is None:
        return "the pass after the maximum does not sum exp(x - max)"
    return _Sum(update, total, summed, term, temp, *shape)


def _accumulation(stmt: ast.stmt | None) -> tuple[str | None, ast.expr | None]:
    """(s, v) of `s += v`, `s = s + v` or `s = v + s`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if _assigns_one(stmt) and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        s, (l, r) = stmt.targets[0].id, (stmt.value.left, stmt.value.right)
        if _is_name(l, s) or _is_name(r, s):
            return s, r if _is_name(l, s) else l
    return None, None


def _exp_term(ks: KernelSource, term: ast.expr, maxima: set[str], varying: set[str]):
    """(exp call, `x - m`) of `exp(x - m)`, `exp2((x - m) * k)` or `where(c, that, 0)`, where
    the maximum appears once: exp(a - b) * exp(b - c) = exp(a - c) rescales it exactly."""
    inner = term
    if isinstance(term, ast.Call) and ks.tl_op(term.func) == "where" and len(term.args) == 3 \
            and isinstance(term.args[2], ast.Constant) and term.args[2].value == 0:
        inner = term.args[1]
    if not (isinstance(inner, ast.Call) and ks.tl_op(inner.func) in ("exp", "exp2") and len(inner.args) == 1):
        return None
    diff, scale = inner.args[0], None
    if isinstance(diff, ast.BinOp) and isinstance(diff.op, ast.Mult):
        diff, scale = (diff.left, diff.right) if _minus_max(diff.left, maxima) else (diff.right, diff.left)
    uses = sum(1 for n in ast.walk(term) if isinstance(n, ast.Name) and n.id in maxima)
    if not _minus_max(diff, maxima) or uses != 1 or (scale is not None and _loaded(scale) & varying):
        return None
    return inner, diff


def _check(ks: KernelSource, kernel: Kernel, plan: _Plan) -> _Plan | str:
    """The rest of what makes the merged pass the same computation."""
    a, b, between = plan.stmts[plan.i], plan.stmts[plan.j], plan.stmts[plan.i + 1:plan.j]
    mx, sm = plan.mx, plan.sm
    same = _expanded(a, mx.update, mx.of), _expanded(b, sm.temp or sm.update, sm.diff.left)
    if any(_loaded(e) & (_stored(between) | {CARRIED}) for e in same) or ast.dump(same[0]) != ast.dump(same[1]):
        return "its sum pass exponentiates something other than what the maximum was taken of"
    init = next((s for s in reversed(plan.stmts[:plan.j]) if sm.total in _stored(s)), None)
    if init is None or init is a or not (_assigns_one(init) and _is_zero(ks, init.value)):
        return f"its sum '{sm.total}' does not start from zero before its pass"
    after_init = between[between.index(init) + 1:] if init in between else between
    if sm.total in _loaded([a, *between]) | _stored(after_init):
        return f"its sum '{sm.total}' is used before its pass"
    if any(sm.total in _loaded(s) | _stored(s) for s in b.body if s is not sm.update):
        return f"its sum pass uses '{sm.total}' outside its update"
    kept = sorted(n for n in _stored(a) - _stored(b) - {mx.acc} if _read_elsewhere(kernel.fn, n, [a]))
    if kept:
        return f"its max pass also computes {', '.join(kept)}, read after it"
    plan.moved, plan.init = [s for s in between if s is not init], init if init in between else None
    if _loaded(plan.moved) & ((_stored([a, b]) | {sm.total}) - {mx.acc}) or mx.acc in _stored(plan.moved):
        return "statements between the passes use what the passes set"
    if _loaded([s for s in b.body if s is not sm.temp]) & (_stored(plan.moved) - {plan.name}):
        return "its sum pass uses names set between the passes"
    return plan


def _edits(ks: KernelSource, plan: _Plan, tl: str) -> list[Edit]:
    """The first loop and what lies between goes; the second gets the online update in place
    of its sum's; the sum's start goes before it and what lay between after it."""
    a, b, mx, sm = plan.stmts[plan.i], plan.stmts[plan.j], plan.mx, plan.sm
    taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
    new, safe = fresh_name("online_max", taken), fresh_name("online_ref", taken)
    # A vector maximum is kept as it was; the sum is kept relative to a scalar one beside it.
    ref = mx.acc if mx.call else fresh_name("online_run", taken)
    x, indent, inner = sm.diff.left, " " * a.col_offset, " " * sm.update.col_offset
    head = [ks.text(plan.init)] if plan.init else []
    head += [] if mx.call else [f"{ref} = float('-inf')  # the row's maximum so far"]
    head += ["# maximum and sum in one pass (row_online): the sum so far is rescaled to each new maximum"]
    block_max = _swap(plan.reduce, {plan.reduce.args[0]: x})
    term = _swap(sm.term, {sm.diff.right: _name(safe)})
    summed = _swap(sm.summed, {sm.summed.args[0]: term}) if sm.summed else term
    rescale = _swap(sm.exp, {sm.diff: ast.BinOp(_name(ref), ast.Sub(), _name(safe))})
    body = [] if mx.call else [f"{mx.acc} = {tl}.maximum({mx.acc}, {ast.unparse(x)})"]
    body += [f"{new} = {tl}.maximum({ref}, {ast.unparse(block_max)})",
             f"{safe} = {tl}.where({new} == float('-inf'), 0.0, {new})  # no exp(-inf - -inf) while all is -inf",
             f"{sm.total} = {sm.total} * {ast.unparse(rescale)} + {ast.unparse(summed)}",
             f"{ref} = {new}"]
    last = ks.source.splitlines()[b.end_lineno - 1]
    edits = [Edit(Place(a.lineno, a.col_offset, b.lineno, b.col_offset), "".join(h + "\n" + indent for h in head)),
             Edit(Place.of(sm.update), ("\n" + inner).join(body)),
             Edit(Place.point(b.end_lineno, len(last.encode())),  # after a comment that ends the loop
                  "".join("\n" + indent + ks.text(s) for s in plan.moved))]
    if sm.temp is not None:
        edits.append(Edit(Place(sm.temp.lineno, 0, sm.temp.end_lineno + 1, 0), ""))
    return edits


def _expanded(loop: ast.For, stop: ast.stmt, node: ast.expr) -> ast.expr:
    """`node`, as read just before `stop` in the loop body, in terms of what the body was
    given: locals set before it replaced by their values, the loop variable by COL."""
    local = _stored(loop.body)
    env: dict[str, ast.expr] = {loop.target.id: _name(COL)}
    for s in loop.body:
        if s is stop:
            break
        value = _Subst(env, local).visit(copy.deepcopy(s.value)) if _assigns_one(s) else None
        for n in _stored([s]):
            env.pop(n, None)
        if value is not None:
            env[s.targets[0].id] = value
    return _Subst(env, local).visit(copy.deepcopy(node))


class _Subst(ast.NodeTransformer):
    """Names replaced once by their (already expanded) values; loop locals not yet set this
    iteration become CARRIED, so they never compare equal to anything."""

    def __init__(self, env: dict[str, ast.expr], local: set[str]):
        self.env, self.local = env, local

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.env:
            return copy.deepcopy(self.env[node.id])
        return _name(CARRIED) if node.id in self.local else node


def _swap(node: ast.expr, swaps: dict[ast.AST, ast.expr]) -> ast.expr:
    """A copy of `node` with each of its subexpressions in `swaps` replaced."""
    memo: dict[int, object] = {}
    tree = copy.deepcopy(node, memo)
    targets = {id(memo[id(old)]): new for old, new in swaps.items()}

    class Swap(ast.NodeTransformer):
        def visit(self, n: ast.AST) -> ast.AST:
            return copy.deepcopy(targets[id(n)]) if id(n) in targets else self.generic_visit(n)

    return Swap().visit(tree)


def _read_elsewhere(fn: ast.FunctionDef, name: str, skip: list[ast.stmt]) -> bool:
    inside = {id(n) for s in skip for n in ast.walk(s)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside
               for n in ast.walk(fn))


def _loaded(nodes: ast.AST | list[ast.stmt]) -> set[str]:
    return _names(nodes, ast.Load)


def _stored(nodes: ast.AST | list[ast.stmt]) -> set[str]:
    return _names(nodes, ast.Store)


def _names(nodes: ast.AST | list[ast.stmt], ctx: type) -> set[str]:
    nodes = nodes if isinstance(nodes, list) else [nodes]
    return {n.id for x in nodes for n in ast.walk(x) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _assigns_one(stmt: ast.stmt | None) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _minus_max(node: ast.AST, maxima: set[str]) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.right, ast.Name) \
        and node.right.id in maxima


def _is_zero(ks: KernelSource, node: ast.expr) -> bool:
    """0, 0.0 or tl.zeros(...): a sum that starts empty."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float) and node.value == 0
    return isinstance(node, ast.Call) and ks.tl_op(node.func) == "zeros"


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())
