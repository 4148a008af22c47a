"""Hints for 1-D streaming kernels: bounds masks dropped where the sizes divide, and loads that
read each element once told to leave the cache first.

The kernels are those written as `offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)`,
`mask = offsets < n`, launched on the grid `(triton.cdiv(n, BLOCK),)`. Where `n % BLOCK == 0`
every lane of every program is in bounds, so the mask is all true and can go: the kernel gets
a constexpr flag, each load or store masked by `offsets < n` takes `mask=None if FLAG else
mask` (a constexpr conditional: Triton compiles only the branch taken), and each launch sets
the flag from the element count and block it passes. The flag is computed from the same name
the block is passed as (a literal or expression block is first put in a local), so a later
move of the block's value keeps it right; where the block is set by `@triton.autotune` or
`@triton.heuristics`, an innermost `@triton.heuristics` computes the flag from the block the
decorators chose.

Each load of `ptr + offsets` reads elements that no other load or program reads, so it gets
`eviction_policy="evict_first"`: its lines are the first to make room in L2. Other loads (a
bias read at `offsets % n_cols`, say) and the stores are left as they were.

`tl.multiple_of` / `tl.max_contiguous` are not added: for `pid * BLOCK + tl.arange(0, BLOCK)`
the compiler's axis analysis already proves contiguity over BLOCK and divisibility by BLOCK,
and pointer and size alignment come from Triton's argument specialization.
"""

from __future__ import annotations

import ast
import copy

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, program_axis
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keyword
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import Expand, single_assignments
from tritonforge.strategies.recipes.host import fresh_name, launches_of, statement_of

FLAG = "EVEN"
_ARGS = {"load": ("pointer", "mask", "other"), "store": ("pointer", "value", "mask")}
_HINTS = ("eviction_policy", "cache_modifier")
_ATOMIC = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)


class Hints(Recipe):
    name = "hints"
    rounding = ""
    points_to = frozenset({"memory_bound_far_from_peak", "uncoalesced_access"})
    alone = True

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl, triton = ks.alias("triton.language"), ks.alias("triton")
        if tl is None or triton is None:
            return "triton and triton.language are not both imported under a name"
        taken = {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
        edits, notes, reasons = [], [], []
        for kernel in ks.kernels.values():
            plan = _plan(ks, kernel)
            if isinstance(plan, str):
                reasons.append(f"{kernel.name}: {plan}")
                continue
            flag = fresh_name(FLAG, taken | {*kernel.params, *kernel.heuristic_names()})  # one flag per kernel
            host = _host_edits(ks, kernel, plan, flag, triton, taken)
            if isinstance(host, str):
                reasons.append(f"{kernel.name}: {host}")
                continue
            edits += _kernel_edits(ks, kernel, plan, flag, tl) + host
            notes.append(f"{kernel.name}: {len(plan.masked)} mask{'s' if len(plan.masked) != 1 else ''} dropped "
                         f"when {plan.n} % {plan.block} == 0 ({flag}), {len(plan.streaming)} load"
                         f"{'s' if len(plan.streaming) != 1 else ''} evict_first")
        if not edits:
            return "; ".join(reasons) or "no Triton kernel in the file"
        return Rewrite(apply_edits(source, edits), "; ".join(notes))


class _Plan:
    """One kernel's rewrite: its bound and block parameters, the loads and stores masked by
    `offsets < n` (with their mask and `other` nodes), and the loads of `ptr + offsets`."""

    def __init__(self, n: str, block: str, masked: list[tuple[ast.Call, ast.expr, ast.expr | None]],
                 streaming: list[ast.Call]):
        self.n, self.block, self.masked, self.streaming = n, block, masked, streaming


def _memory_ops(ks: KernelSource, node: ast.AST) -> list[tuple[ast.Call, dict[str, ast.AST]]]:
    """Each tl.load and tl.store under `node`, with its arguments by name."""
    return [(n, call_arguments(n, _ARGS[ks.tl_op(n.func)])) for n in ast.walk(node)
            if isinstance(n, ast.Call) and ks.tl_op(n.func) in _ARGS]


def _plan(ks: KernelSource, kernel: Kernel) -> _Plan | str:
    calls = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Call)]
    if any(ks.tl_op(c.func) == "dot" for c in calls):
        return "uses tl.dot: a tiled product, not a streaming kernel"
    if any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(kernel.fn)):
        return "loops inside the kernel: not one pass of each program over its own elements"
    if any(ks.tl_op(c.func) == "program_id" and program_axis(c) != 0 for c in calls):
        return "reads a program id other than axis 0: not a 1-D blocked kernel"
    if kernel.fn.args.kwonlyargs or kernel.fn.args.vararg or kernel.fn.args.kwarg:
        return "keyword-only or variadic parameters: no place for the flag"
    ops = _memory_ops(ks, kernel.fn)
    hinted = _already_hinted(ks, kernel, calls, ops)
    if hinted:
        return f"already hinted: {hinted}"
    # A parameter set again in the body is not expanded (`n = n - 1` would expand forever).
    env = {k: v for k, v in single_assignments(kernel.fn.body).items() if k not in kernel.params}
    expand = lambda node: Expand(env).visit(copy.deepcopy(node))  # noqa: E731
    masked, bounds, why = [], set(), None
    for call, args in ops:
        if args.get("mask") is None:
            continue
        found = _bound(ks, kernel, expand(args["mask"]))
        if isinstance(found, str):
            why = why or found
            continue
        bounds.add(found)
        masked.append((call, args["mask"], args.get("other")))
    if not masked:
        return why or "no masked load or store"
    if len(bounds) > 1:
        return "its masks compare against more than one bound or block"
    (n, block), = bounds
    if any(isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and x.id in (n, block)
           for x in ast.walk(kernel.fn)):
        return f"the kernel reassigns {n} or {block}: its masks may not be the launch's bound"
    streaming = _streaming(ks, kernel, ops, expand, block)
    return _Plan(n, block, masked, streaming)


