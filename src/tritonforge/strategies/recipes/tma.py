"""Tensor-descriptor (TMA) loads for the A and B tiles of a tiled `tl.dot` kernel.

A copy `<name>_tma` takes A and B as descriptors and loads each tile with `desc.load([row0,
k0])`; the launch runs it where both operands allow a descriptor (last dim contiguous; base,
rows and tile rows 16-byte aligned) and the original kernel, unchanged, elsewhere. Applies to
pointer blocks `x_ptr + offs_r[:, None] * stride_r + offs_c[None, :] * stride_c` over offsets
`start + tl.arange(0, BLOCK)`, advanced only by `BLOCK_K * stride` a step, masked by bounds
with zero fill or not at all: the descriptor takes the launch's bounds, strides and blocks,
so its zero padding is the masks' fill. Why: on Hopper the TMA unit moves the tile, freeing
registers and address arithmetic; the interpreter checks only correctness.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, launched_kernel
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import first_kernel, fresh_name, per_launch, statement_of
from tritonforge.strategies.recipes.split_k import range_form

DESCRIPTOR = "triton.tools.tensor_descriptor.TensorDescriptor"
FORM = "x_ptr + offs_r[:, None] * stride_r + offs_c[None, :] * stride_c"
TRANSPOSED = "is read transposed (contiguous along K): a transposed descriptor load is not in this first version"


class TensorDescriptorLoads(Recipe):
    name = "tma"
    rounding = ""
    points_to = frozenset({"memory_bound_far_from_peak", "latency_bound_little_in_flight", "compute_bound_tensor"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)

        def describe(kernel: Kernel) -> Rewrite | str:
            plan = _kernel_plan(ks, kernel)
            host = plan if isinstance(plan, str) else \
                per_launch(ks, kernel, lambda call: _launch_edit(ks, kernel, call, plan))
            if isinstance(host, str):
                return host
            end = kernel.fn.end_lineno  # the copy goes after the kernel's last line
            edits = [Edit(Place.point(end, len(source.splitlines()[end - 1].encode())),
                          "\n\n\n" + _kernel_copy(ks, kernel, plan)), *host, *_import_edit(ks)]
            note = f"{kernel.name}: A and B tiles loaded through tensor descriptors (TMA) where their layout allows"
            return Rewrite(apply_edits(source, edits), f"{note} ({kernel.name}_tma)")

        return first_kernel(ks, describe)


@dataclass
class _Dim:
    offs: ast.expr  # the offsets as the pointer block indexes them (`offs_m`)
    start: str  # where the tile starts along this dim, as kernel code valid at the load
    block: ast.expr  # the tile's size along it (the arange's end)
    stride: ast.expr | None  # None: 1
    bound: ast.expr | None = None  # what the mask keeps the offsets under; None: unmasked


@dataclass
class _Operand:
    load: ast.Call
    param: str  # the pointer parameter, a descriptor in the copy
    desc: str  # its name in the copy
    dims: list[_Dim]
    drop: list[ast.stmt]  # the pointer block's assignment and advance, gone from the copy


class _Ctx:
    """What the checks of one kernel share."""

    def __init__(self, ks: KernelSource, kernel: Kernel, loop: ast.For):
        self.ks, self.kernel, self.loop, fn = ks, kernel, loop, kernel.fn
        stored = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        self.stores = {name: stored.count(name) for name in stored}
        # Names set once in the kernel hold one value wherever they are seen: safe to expand.
        self.env = {s.targets[0].id: s.value for s in [*fn.body, *loop.body] if isinstance(s, ast.Assign) and
                    len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and self.stores[s.targets[0].id] == 1}
        self.taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | set(kernel.params)

    def resolve(self, e: ast.expr) -> ast.expr:
        for _ in range(8):
            e = self.env.get(e.id, e) if isinstance(e, ast.Name) else e
        return e

    def fixed(self, e: ast.expr | None) -> bool:
        """A parameter or module constant the kernel does not reassign, or an int literal."""
        if isinstance(e, ast.Constant):
            return type(e.value) is int
        return isinstance(e, ast.Name) and (e.id in self.kernel.params or e.id in self.ks.constants) \
            and not self.stores.get(e.id)


def _kernel_plan(ks: KernelSource, kernel: Kernel) -> list[_Operand] | str:
    if kernel.autotuned or kernel.heuristics:
        return ("block sizes from @triton.autotune/@triton.heuristics configs: the descriptors' block shape would "
                "have to be set in a pre_hook (not done yet)")
    fn = kernel.fn
    if f"{kernel.name}_tma" in ks.kernels or kernel.name.endswith("_tma"):
        return "already has a tensor-descriptor copy"
    dots = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "dot"]
    if not dots:
        return "no tl.dot: not a tiled product"
    loop = next((s for s in fn.body if any(n is dots[0] for n in ast.walk(s))), None)
    if len(dots) != 1 or not isinstance(loop, ast.For) or len(dots[0].args) < 2 or fn.col_offset:
        return "not one tl.dot(a, b) in a loop at the top level of a module-level kernel"
    if any(isinstance(n, (ast.Continue, ast.Break)) for n in ast.walk(loop)):
        return "its K loop has continue or break: its pointers may not advance every step"
    ctx, operands = _Ctx(ks, kernel, loop), []
    for which, arg, k_axis in (("A", dots[0].args[0], 1), ("B", dots[0].args[1], 0)):
        load = _loaded(ctx, arg)
        op = _operand(ctx, load, k_axis) if load is not None else "it is not a tl.load"
        if isinstance(op, str):
            return f"tl.dot's {which}: {op}"
        operands.append(op)
    return operands if operands[0].param != operands[1].param else "A and B are loaded through one pointer parameter"


def _loaded(ctx: _Ctx, arg: ast.expr) -> ast.Call | None:
    """The tl.load a dot operand is (through names set once, and `.to(...)`)."""
    arg = ctx.resolve(arg)
    while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "to":
        arg = ctx.resolve(arg.func.value)
    return arg if isinstance(arg, ast.Call) and ctx.ks.tl_op(arg.func) == "load" else None


def _operand(ctx: _Ctx, load: ast.Call, k_axis: int) -> _Operand | str:
    if len(load.args) > 3 or any(k.arg not in ("mask", "other") for k in load.keywords) \
            or not any(n is load for s in ctx.loop.body for n in ast.walk(s)):
        return "its load is not in the K loop, or has options a descriptor load does not take"
    given = dict(zip(("pointer", "mask", "other"), load.args)) | {k.arg: k.value for k in load.keywords}
    found = _pointer(ctx, given["pointer"])
    if isinstance(found, str):
        return found
    expr, drop, advance = found
    terms = _sum_terms(expr)
    kernel = ctx.kernel
    bases = [t for t in terms if isinstance(t, ast.Name) and t.id in kernel.params and t.id not in kernel.constexprs]
    tiles = [_tile_term(t) for t in terms if t not in bases]
    if len(bases) != 1 or None in tiles or sorted(t[1] for t in tiles) != [0, 1]:
        return f"its pointer block is not of the form {FORM}"
    param = bases[0].id
    # The copy has no pointer for it: nothing but this pointer block may read it.
    if sum(isinstance(n, ast.Name) and n.id == param for s in kernel.fn.body for n in ast.walk(s)) != 1:
        return f"'{param}' is used besides its tile load"
    (rows, _, row_stride), (cols, _, col_stride) = sorted(tiles, key=lambda t: t[1])
    if col_stride is not None and row_stride is None:
        return TRANSPOSED
    if not all(s is None or ctx.fixed(s) for s in (row_stride, col_stride)):
        return "its strides are not parameters the kernel leaves alone"
    shift, why = _shift(ctx, advance, (row_stride, col_stride)[k_axis]) if advance else (None, None)
    if why:
        return why
    dims = []
    for axis, (offs, stride) in enumerate(((rows, row_stride), (cols, col_stride))):
        start = _offsets(ctx, offs)
        if start is None:
            return f"its offsets '{ast.unparse(offs)}' are not start + tl.arange(0, BLOCK) with a start set once"
        text, block = start
        if axis == k_axis and shift is not None:  # the K tile moved on by the advances so far
            text = shift if text == "0" else f"({text}) + {shift}"
        dims.append(_Dim(offs, text, block, stride))
    if why := _bounds(ctx, given.get("mask"), given.get("other"), dims, k_axis, shift):
        return why
    desc = fresh_name(param[:-4] + "_desc" if param.endswith("_ptr") else param + "_desc", ctx.taken)
    return _Operand(load, param, desc, dims, drop)


def _pointer(ctx: _Ctx, ptr: ast.expr):
    """(the pointer block, the statements that make and advance it, the advance): written in the
    load, or a name set once (before the loop, then maybe advanced once a step; or in the loop)."""
    if not isinstance(ptr, ast.Name):
        return ptr, [], None
    body, fn = ctx.loop.body, ctx.kernel.fn
    made = [s for s in [*fn.body, *body] if isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and s.targets[0].id == ptr.id]
    adv = [s for s in body if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add)
           and isinstance(s.target, ast.Name) and s.target.id == ptr.id]
    reads = sum(isinstance(n, ast.Name) and n.id == ptr.id and isinstance(n.ctx, ast.Load) for n in ast.walk(fn))
    if len(made) != 1 or len(adv) > 1 or ctx.stores.get(ptr.id) != 1 + len(adv) or reads != 1:
        return f"its pointer '{ptr.id}' is not set once, advanced at most once a step and read only by the load"
    load_at = next(i for i, s in enumerate(body) if any(n is ptr for n in ast.walk(s)))
    if adv and (made[0] in body or body.index(adv[0]) < load_at):
        return f"its pointer '{ptr.id}' is made in the loop and advanced, or advanced before the load"
    lines = ctx.ks.source.encode().splitlines()  # the copy drops these statements' whole lines
    if any(lines[s.lineno - 1][:s.col_offset].strip() or
           lines[s.end_lineno - 1][s.end_col_offset:].split(b"#")[0].strip() for s in [made[0], *adv]):
        return f"its pointer '{ptr.id}' is made or advanced on a line shared with other code"
    return made[0].value, [made[0], *adv], (adv[0] if adv else None)


def _shift(ctx: _Ctx, advance: ast.AugAssign, k_stride: ast.expr | None) -> tuple[str | None, str | None]:
    """(how far along K the advances have moved the pointer at the load, as kernel code; why not known)."""
    form = range_form(ctx.ks, ctx.loop, ctx.kernel)
    if isinstance(form, str):
        return None, f"its pointers advance, but {form}"
    _, step, steps_form = form
    if not _same(advance.value, step if k_stride is None else f"{step} * {ast.unparse(k_stride)}"):
        return None, f"its pointer advances by {ast.unparse(advance.value)}, not {step} * its K stride"
    k = ctx.loop.target.id
    return (f"{k} * {step}" if steps_form else k), None


def _sum_terms(e: ast.expr) -> list[ast.expr]:
    return _sum_terms(e.left) + _sum_terms(e.right) if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add) else [e]


def _axis(e: ast.expr) -> tuple[ast.expr, int] | None:
    """(offs, 0) for `offs[:, None]`, (offs, 1) for `offs[None, :]`."""
    if not (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Tuple) and len(e.slice.elts) == 2):
        return None
    kinds = ["none" if isinstance(x, ast.Constant) and x.value is None else
             "all" if isinstance(x, ast.Slice) and not (x.lower or x.upper or x.step) else "?" for x in e.slice.elts]
    return {("all", "none"): (e.value, 0), ("none", "all"): (e.value, 1)}.get(tuple(kinds))


def _tile_term(t: ast.expr) -> tuple[ast.expr, int, ast.expr | None] | None:
    """(offs, axis, stride) of `offs[:, None] * stride` (either order) or `offs[None, :]` (stride 1)."""
    product = isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult)
    for side, stride in [(t, None)] + ([(t.left, t.right), (t.right, t.left)] if product else []):
        found = _axis(side)
        if found and (stride is None or isinstance(stride, (ast.Name, ast.Constant))):
            return found[0], found[1], stride
    return None


def _offsets(ctx: _Ctx, offs: ast.expr) -> tuple[str, ast.expr] | None:
    """(the start, as code, and BLOCK) of offsets `start + tl.arange(0, BLOCK)`, start set once."""
    e = ctx.resolve(offs)
    added = isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)
    for a, start in [(e, None)] + ([(e.right, e.left), (e.left, e.right)] if added else []):
        if not (isinstance(a, ast.Call) and ctx.ks.tl_op(a.func) == "arange" and len(a.args) == 2
                and ast.unparse(a.args[0]) == "0" and ctx.fixed(a.args[1])):
            continue
        # Names set at most once hold one value wherever seen: the start means the same at the load.
        if start is None or all(ctx.stores.get(n.id, 0) <= 1 for n in ast.walk(start) if isinstance(n, ast.Name)):
            return ("0" if start is None else ctx.ks.text(start)), a.args[1]
    return None


def _bounds(ctx: _Ctx, mask, other, dims: list[_Dim], k_axis: int, shift: str | None) -> str | None:
    """Set each dim's bound from a mask `offs_r[:, None] < R & offs_c[None, :] < C` (a K bound
    minus the advances so far where the pointer advances); or why the mask is not that."""
    if mask is None:
        return None
    if not (isinstance(other, ast.Constant) and type(other.value) in (int, float) and other.value == 0):
        return f"its masked load fills with {ast.unparse(other) if other else 'nothing'}, not zero: not a bounds mask"
    terms, e = [], ctx.resolve(mask)
    while isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitAnd):
        terms.append(ctx.resolve(e.right))
        e = ctx.resolve(e.left)
    for term in [e, *terms]:
        found = _axis(term.left) if isinstance(term, ast.Compare) and len(term.ops) == 1 \
            and isinstance(term.ops[0], ast.Lt) else None
        dim = dims[found[1]] if found else None
        if dim is None or ast.dump(found[0]) != ast.dump(dim.offs) or dim.bound is not None:
            return f"its mask '{ast.unparse(mask)}' is not bounds of its tile offsets"
        bound = ctx.resolve(term.comparators[0])
        if found[1] == k_axis and shift is not None:  # `offs_k < K - k * BLOCK_K`
            moved = isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Sub) and _same(bound.right, shift)
            bound = bound.left if moved else None
        if not ctx.fixed(bound):
            return f"its mask '{ast.unparse(mask)}' does not bound its offsets by a parameter"
        dim.bound = bound
    return None


def _same(e: ast.expr, code: str) -> bool:
    """`e` is `code` (`k`, or `k * BLOCK_K` with the product in either order)."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return sorted(code.split(" * ")) == sorted([ast.unparse(e.left), ast.unparse(e.right)])
    return ast.unparse(e) == code


