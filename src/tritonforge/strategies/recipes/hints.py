"""Hints for 1-D streaming kernels: bounds masks dropped in every program whose block lies
wholly in bounds, and loads that read each element once told to leave the cache first.

The kernels are those written as `offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)`
whose loads and stores are masked by `offsets < n`. Such a mask makes the compiler give up
wide loads unless it can prove n a multiple of 16: for fp16 and an odd n, each lane loads 2
bytes at a time (`ld.global.b16`) instead of 16. The body is written twice, under
`if tl.program_id(0) * BLOCK + BLOCK <= n:` (every lane in bounds, the masks dropped: wide
loads) and `else:` (as written, for the last, partial block). The test is exact for any n,
block and grid, so nothing on the host changes, and a later move of the block keeps it right.

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
import textwrap

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, program_axis
from tritonforge.strategies.editing import Edit, Place, apply_edits, insert_keyword
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import Expand, single_assignments
from tritonforge.strategies.recipes.persistent import body_place, kernel_body

_ARGS = {"load": ("pointer", "mask", "other"), "store": ("pointer", "value", "mask")}
_HINTS = ("eviction_policy", "cache_modifier")


class Hints(Recipe):
    name = "hints"
    rounding = ""
    points_to = frozenset({"memory_bound_far_from_peak", "uncoalesced_access"})
    alone = True

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl = ks.alias("triton.language")
        if tl is None:
            return "triton.language is not imported under a name"
        edits, notes, reasons = [], [], []
        for kernel in ks.kernels.values():
            plan = _plan(ks, kernel)
            if isinstance(plan, str):
                reasons.append(f"{kernel.name}: {plan}")
                continue
            edits.append(_split_body(ks, kernel, plan, tl))
            notes.append(f"{kernel.name}: {len(plan.masked)} mask{'s' if len(plan.masked) != 1 else ''} dropped "
                         f"where a program's block is full ({plan.block} lanes below {plan.n}), "
                         f"{len(plan.streaming)} load{'s' if len(plan.streaming) != 1 else ''} evict_first")
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
    if any(isinstance(n, ast.Return) for n in ast.walk(kernel.fn)):
        return "returns early: its body cannot be written as two branches"
    ops = _memory_ops(ks, kernel.fn)
    hinted = _already_hinted(ks, kernel, calls, ops)
    if hinted:
        return f"already hinted: {hinted}"
    # A parameter set again in the body is not expanded (`n = n - 1` would expand forever).
    env = {k: v for k, v in single_assignments(kernel.fn.body).items() if k not in kernel.params}
    expand = lambda node: Expand(env).visit(copy.deepcopy(node))  # noqa: E731
    masked, bounds, why = [], set(), None
    for call, args in ops:
        if _unmasked(args):
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
    # Unmasked loads or stores under an `if` on a constexpr (`if EVEN:`) or on a comparison (this
    # recipe's own `if pid * BLOCK + BLOCK <= n:`): the masks are already switched off there.
    for node in ast.walk(kernel.fn):
        if not isinstance(node, ast.If):
            continue
        unmasked = [a for s in node.body for c, a in _memory_ops(ks, s) if _unmasked(a)]
        if unmasked and isinstance(node.test, ast.Name) and node.test.id in kernel.constexprs:
            return f"its masks are already switched off under the constexpr '{node.test.id}'"
        if unmasked and isinstance(node.test, ast.Compare):
            return f"its masks are already switched off under `if {ast.unparse(node.test)}`"
    return None


def _unmasked(args: dict[str, ast.AST]) -> bool:
    """A load or store written without a mask, or with `mask=None`."""
    mask = args.get("mask")
    return mask is None or (isinstance(mask, ast.Constant) and mask.value is None)


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


def _split_body(ks: KernelSource, kernel: Kernel, plan: _Plan, tl: str) -> Edit:
    """The body under `if <block full>:` with its masks dropped, and as written under `else:`;
    streaming loads evict_first in both."""
    evict = [insert_keyword(call, "eviction_policy", '"evict_first"') for call in plan.streaming]
    dropped = [Edit(Place.of(node), "None") for _, mask, other in plan.masked for node in (mask, other)
               if node is not None]  # Triton refuses `other` without a mask
    body = kernel_body(kernel)
    first, last = body[0].lineno, body[-1].end_lineno
    pad = " " * body[0].col_offset

    def lines(edits: list[Edit]) -> str:  # the edits write no line ends, so the body keeps its lines
        return "".join(apply_edits(ks.source, edits).splitlines(keepends=True)[first - 1:last])

    full = f"{tl}.program_id(0) * {plan.block} + {plan.block} <= {plan.n}"
    text = (f"{pad}if {full}:  # every lane in bounds: no masks (hints)\n"
            + textwrap.indent(lines(dropped + evict), "    ")
            + f"{pad}else:\n" + textwrap.indent(lines(evict), "    ").rstrip("\r\n"))
    return Edit(body_place(ks, body), text)
