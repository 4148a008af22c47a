"""Split-K for matmuls with few output tiles and a long reduction, and for any kernel that
sums over a long serial loop (column sums, say).

A tiled matmul gives each program one output tile and walks all of K: with few tiles most
of the GPU idles. Split K ways, the programs of a tile each walk every SPLIT_K-th step of K
(a new grid axis says which) and add their partial tiles into the zeroed output with
`tl.atomic_add`; with one split the kernel stores as before. A kernel that adds a block's
column sums into an accumulator row by row (`acc += tl.sum(x, axis=0)`) is the same shape
of work: its loop over rows is split the same way.

The host chooses the split from the sizes: enough programs for about four tiles of a matmul
per SM of a 132-SM GPU (512 in all), or sixteen programs of a streaming loop (2048: its loads
need the SM's warps in flight), at most 16 splits, and at least 8 steps of K for each. Tiles
many enough keep one split and the original code path. A block size the launch passes as a
literal becomes a local the launch and the chooser share, so that when the launch search
moves it the split follows.

Applies only where that is the same sum: one top-level loop adding into one accumulator
(`tl.dot`, or any value that does not read the accumulator) and storing nothing, over `range(0, n)` (steps) or `range(0, K, BLOCK_K)` (offsets), whose other
loop-carried values are pointers advanced by a loop-invariant stride; the accumulator stored
once after the loop, as it is or converted (`acc.to(...)`); a grid written as a tuple with
one entry per program axis the kernel reads. The additions then happen in another order
(a reassociation), and in the output's type when it is not fp32.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, program_axis
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keyword
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import single_assignments
from tritonforge.strategies.recipes.host import first_kernel, per_launch, statement_of

PROGRAMS = 512  # about four tl.dot tiles per SM of a 132-SM GPU
# A loop that only streams (no tl.dot) keeps its loads in flight with more warps per SM:
# examples/col_sum.py at 32768 x 8192 reached 93-100% of its floor split 4-8 ways (1024-2048
# programs), at most 90% split 2 and 77% unsplit (benchmarks/results/2026-12-05-h200-s12.md).
STREAMING_PROGRAMS = 2048
MAX_SPLIT = 16
MIN_STEPS = 8  # steps of K each split walks at least
SPLIT = "SPLIT_K"
SPLIT_ID = "pid_split_k"


class SplitK(Recipe):
    name = "split_k"
    points_to = frozenset({"wave_quantization", "latency_bound_low_occupancy", "launch_bound_tiny_grid"})
    rounding = "adds the partial tiles of each output tile atomically, in an order that varies"

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        triton = ks.alias("triton")
        if triton is None:
            return "triton is not imported under a name"

        def split(kernel: Kernel) -> Rewrite | str:
            plan = _kernel_plan(ks, kernel)
            host = plan if isinstance(plan, str) else \
                per_launch(ks, kernel, lambda call: _host_edits(ks, kernel, call, plan, triton))
            if isinstance(host, str):
                return host
            edits = _kernel_edits(ks, kernel, plan) + [e for h in host for e in h]
            return Rewrite(apply_edits(source, edits), f"{kernel.name}: its loop split when its output has few "
                                                       f"tiles (up to {MAX_SPLIT} ways, partial results added atomically)")

        return first_kernel(ks, split)


class _Plan:
    def __init__(self, loop: ast.For, acc: str, pointers: list[ast.AugAssign], store: ast.Call, axis: int,
                 bound: str, step: str | None, steps_form: bool, dot: bool):
        self.loop, self.acc, self.pointers, self.store, self.axis = loop, acc, pointers, store, axis
        self.bound, self.step, self.steps_form = bound, step, steps_form  # K and BLOCK_K parameters
        self.dot = dot  # the loop feeds tl.dot (else it streams)


def _kernel_plan(ks: KernelSource, kernel: Kernel) -> _Plan | str:
    if kernel.autotuned or kernel.heuristics:
        return "autotuned or with heuristics"
    if SPLIT in kernel.params:
        return "already splits K"
    fn = kernel.fn
    if fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
        return "keyword-only or variadic parameters"
    loops = [s for s in fn.body if isinstance(s, ast.For) and _accumulator(ks, fn, s, strict=False)]
    if len(loops) != 1 or any(isinstance(n, (ast.For, ast.While)) for s in loops[0].body for n in ast.walk(s)):
        return "not one loop adding into an accumulator at the top level"
    loop = loops[0]
    form = range_form(ks, loop, kernel)
    if isinstance(form, str):
        return form
    bound, step, steps_form = form
    acc = _accumulator(ks, fn, loop)
    if acc is None:
        return "its loop does not only add into one accumulator"
    if any(isinstance(n, ast.Call) and ks.tl_op(n.func) in ("store", "atomic_add", "atomic_max", "atomic_min",
                                                            "atomic_xchg", "atomic_cas") for n in ast.walk(loop)):
        return "its loop writes memory: each split would write it again"
    carried = _carried(loop, fn)
    pointers = [s for s in loop.body if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add)
                and isinstance(s.target, ast.Name) and s.target.id != acc]
    assigned_in_loop = {n.id for s in loop.body for n in ast.walk(s) if isinstance(n, ast.Name)
                        and isinstance(n.ctx, ast.Store)}
    for p in pointers:
        if any(isinstance(n, ast.Name) and n.id in assigned_in_loop | {loop.target.id} for n in ast.walk(p.value)):
            return f"'{p.target.id}' advances by something the loop changes"
    other = carried - {acc} - {p.target.id for p in pointers}
    if other:
        return f"its loop carries {', '.join(sorted(other))} besides the accumulator and pointers"
    store = _final_store(ks, fn, loop, acc)
    if isinstance(store, str):
        return store
    axes = [program_axis(n) for n in ast.walk(fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) in ("program_id",
                                                                                                "num_programs")]
    if None in axes or max(axes, default=0) > 1:
        return "reads program ids it does not name by a constant 0 or 1"
    dot = any(isinstance(n, ast.Call) and ks.tl_op(n.func) == "dot" for n in ast.walk(loop))
    return _Plan(loop, acc, pointers, store, max(axes, default=-1) + 1, bound, step, steps_form, dot)


def range_form(ks: KernelSource, loop: ast.For, kernel: Kernel) -> tuple[str, str | None, bool] | str:
    """(K parameter, BLOCK_K parameter, whether the loop counts steps) of `range(0, cdiv(K, BK))`,
    `range(cdiv(K, BK))` or `range(0, K, BK)`."""
    it = loop.iter
    if not (isinstance(loop.target, ast.Name) and isinstance(it, ast.Call) and not it.keywords
            and ((isinstance(it.func, ast.Name) and it.func.id == "range") or ks.tl_op(it.func) == "range")):
        return "its loop is not over range(...)"
    args = it.args
    if len(args) == 3 and ast.unparse(args[0]) == "0" and isinstance(args[1], ast.Name) \
            and isinstance(args[2], ast.Name) and args[2].id in kernel.constexprs:
        return args[1].id, args[2].id, False
    stop = args[1] if len(args) == 2 and ast.unparse(args[0]) == "0" else args[0] if len(args) == 1 else None
    if isinstance(stop, ast.Call) and ks.tl_op(stop.func) == "cdiv" and len(stop.args) == 2 \
            and all(isinstance(a, ast.Name) for a in stop.args) and stop.args[1].id in kernel.constexprs:
        return stop.args[0].id, stop.args[1].id, True
    return "its loop is neither range(0, tl.cdiv(K, BLOCK_K)) nor range(0, K, BLOCK_K)"


def _accumulator(ks: KernelSource, fn: ast.FunctionDef, loop: ast.For, strict: bool = True) -> str | None:
    """The name `acc` of `acc += v`, `acc = acc + v` (v not reading acc) or `acc = tl.dot(a, b, acc)`,
    when every assignment to it in the loop is one of those (strict=False: when one is)."""
    def is_dot(v: ast.AST) -> bool:
        return isinstance(v, ast.Call) and ks.tl_op(v.func) == "dot"

    def free_of(v: ast.AST, name: str) -> bool:
        return not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(v))

    forms: dict[str, list[bool]] = {}
    for s in loop.body:
        for target in _targets(s):
            ok = False
            if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add):
                ok = free_of(s.value, target) and not (is_dot(s.value) and len(s.value.args) > 2)
            elif isinstance(s, ast.Assign) and len(s.targets) == 1:
                v = s.value
                ok = (is_dot(v) and len(v.args) == 3 and ast.unparse(v.args[2]) == target
                      and free_of(v.args[0], target) and free_of(v.args[1], target)) or \
                    (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add) and ast.unparse(v.left) == target
                     and free_of(v.right, target))
            forms.setdefault(target, []).append(ok)
    # Pointers advanced by a stride (`a_ptrs += BLOCK_K * stride`) look like sums too: the
    # accumulator is the one made with zeros before the loop.
    accs = [name for name, oks in forms.items() if any(oks) and _zeroed_before(ks, fn, loop, name)]
    if len(accs) != 1:
        return None
    return accs[0] if all(forms[accs[0]]) or not strict else None


def _zeroed_before(ks: KernelSource, fn: ast.FunctionDef, loop: ast.For, name: str) -> bool:
    """`name = tl.zeros(...)` (or `tl.full(..., 0, ...)`) in the kernel before the loop."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and n.targets[0].id == name and n.lineno < loop.lineno and isinstance(n.value, ast.Call):
            op = ks.tl_op(n.value.func)
            if op == "zeros" or (op == "full" and len(n.value.args) > 1 and ast.unparse(n.value.args[1]) in ("0", "0.0")):
                return True
    return False