def _kernel_copy(ks: KernelSource, kernel: Kernel, operands: list[_Operand]) -> str:
    """The kernel as `<name>_tma`: descriptor parameters, descriptor loads, no pointer blocks."""
    fn, lines = kernel.fn, ks.source.splitlines()
    line = lines[fn.lineno - 1]
    at = len(line[:line.index(f"def {fn.name}") + 4].encode())
    edits = [Edit(Place(fn.lineno, at, fn.lineno, at + len(fn.name.encode())), f"{fn.name}_tma")]
    params = {a.arg: a for a in [*fn.args.posonlyargs, *fn.args.args]}
    for op in operands:
        arg = params[op.param]
        edits.append(Edit(Place(arg.lineno, arg.col_offset, arg.lineno, arg.col_offset + len(op.param)), op.desc))
        edits.append(Edit(Place.of(op.load), f"{op.desc}.load([{op.dims[0].start}, {op.dims[1].start}])"))
        edits += [Edit(Place(s.lineno, 0, s.end_lineno + 1, 0), "") for s in op.drop]
    first = (fn.decorator_list[0] if fn.decorator_list else fn).lineno
    return _segment(ks.source, Place(first, 0, fn.end_lineno, fn.end_col_offset), edits)


def _launch_edit(ks: KernelSource, kernel: Kernel, call: ast.Call, operands: list[_Operand]) -> Edit | str:
    """The launch as a dispatch: the copy with descriptors where both layouts allow, else as it was."""
    stmt = statement_of(ks.tree, call)
    if not (isinstance(stmt, ast.Expr) and stmt.value is call):
        return "its launch is not a statement of its own"
    args, taken = call_arguments(call, kernel.params), {n.id for n in ast.walk(ks.tree) if isinstance(n, ast.Name)}
    # Literal block sizes move to names both launches and the descriptors read, so that a later
    # launch-parameter move of one literal keeps the three consistent.
    blocks = sorted({d.block.id for op in operands for d in op.dims if isinstance(d.block, ast.Name)} & set(args),
                    key=lambda p: (args[p].lineno, args[p].col_offset))
    literal = {p: args[p] for p in blocks if not any(isinstance(n, ast.Name) for n in ast.walk(args[p]))}
    names = {p: fresh_name(p.lower(), taken) for p in literal}
    texts = {p: ks.text(v) for p, v in args.items()} | names
    edits, made, checks = [Edit(Place.of(v), names[p]) for p, v in literal.items()], [], []
    tma = [Edit(Place.of(launched_kernel(call) or call.func.value), f"{kernel.name}_tma")]
    for op in operands:
        x = args.get(op.param)
        found = _descriptor(ks, kernel, op, x, texts) if isinstance(x, ast.Name) else f"'{op.param}' is not a name"
        if isinstance(found, str):
            return f"its launch: {found}"
        desc = fresh_name(op.desc, taken)
        checks, made = checks + found[0], made + [f"{desc} = {found[1]}"]
        keyword = next((k for k in call.keywords if k.value is x), None)
        tma.append(Edit(Place.of(keyword), f"{op.desc}={desc}") if keyword else Edit(Place.of(x), desc))
    pad, use = " " * stmt.col_offset, fresh_name("use_tma", taken)
    head = f"{', '.join(names.values())} = {', '.join(ks.text(v) for v in literal.values())}\n{pad}" if names else ""
    cond = f"\n{pad}{' ' * (len(use) + 4)}and ".join(dict.fromkeys(checks))
    inner = "".join(f"{line}\n{pad}" for line in made) + _segment(ks.source, Place.of(stmt), edits + tma)
    plain = _segment(ks.source, Place.of(stmt), edits)
    return Edit(Place.of(stmt), f"{head}# Tensor-descriptor (TMA) loads where both operands' layouts allow them (tma)\n"
                                f"{pad}{use} = ({cond})\n{pad}if {use}:\n{pad}    " + inner.replace("\n", "\n    ")
                + f"\n{pad}else:\n{pad}    " + plain.replace("\n", "\n    "))


