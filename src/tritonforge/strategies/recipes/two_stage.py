"""Two-stage reductions collapsed into one launch: partial sums added atomically into the output.

A reduction to one value written as two kernels (the first stores one partial sum per
program, the second, a single program, loops over the partials and stores their sum) reads
and writes the partials and pays a second launch. Collapsed, the first kernel's programs
loop over the partial sums' ids (`for pid in range(tl.program_id(0), N_PARTIALS,
tl.num_programs(0))`), add each partial into a sum of their own, and add that sum into the
output once (`tl.atomic_add`); the output is zeroed before the launch and the second launch
goes. The launch starts at most `programs_per_sm` programs per SM (the SM count read at run
time; 4 on CPU tensors), so the output takes a thousand atomic additions rather than one per
partial: on the H200 one atomic per partial (2^28 elements in blocks of 2048: 131072 atomics
on one address) was slower than the two launches (benchmarks/results/2026-12-03-h200-s7.md).

The order of the additions then varies from run to run: a reassociation, judged against the
tolerance like any candidate. Applies only to the exact shape above: the partial stored at
`partials + program_id(0)` once, by a top-level statement of straight-line code that moves no
parameter; the final kernel launched on a grid of one program as `acc = zeros; for s in
range(0, N, BLOCK): acc += load(partials + s + arange, mask, other=0); store(out, sum(acc))`,
with `N` the first launch's grid size and the output a tensor made before the first launch.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keywords
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import Expand, single_assignments
from tritonforge.strategies.recipes.host import Launch, first_pair, fresh_name, insert_before, used_after, used_between
from tritonforge.strategies.recipes.persistent import (IdLoop, kernel_body, local_names, loop_over_ids, moved_params,
                                                       program_count, tl_calls, torch_alias)

OUT = "collapsed_out_ptr"
TILES = "N_PARTIALS"
SUM = "program_sum"
# Programs per SM: enough in flight to stream at full bandwidth, few enough that the atomic
# additions into one address (one per program) cost little.
PER_SM = 8


class CollapseTwoStage(Recipe):
    name = "collapse_two_stage"
    points_to = frozenset({"launch_bound_tiny_grid", "wave_quantization"})
    rounding = "adds the partial sums atomically, in an order that varies from run to run"

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        found = first_pair(ks, entry, lambda fn, a, b: _plan(ks, fn, a, b))
        if isinstance(found, str):
            return found
        a, b, (store, out) = found
        sa, sb, ka, kb = a.stmt, b.stmt, a.kernel, b.kernel
        tl = ks.text(store.func.value)  # the name triton.language goes by here
        torch = torch_alias(ks.tree)
        if torch is None:
            return "torch is not imported under a name"
        taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
        tiles, programs = fresh_name("n_partial_ids", taken), fresh_name("collapse_programs", taken)
        per_sm = fresh_name("programs_per_sm", taken)  # persistent_grid may have set one already
        zero = f"{out}.zero_()  # the programs' sums are added into it (collapse_two_stage)"
        count = program_count((tiles, per_sm, programs), _grid(ks, a.call), PER_SM, out, torch,
                              ("the partial sums' ids, which the programs loop over",
                               "on CPU tensors (the interpreter) a few"))
        edits = [_accumulating_body(ks, ka, store, tl),
                 append_parameter(ka.fn, f"{OUT}, {TILES}"),
                 Edit(Place.of(a.call.func.slice), f"({programs},)"),
                 insert_keywords(a.call, [(OUT, out), (TILES, tiles)]),
                 insert_before(sa, [zero, *count]),
                 Edit(Place(sb.lineno, 0, sb.end_lineno + 1, 0), "")]
        return Rewrite(apply_edits(source, edits),
                       f"{ka.name} adds its partial sums into '{out}' atomically, one sum per program over "
                       f"{PER_SM} programs per SM; {kb.name} is not launched")


def _plan(ks: KernelSource, fn: ast.FunctionDef, first: Launch, second: Launch) -> tuple[ast.Call, str] | str:
    ca, ka, cb, kb = first.call, first.kernel, second.call, second.kernel
    if ka.autotuned or kb.autotuned or ka.heuristics:
        return "autotuned or with heuristics"
    args_a = {k: ks.text(v) for k, v in call_arguments(ca, ka.params).items()}
    args_b = {k: ks.text(v) for k, v in call_arguments(cb, kb.params).items()}
    final = _final_sum(ks, kb)
    if isinstance(final, str):
        return f"{kb.name} {final}"
    partials_b, count_b, out_b = final
    if _grid(ks, cb) != "1":
        return f"{kb.name} is not launched on a grid of one program"
    partials = args_b.get(partials_b)
    pa = next((p for p, v in args_a.items() if v == partials and p in ka.params), None)
    if pa is None:
        return f"{ka.name} is not given the partials {kb.name} sums"
    store = _partial_store(ks, ka, pa)
    if isinstance(store, str):
        return f"{ka.name} {store}"
    if args_b.get(count_b) != _grid(ks, ca):
        return f"{kb.name} does not sum exactly one partial per program of {ka.name}"
    out = args_b.get(out_b, "")
    made = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and _assigns(n, out)]
    if not out.isidentifier() or not made or max(n.end_lineno for n in made) >= first.stmt.lineno:
        return "the output is not a name made before the first launch"
    if used_after(fn, second.stmt.end_lineno, partials):
        return f"the entry uses '{partials}' after the final kernel"
    if used_between(first, second, {partials, out}):
        return "the partials or the output are used between the launches"
    return store, out


def _accumulating_body(ks: KernelSource, kernel: Kernel, store: ast.Call, tl: str) -> Edit:
    """The body in a loop over the partial sums' ids, the store of each partial become an
    addition into the program's own sum, and that sum added into the output after the loop."""
    local = local_names(kernel.fn)
    total = fresh_name(SUM, local)
    saving = next(s for s in kernel_body(kernel) if any(n is store for n in ast.walk(s)))
    loop = IdLoop(TILES, "partial_id", "ids strided",
                  before=(f"{total} = 0.0  # this program's share of the output (collapse_two_stage)",),
                  after=(f"{tl}.atomic_add({OUT}, {total})",))
    return loop_over_ids(ks, kernel, tl, loop, local, {saving: f"{total} += {ks.text(store.args[1])}"})