def _targets(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.AugAssign):
        return [stmt.target.id] if isinstance(stmt.target, ast.Name) else []
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _carried(loop: ast.For, fn: ast.FunctionDef) -> set[str]:
    """Names the loop assigns that are read before the loop, after it, or before they are set in it."""
    assigned = {n.id for s in loop.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    outside = {n.id for s in fn.body if s is not loop for n in ast.walk(s) if isinstance(n, ast.Name)}
    carried = assigned & outside
    set_so_far: set[str] = set()
    for s in loop.body:
        reads = {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            reads.add(s.target.id)
        carried |= (reads & assigned) - set_so_far
        set_so_far |= {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return carried


def _final_store(ks: KernelSource, fn: ast.FunctionDef, loop: ast.For, acc: str) -> ast.Call | str:
    """The one store after the loop whose value is the accumulator, as it is or converted."""
    after = fn.body[fn.body.index(loop) + 1:]
    env = single_assignments(after)
    stores = [n for s in after for n in ast.walk(s) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "store"]
    uses = [n for s in after for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == acc]
    if len(stores) != 1 or len(uses) != 1:
        return "does not store its accumulator once after the loop"
    value = stores[0].args[1] if len(stores[0].args) > 1 else None
    while isinstance(value, ast.Name) and value.id in env and value.id != acc:
        value = env[value.id]
    plain = isinstance(value, ast.Name) and value.id == acc
    converted = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
        and isinstance(value.func.value, ast.Name) and value.func.value.id == acc
    if not (plain or converted):
        return "stores something computed from its accumulator, not the accumulator itself"
    if any(k.arg not in ("mask",) for k in stores[0].keywords) or len(stores[0].args) > 3:
        return "stores with options an atomic add does not take"
    return stores[0]


def _kernel_edits(ks: KernelSource, kernel: Kernel, plan: _Plan) -> list[Edit]:
    fn, loop, tl = kernel.fn, plan.loop, ks.text(plan.store.func.value)
    indent = " " * loop.col_offset
    edits = [append_parameter(fn, f"{SPLIT}: {tl}.constexpr = 1")]
    first = fn.body[0]
    edits.append(Edit(Place.point(first.lineno, first.col_offset),
                      f"{SPLIT_ID} = {tl}.program_id({plan.axis})  # which share of K (split_k)\n"
                      + " " * first.col_offset))
    before = "".join(f"{ks.text(p.target)} += ({ks.text(p.value)}) * {SPLIT_ID}\n{indent}" for p in plan.pointers)
    edits.append(Edit(Place.point(loop.lineno, loop.col_offset), before))
    it = loop.iter
    if plan.steps_form:
        stop = it.args[1] if len(it.args) == 2 else it.args[0]
        new_range = f"{ks.text(it.func)}({SPLIT_ID}, {ks.text(stop)}, {SPLIT})"
    else:
        new_range = f"{ks.text(it.func)}({SPLIT_ID} * {ks.text(it.args[2])}, {ks.text(it.args[1])}, " \
                    f"{ks.text(it.args[2])} * {SPLIT})"
    edits.append(Edit(Place.of(it), new_range))
    edits += [Edit(Place.of(p.value), f"({ks.text(p.value)}) * {SPLIT}") for p in plan.pointers]
    store = plan.store
    stmt = next(s for s in fn.body if any(n is store for n in ast.walk(s)))
    pad = " " * stmt.col_offset
    args = [ks.text(a) for a in store.args] + [f"{k.arg}={ks.text(k.value)}" for k in store.keywords]
    atomic = f"{tl}.atomic_add({', '.join(args)})"
    edits.append(Edit(Place.of(stmt), f"if {SPLIT} == 1:\n{pad}    {ks.text(stmt)}\n{pad}else:  # partial tiles "
                                      f"add up in the zeroed output\n{pad}    {atomic}"))
    return edits


def _host_edits(ks: KernelSource, kernel: Kernel, call: ast.Call, plan: _Plan, triton: str) -> list[Edit] | str:
    args = call_arguments(call, kernel.params)
    k, block_k = args.get(plan.bound), args.get(plan.step)
    out = args.get(_base_param(plan.store, single_assignments(kernel.fn.body)))
    if k is None or block_k is None or out is None:
        return "its launch does not pass K, BLOCK_K and the output by name or position"
    if not isinstance(out, ast.Name):
        return "its output is not a name in the launching code"
    grid = _grid_tuple(ks, call)
    if isinstance(grid, str):
        return grid
    node, elts = grid
    if len(elts) != plan.axis:
        return f"its grid has {len(elts)} axes where the kernel reads {plan.axis}"
    # The split is chosen where the grid is written (before the launch, when set apart).
    stmt = statement_of(ks.tree, node if isinstance(call.func.slice, ast.Name) else call)
    if stmt is None:
        return "its launch is not a statement of a function"
    if not _made_before(ks, out.id, stmt):
        return f"its output '{out.id}' is not made before its grid"
    pad = " " * stmt.col_offset
    tiles = " * ".join(f"({ks.text(e)})" for e in elts) or "1"
    hoisted, block_text = _hoisted_step(ks, block_k, plan, stmt)
    steps = f"{triton}.cdiv({ks.text(k)}, {block_text})"
    programs = PROGRAMS if plan.dot else STREAMING_PROGRAMS
    split = (f"split_k = max(1, min({MAX_SPLIT}, {programs} // max(1, {tiles}), {steps} // {MIN_STEPS}))"
             f"  # K split while the output has few tiles (split_k)\n{pad}")
    zero = f"if split_k > 1:\n{pad}    {out.id}.zero_()  # partial tiles are added into it\n{pad}"
    grid_text = f"({', '.join(ks.text(e) for e in elts)}, split_k)"
    local = f"{block_text} = {ks.text(block_k)}  # shared by the launch and the split\n{pad}" if hoisted else ""
    edits = [Edit(Place.point(stmt.lineno, stmt.col_offset), local + split + zero),
             Edit(Place.of(node), grid_text), insert_keyword(call, SPLIT, "split_k", order=1)]
    if hoisted:
        edits.append(Edit(Place.of(block_k), block_text))
    return edits


def _hoisted_step(ks: KernelSource, block_k: ast.expr, plan: _Plan, stmt: ast.stmt) -> tuple[bool, str]:
    """(whether to hoist, the text the chooser divides K by): a literal BLOCK_K at the launch
    becomes a local named after the parameter, unless that name is taken in the function."""
    if not (isinstance(block_k, ast.Constant) and isinstance(block_k.value, int) and plan.step):
        return False, ks.text(block_k)
    fn = _function_of(ks, stmt)
    taken = fn is None or any(isinstance(n, ast.Name) and n.id == plan.step for n in ast.walk(fn)) or \
        plan.step in {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    return (False, ks.text(block_k)) if taken else (True, plan.step)


def _function_of(ks: KernelSource, stmt: ast.stmt) -> ast.FunctionDef | None:
    """The outermost function that holds `stmt`."""
    return next((f for f in ast.walk(ks.tree) if isinstance(f, ast.FunctionDef)
                 and any(n is stmt for n in ast.walk(f))), None)


def _made_before(ks: KernelSource, name: str, stmt: ast.stmt) -> bool:
    """`name` is assigned before `stmt`, or is a parameter of the function that holds it."""
    fn = _function_of(ks, stmt)
    if fn is None:
        return False
    if name in {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}:
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               and n.lineno < stmt.lineno for n in ast.walk(fn))


def _base_param(store: ast.Call, env: dict[str, ast.expr]) -> str | None:
    """The pointer parameter the store writes through (`c_ptrs = c_ptr + ...` followed)."""
    ptr = store.args[0]
    for _ in range(8):
        while isinstance(ptr, ast.BinOp):
            ptr = ptr.left
        if not (isinstance(ptr, ast.Name) and ptr.id in env):
            break
        ptr = env[ptr.id]
    return ptr.id if isinstance(ptr, ast.Name) else None


def _grid_tuple(ks: KernelSource, call: ast.Call) -> tuple[ast.AST, list[ast.expr]] | str:
    """The tuple the grid is written as (inline, or a name set once to a tuple just for it)."""
    g = call.func.slice
    if isinstance(g, ast.Tuple):
        return g, list(g.elts)
    if isinstance(g, ast.Name):
        sets = [n for n in ast.walk(ks.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name) and n.targets[0].id == g.id]
        uses = [n for n in ast.walk(ks.tree) if isinstance(n, ast.Name) and n.id == g.id and isinstance(n.ctx, ast.Load)]
        if len(sets) == 1 and len(uses) == 1 and isinstance(sets[0].value, ast.Tuple):
            return sets[0].value, list(sets[0].value.elts)
    return "its grid is not a tuple written for this launch alone (a grid from META is not split yet)"