def _descriptor(ks: KernelSource, kernel: Kernel, op: _Operand, x: ast.Name, texts: dict[str, str]):
    """(the checks that let `x` be read through a descriptor, the descriptor), or why not."""
    def host(e: ast.expr | None, none: str | None) -> str | None:  # a module constant: the same name on the host
        return none if e is None else str(e.value) if isinstance(e, ast.Constant) else \
            texts.get(e.id) if e.id in kernel.params else e.id

    values = [host(e, none) for d in op.dims for e, none in ((d.bound, "-"), (d.stride, "1"), (d.block, None))]
    if None in values:
        return "it does not pass the bounds, strides and block sizes of the tiles"
    (b0, s0, k0), (b1, s1, k1) = values[:3], values[3:]
    if (s0, s1) == (f"{x.id}.stride(1)", f"{x.id}.stride(0)"):
        return f"'{op.param}' {TRANSPOSED}"
    shape = [b if b != "-" else f"{x.id}.shape[{i}]" for i, b in enumerate((b0, b1))]
    # What a descriptor needs: base and rows 16-byte aligned, the last dim contiguous, tile
    # rows of 16 bytes or more; unmasked dims take the tensor's own extent.
    checks = [f"{x.id}.dim() == 2 and tuple({x.id}.stride()) == ({s0}, {s1})"] if "-" in (b0, b1) else []
    checks += [] if s1 == "1" else [f"{s1} == 1"]
    checks += [f"({s0} * {x.id}.element_size()) % 16 == 0", f"{x.id}.data_ptr() % 16 == 0",
               f"({k1} * {x.id}.element_size()) % 16 == 0", f"{shape[0]} > 0 and {shape[1]} > 0"]
    name = ks.alias(DESCRIPTOR) or "TensorDescriptor"
    return checks, f"{name}({x.id}, [{shape[0]}, {shape[1]}], [{s0}, {s1}], [{k0}, {k1}])"


def _import_edit(ks: KernelSource) -> list[Edit]:
    if ks.alias(DESCRIPTOR):
        return []
    last = [s for s in ks.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))][-1]
    return [Edit(Place.point(last.end_lineno, last.end_col_offset),
                 "\nfrom triton.tools.tensor_descriptor import TensorDescriptor")]


def _segment(source: str, place: Place, edits: list[Edit]) -> str:
    """The text at `place` once `edits` (all inside it) are made."""
    before, after = source.encode(), apply_edits(source, edits).encode()
    starts = [0]
    for line in before.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    start, end = starts[place.line - 1] + place.col, starts[place.end_line - 1] + place.end_col
    return after[start:end + len(after) - len(before)].decode()