def _grid(ks: KernelSource, call: ast.Call) -> str:
    g = call.func.slice
    if isinstance(g, ast.Tuple) and len(g.elts) == 1:
        return ks.text(g.elts[0])
    return ks.text(g)


def _assigns(stmt: ast.stmt, name: str) -> bool:
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)


def _partial_store(ks: KernelSource, kernel: Kernel, param: str) -> ast.Call | str:
    """The one `tl.store(param + program_id(0), value)` of the first kernel."""
    env = single_assignments(kernel.fn.body)
    uses = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Name) and n.id == param]
    stores = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "store"
              and n.args and isinstance(n.args[0], ast.BinOp) and ast.unparse(n.args[0].left) == param]
    if len(stores) != 1 or len(uses) != 1 or len(stores[0].args) != 2 or stores[0].keywords:
        return "does not store to its partials exactly once, unmasked"
    index = Expand(env).visit(stores[0].args[0].right)
    if not (isinstance(index, ast.Call) and ks.tl_op(index.func) == "program_id"
            and ast.unparse(index.args[0] if index.args else index.keywords[0].value) == "0"):
        return "stores its partial somewhere else than at its program id"
    if any(isinstance(n, (ast.For, ast.While, ast.If, ast.Return)) for n in ast.walk(kernel.fn)):
        return "is not straight-line code around its partial"
    if not any(isinstance(s, ast.Expr) and s.value is stores[0] for s in kernel_body(kernel)):
        return "does not store its partial in a statement of its own at the top level"
    moved = moved_params(kernel)
    if moved:
        return f"moves its parameter {moved[0]}: in a loop over ids it would carry to the next"
    if len(tl_calls(ks, kernel.fn, "program_id")) != 1:
        return "reads tl.program_id more than once"
    if kernel.fn.args.defaults:
        return "has parameters with defaults (the new ones cannot go last)"
    return stores[0]


def _final_sum(ks: KernelSource, kernel: Kernel) -> tuple[str, str, str] | str:
    """(partials, count, out) parameters of `acc = 0; for s in range(0, count, B): acc += load(partials + ...);
    store(out, sum(acc))`."""
    body = kernel.fn.body
    loops = [s for s in body if isinstance(s, ast.For)]
    if len(body) != 3 or len(loops) != 1 or body[1] is not loops[0]:
        return "is not 'acc = zeros; one loop adding loads; store the sum'"
    init, loop, last = body
    if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ast.Name)):
        return "does not start from an accumulator"
    acc = init.targets[0].id
    zero = init.value
    if not ((isinstance(zero, ast.Constant) and zero.value == 0) or
            (isinstance(zero, ast.Call) and ks.tl_op(zero.func) == "zeros")):
        return "does not start its accumulator at zero"
    it = loop.iter
    if not (isinstance(it, ast.Call) and len(it.args) == 3 and ast.unparse(it.args[0]) == "0"
            and isinstance(it.args[1], ast.Name)):
        return "does not loop from 0 over a count of partials"
    count = it.args[1].id
    adds = [s for s in loop.body if isinstance(s, ast.AugAssign)]
    if len(adds) != 1 or not isinstance(adds[0].op, ast.Add) or ast.unparse(adds[0].target) != acc:
        return "does not add one load per step to its accumulator"
    load = adds[0].value
    if not (isinstance(load, ast.Call) and ks.tl_op(load.func) == "load" and isinstance(load.args[0], ast.BinOp)
            and isinstance(load.args[0].left, ast.Name)):
        return "does not add a load of the partials"
    other = next((k.value for k in load.keywords if k.arg == "other"), None)
    if other is None or ast.unparse(other) not in ("0", "0.0"):
        return "does not fill masked partials with zero"
    env = single_assignments(loop.body)
    tl = ast.unparse(load.func.value)
    index = ast.unparse(Expand(env).visit(load.args[0].right))
    mask = next((k.value for k in load.keywords if k.arg == "mask"), None)
    step = ast.unparse(it.args[2])
    if not isinstance(loop.target, ast.Name) or index != f"{loop.target.id} + {tl}.arange(0, {step})" \
            or mask is None or ast.unparse(Expand(env).visit(mask)) != f"{index} < {count}":
        return "does not read each partial once (index s + arange(0, BLOCK), mask below the count)"
    if any(isinstance(n, ast.Call) and (ks.tl_op(n.func) or "").startswith(("store", "atomic"))
           for s in loop.body for n in ast.walk(s)):
        return "writes memory inside its loop"
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and ks.tl_op(last.value.func) == "store"
            and isinstance(last.value.args[0], ast.Name) and len(last.value.args) == 2):
        return "does not end by storing one value"
    total = last.value.args[1]
    if not (isinstance(total, ast.Call) and ks.tl_op(total.func) == "sum" and ast.unparse(total.args[0]) == acc):
        return "does not store the sum of its accumulator"
    return load.args[0].left.id, count, last.value.args[0].id