def _already_hinted(ks: KernelSource, kernel: Kernel, calls: list[ast.Call], ops: list) -> str | None:
    if any(k.arg in _HINTS for call, _ in ops for k in call.keywords):
        return "a load or store sets eviction_policy or cache_modifier"
    if any(ks.tl_op(c.func) in ("multiple_of", "max_contiguous") for c in calls):
        return "it uses tl.multiple_of or tl.max_contiguous"
    # An `if FLAG:` on a constexpr around unmasked loads or stores: the masks are already switched off.
    for node in ast.walk(kernel.fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in kernel.constexprs:
            unmasked = [a for s in node.body for c, a in _memory_ops(ks, s) if a.get("mask") is None]
            if unmasked:
                return f"its masks are already switched off under the constexpr '{node.test.id}'"
    return None


def _bound(ks: KernelSource, kernel: Kernel, mask: ast.AST) -> tuple[str, str] | str:
    """(bound parameter, block parameter) of a mask `offsets < n`, or why it is not one."""
    if not (isinstance(mask, ast.Compare) and len(mask.ops) == 1 and isinstance(mask.ops[0], ast.Lt)
            and isinstance(mask.comparators[0], ast.Name) and mask.comparators[0].id in kernel.params
            and mask.comparators[0].id not in kernel.constexprs):
        return "a mask is not offsets < n (n a parameter of the kernel)"
    block = _offsets_block(ks, kernel, mask.left)
    if block is None:
        return "its offsets are not tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"
    return mask.comparators[0].id, block


def _offsets_block(ks: KernelSource, kernel: Kernel, node: ast.AST) -> str | None:
    """BLOCK, where `node` is `tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)` (either order)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return None
    for start, lanes in ((node.left, node.right), (node.right, node.left)):
        if not (isinstance(lanes, ast.Call) and ks.tl_op(lanes.func) == "arange" and len(lanes.args) == 2
                and not lanes.keywords and isinstance(lanes.args[0], ast.Constant) and lanes.args[0].value == 0
                and isinstance(lanes.args[1], ast.Name) and lanes.args[1].id in kernel.constexprs):
            continue
        block = lanes.args[1].id
        if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Mult):
            pair = (start.left, start.right)
            if any(isinstance(a, ast.Call) and ks.tl_op(a.func) == "program_id" and isinstance(b, ast.Name)
                   and b.id == block for a, b in (pair, pair[::-1])):
                return block
    return None


def _streaming(ks: KernelSource, kernel: Kernel, ops: list, expand, block: str) -> list[ast.Call]:
    """Loads of `ptr + offsets` (ptr a parameter) whose address no other load reads: each element
    is read once by one program, so nothing is gained by keeping it in cache."""
    loads = [(c, ast.dump(expand(a["pointer"]))) for c, a in ops if ks.tl_op(c.func) == "load" and "pointer" in a]
    out = []
    for call, key in loads:
        ptr = expand(call_arguments(call, _ARGS["load"])["pointer"])
        if not (isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add)):
            continue
        base, offs = (ptr.left, ptr.right) if isinstance(ptr.left, ast.Name) else (ptr.right, ptr.left)
        if isinstance(base, ast.Name) and base.id in kernel.params and _offsets_block(ks, kernel, offs) == block \
                and sum(k == key for _, k in loads) == 1:
            out.append(call)
    return out


def _kernel_edits(ks: KernelSource, kernel: Kernel, plan: _Plan, flag: str, tl: str) -> list[Edit]:
    # No default where none is needed: every launch passes the flag, and a kernel whose
    # parameters have no defaults can still be fused (fuse_elementwise) after this rewrite.
    default = " = False" if kernel.fn.args.defaults else ""  # False: masked, right for any n
    edits = [append_parameter(kernel.fn, f"{flag}: {tl}.constexpr{default}")]
    for call, mask, other in plan.masked:
        edits.append(Edit(Place.of(mask), f"None if {flag} else {ks.text(mask)}"))
        if other is not None:  # Triton refuses `other` without a mask
            edits.append(Edit(Place.of(other), f"None if {flag} else {ks.text(other)}"))
    edits += [insert_keyword(call, "eviction_policy", '"evict_first"') for call in plan.streaming]
    return edits


def _host_edits(ks: KernelSource, kernel: Kernel, plan: _Plan, flag: str, triton: str,
                taken: set[str]) -> list[Edit] | str:
    launches = launches_of(ks, kernel)
    if not launches:
        return "no launch of it in this file"
    by_decorator = plan.block in kernel.heuristic_names() or kernel.autotuned
    edits: list[Edit] = []
    for call in launches:
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            return "a launch passes arguments with * or **"
        args = call_arguments(call, kernel.params)
        n, block = args.get(plan.n), args.get(plan.block)
        if n is None:
            return f"a launch does not pass {plan.n}"
        if block is None and not by_decorator:
            return f"a launch does not pass {plan.block} and no decorator sets it"
        wrong = _grid_mismatch(ks, call, n, block, plan.block)
        if wrong:
            return wrong
        if block is not None:
            edits += _flag_at_launch(ks, call, n, block, flag, taken)
    if by_decorator:  # innermost, so it sees the block that autotune or earlier heuristics chose
        jit = kernel.jit
        text = f'@{triton}.heuristics({{"{flag}": lambda args: args["{plan.n}"] % args["{plan.block}"] == 0}})'
        edits.append(Edit(Place.point(jit.lineno, jit.col_offset - 1), f"{text}\n{' ' * (jit.col_offset - 1)}"))
    return edits


def _flag_at_launch(ks: KernelSource, call: ast.Call, n: ast.expr, block: ast.expr, flag: str,
                    taken: set[str]) -> list[Edit]:
    """`FLAG=n % block == 0` at the launch, read from the name the block is passed as: a
    literal or expression is first set to a local, so that a move of its value moves both."""
    count = ks.text(n) if isinstance(n, _ATOMIC) else f"({ks.text(n)})"
    if isinstance(block, ast.Name):
        return [insert_keyword(call, flag, f"{count} % {block.id} == 0", order=1)]
    stmt = statement_of(ks.tree, call)
    var = fresh_name("block", taken)
    return [Edit(Place.point(stmt.lineno, stmt.col_offset),
                 f"{var} = {ks.text(block)}  # the block, read by the launch and its {flag} (hints)\n"
                 + " " * stmt.col_offset),
            Edit(Place.of(block), var), insert_keyword(call, flag, f"{count} % {var} == 0", order=1)]


def _grid_mismatch(ks: KernelSource, call: ast.Call, n: ast.expr, block: ast.expr | None, param: str) -> str | None:
    """Why the launch's grid is not `(triton.cdiv(n, block),)`, with the launch's own n and
    block (a META lambda reads the block from the launch); None when it is. Only on that grid
    does `n % block == 0` put every lane of every program in bounds."""
    grid = _grid_value(ks, call)
    meta = None
    if isinstance(grid, ast.Lambda) and len(grid.args.args) == 1:
        meta, grid = grid.args.args[0].arg, grid.body
    cdiv = grid.elts[0] if isinstance(grid, ast.Tuple) and len(grid.elts) == 1 else None
    if not (isinstance(cdiv, ast.Call) and ks.qualify(cdiv.func) == "triton.cdiv" and len(cdiv.args) == 2):
        return "its grid is not (triton.cdiv(n, BLOCK),)"
    count, per = cdiv.args
    if ast.dump(count) != ast.dump(n):
        return f"its grid divides {ast.unparse(count)}, not the {ast.unparse(n)} it passes as the bound"
    reads_meta = (isinstance(per, ast.Subscript) and isinstance(per.value, ast.Name) and per.value.id == meta
                  and isinstance(per.slice, ast.Constant) and per.slice.value == param)
    if reads_meta or (isinstance(block, ast.Name) and ast.dump(per) == ast.dump(block)):
        return None
    return "its grid does not divide by the block the launch passes (by name or through META)"


def _grid_value(ks: KernelSource, call: ast.Call) -> ast.AST:
    """The grid of `kernel[grid](...)`, through one assignment of a local name."""
    grid = call.func.slice
    if not isinstance(grid, ast.Name):
        return grid
    fn = next((f for f in ast.walk(ks.tree) if isinstance(f, ast.FunctionDef)
               and any(n is call for n in ast.walk(f))), ks.tree)
    values = [s.value for s in ast.walk(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == grid.id]
    return values[0] if len(values) == 1 else grid
