"""A persistent grid for launches of many tiny programs (the rows part of `persistent_grid`),
and the loop over program ids other recipes share.

A kernel launched with one program per row of a tensor with a million short rows pays the
start of a million programs, each of which moves a few hundred bytes. Persistent, the
kernel runs its original body in a loop over those ids, `for pid in range(tl.program_id(0),
N_TILES, tl.num_programs(0))`, and the launch starts only as many programs as the SMs hold
(the SM count read at run time, times `programs_per_sm`: at most 32, and no more than an
SM's warps hold at the launch's num_warps, which moves to a local for the launch search to
tune), passing the original number of programs as `N_TILES`. On CPU tensors (Triton's
interpreter) it starts 4, so the loop really takes more than one id per program.

Applies only where each program's work depends on nothing but its id: a 1-D grid, one read
of `tl.program_id(0)` and none of another axis or of `tl.num_programs`, no `return`, and no
helper in the file that reads its own program id (`tl.dot` kernels take persistent_tiles.py).
A parameter the kernel moves (`x += row * stride`) becomes a copy made for each id, since
the loop would otherwise carry it from one id to the next.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from dataclasses import dataclass
from typing import Callable, Mapping

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments, program_axis
from tritonforge.strategies.editing import Edit, Place, append_parameter, apply_edits, insert_keyword
from tritonforge.strategies.recipes.exprs import single_assignments
from tritonforge.strategies.recipes.host import fresh_name, insert_before, per_launch, statement_of

# Programs per SM, the most `programs_per_sm` starts at: 32 is as many blocks as an SM of an
# H100/H200 holds at once. Fewer leave an SM's latency of a tiny program uncovered (a trial
# on the H200 with 4 per SM was slower than one program per row; not a recorded benchmark).
PER_SM = 32
# Warps an SM of an H100/H200 holds at once. Programs beyond what the SMs hold wait for a
# second wave and then run a whole share of the ids each, so the count also follows the
# launch's warps: 32 programs of 4 warps were two waves (s9: 1.376x on a million short rows,
# where rows_per_program with one warp gave 2.060x).
WARPS_PER_SM = 64
DEFAULT_WARPS = 4  # Triton's num_warps where a launch passes none
CPU_PROGRAMS = 4  # programs on CPU tensors: few, so each takes several ids
TILES = "N_TILES"


def row_edits(ks: KernelSource, kernel: Kernel, tl: str, torch: str, taken: set[str]) -> list[Edit] | str:
    """The edits that make a kernel of one program per id and its launches persistent, or why not."""
    host = _why_not(ks, kernel) or per_launch(ks, kernel, lambda call: _host_edits(ks, kernel, call, torch, taken))
    return host if isinstance(host, str) else _kernel_edits(ks, kernel, tl) + [e for h in host for e in h]


def host_names(ks: KernelSource) -> set[str]:
    """Names the host code uses (kernel bodies left out: their names are not the entry's)."""
    kernels = {id(k.fn) for k in ks.kernels.values()}
    stack, names = [ks.tree], set()
    while stack:
        node = stack.pop()
        if id(node) not in kernels:
            names |= {node.id} if isinstance(node, ast.Name) else set()
            stack += list(ast.iter_child_nodes(node))
    return names


def torch_alias(tree: ast.Module) -> str | None:
    return next((a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names
                 if a.name == "torch"), None)


def tl_calls(ks: KernelSource, fn: ast.FunctionDef, op: str) -> list[ast.Call]:
    """The calls in `fn` of triton.language functions whose name starts with `op`, in `ast.walk` order."""
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and (ks.tl_op(n.func) or "").startswith(op)]


def _why_not(ks: KernelSource, kernel: Kernel) -> str | None:
    """Why running this kernel's body once per id in a loop would not be the same computation."""
    fn = kernel.fn
    if tl_calls(ks, fn, "num_programs") or TILES in kernel.params:
        return "already loops over programs (reads tl.num_programs)"
    ids = tl_calls(ks, fn, "program_id")
    if any(program_axis(c) != 0 for c in ids):
        return "reads tl.program_id on an axis other than a constant 0 (a grid of more than one axis)"
    if len(ids) != 1:
        return "reads tl.program_id(0) more than once" if ids else "never reads tl.program_id: no per-program work"
    return loop_refusal(ks, fn)


def loop_refusal(ks: KernelSource, fn: ast.FunctionDef) -> str | None:
    """Why a body that reads its ids as it should still could not run in a loop over them."""
    if any(isinstance(n, ast.Return) for n in ast.walk(fn)):
        return "returns early: in a loop over ids that would skip the ids after it"
    helper = helper_reading_ids(ks, fn, set())
    if helper:
        return f"calls {helper}, which reads its own program id"
    if fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg or fn.args.defaults:
        return "has keyword-only, variadic or defaulted parameters (N_TILES cannot go last)"
    return None


def helper_reading_ids(ks: KernelSource, fn: ast.FunctionDef, seen: set[str]) -> str | None:
    """A @triton.jit function of this file that `fn` calls (directly or not) and that reads
    tl.program_id or tl.num_programs: inside it the id would be the program's, not the loop's."""
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        helper = ks.kernels.get(call.func.id)
        if helper is None or helper.name in seen:
            continue
        seen.add(helper.name)
        if tl_calls(ks, helper.fn, "program_id") or tl_calls(ks, helper.fn, "num_programs") \
                or helper_reading_ids(ks, helper.fn, seen):
            return helper.name
    return None


def moved_params(kernel: Kernel) -> list[str]:
    """Parameters the body assigns, in the order of the signature."""
    stored = {n.id for n in ast.walk(kernel.fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return [p for p in kernel.params if p in stored]


def kernel_body(kernel: Kernel) -> list[ast.stmt]:
    """The kernel's statements, without its docstring."""
    body = kernel.fn.body
    doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
        body[0].value.value, str)
    return body[1:] if doc and len(body) > 1 else body


def _kernel_edits(ks: KernelSource, kernel: Kernel, tl: str) -> list[Edit]:
    """The body, re-indented into the loop over ids, and N_TILES as the last parameter."""
    loop = IdLoop(TILES, "tile_id", "persistent: ids strided by num_programs")
    return [append_parameter(kernel.fn, TILES), loop_over_ids(ks, kernel, tl, loop, local_names(kernel.fn))]


def local_names(fn: ast.FunctionDef) -> set[str]:
    """Every name `fn` reads or sets: what a new local of its body must not be called."""
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}


@dataclass(frozen=True)
class IdLoop:
    """What a recipe's loop over a kernel's original program ids is made of."""

    bound: str  # the parameter the ids run below (the original number of programs)
    var: str  # the loop variable, unless the id already has a name of its own (`pid = tl.program_id(0)`)
    note: str  # the comment on the `for` line
    before: tuple[str, ...] = ()  # statements before the loop, at the body's indent
    after: tuple[str, ...] = ()  # statements after it
    # `tl.range(..., flatten=True)`: Triton flattens the loop nest and pipelines the loads of one
    # tile's inner loop across into the next tile's, as its persistent-matmul tutorial does.
    flatten: bool = False


# Given the loop variable: the lines at the top of the loop's body, and what each tl.program_id
# and tl.num_programs call of the body becomes.
Reads = Callable[[str], tuple[tuple[str, ...], Mapping[ast.Call, str]]]


def loop_over_ids(ks: KernelSource, kernel: Kernel, tl: str, loop: IdLoop, taken: set[str],
                  replace: Mapping[ast.stmt, str] | None = None,
                  reads: Reads | None = None) -> Edit:
    """The edit that runs the kernel's body once per id, `for var in range(tl.program_id(0),
    bound, tl.num_programs(0))` (`tl.range`, flattened, where `loop.flatten`), between
    `loop.before` and `loop.after`; each top-level statement of `replace` is written as its
    text. `taken`: names the loop variable avoids.
    `reads` (a tiled loop's ids) says how the body reads its ids from the loop variable;
    without it the one tl.program_id(0) becomes the loop variable."""
    replace = replace or {}
    body = kernel_body(kernel)
    first, last = body[0], body[-1]
    lines = ks.source.splitlines(keepends=True)
    region = "".join(lines[first.lineno - 1:last.end_lineno]).rstrip("\n") + "\n"
    shift = first.lineno - 1  # the region's line 1 is the body's first line
    pad = " " * first.col_offset
    start, copies = own_copies(kernel, body, shift, pad)
    if reads is None:
        var, read_id = _loop_variable(ks, kernel, tl, loop.var, taken, list(replace), shift)
    else:
        var = fresh_name(loop.var, taken)
        top, calls = reads(var)
        start = "".join(f"{pad}{line}\n" for line in top) + start
        read_id = [Edit(shifted(c, shift), text) for c, text in calls.items()]
    inner = [Edit(shifted(s, shift), text) for s, text in replace.items()] + read_id + copies
    looped = textwrap.indent(start + apply_edits(region, inner), "    ")  # whole lines, still ending in "\n"
    # The text ends without a line end: the body's last line keeps its own (`end` stops before it).
    text = ("".join(f"{pad}{s}\n" for s in loop.before)
            + f"{pad}for {var} in {_range(tl, loop)}:  # {loop.note}\n"
            + (looped + "\n".join(f"{pad}{s}" for s in loop.after) if loop.after else looped.rstrip("\n")))
    return Edit(body_place(ks, body), text)


def _range(tl: str, loop: IdLoop) -> str:
    ids = f"{tl}.program_id(0), {loop.bound}, {tl}.num_programs(0)"
    return f"{tl}.range({ids}, flatten=True)" if loop.flatten else f"range({ids})"


def body_place(ks: KernelSource, body: list[ast.stmt]) -> Place:
    """The whole lines of `body`, from the first one's start to the end of the last one's text:
    a rewrite of the body put there leaves the last line's line end as it was."""
    last = body[-1].end_lineno
    end = len(ks.source.splitlines(keepends=True)[last - 1].rstrip("\r\n").encode())
    return Place(body[0].lineno, 0, last, end)


def shifted(node: ast.AST, shift: int) -> Place:
    """Where `node` is written in the body's region, whose line 1 is the file's line shift + 1."""
    return Place(node.lineno - shift, node.col_offset, node.end_lineno - shift, node.end_col_offset)


def _loop_variable(ks: KernelSource, kernel: Kernel, tl: str, name: str, taken: set[str], replaced: list[ast.stmt],
                   shift: int) -> tuple[str, list[Edit]]:
    """The loop variable, and the edit of the body's region that makes the body read it
    instead of tl.program_id(0)."""
    call = tl_calls(ks, kernel.fn, "program_id")[0]
    named = plain_id(ks, kernel, kernel_body(kernel), call)
    if named is not None:  # `pid = tl.program_id(0)` on lines of its own: pid becomes the loop variable
        var, stmt = named
        return var, [Edit(Place(stmt.lineno - shift, 0, stmt.end_lineno - shift + 1, 0), "")]
    var = fresh_name(name, taken)
    if any(n is call for s in replaced for n in ast.walk(s)):  # an id read only by a replaced statement goes with it
        return var, []
    # The loop variable stands in for the id (a plain int in the interpreter: tl.cast makes it a tensor).
    return var, [Edit(shifted(call, shift), f"{tl}.cast({var}, {tl}.int32)")]


def own_copies(kernel: Kernel, body: list[ast.stmt], shift: int, pad: str) -> tuple[str, list[Edit]]:
    """A parameter the body moves (`x += row * stride`) becomes a copy made for each id: moved in
    place it would carry to the next id (and Triton rejects a carried value whose type changes).
    The lines that make the copies, and the edits of the region that use them."""
    local = local_names(kernel.fn)
    copies = {p: fresh_name(f"{p}_tile", local) for p in moved_params(kernel)}
    start = "".join(f"{pad}{c} = {p}  # this id's own copy of {p}\n" for p, c in copies.items())
    return start, [Edit(shifted(n, shift), copies[n.id])
                   for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id in copies]


def plain_id(ks: KernelSource, kernel: Kernel, body: list[ast.stmt], call: ast.Call
              ) -> tuple[str, ast.stmt] | None:
    """(name, statement) for a top-level `name = tl.program_id(0)` alone on its lines, where name
    is set nowhere else and never used as an object (`pid.to(...)` fails on the interpreter's int)."""
    stmt = next((s for s in body if isinstance(s, ast.Assign) and s.value is call), None)
    if stmt is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    name = stmt.targets[0].id
    lines = ks.source.splitlines()
    before, after = lines[stmt.lineno - 1][:stmt.col_offset], lines[stmt.end_lineno - 1][stmt.end_col_offset:]
    stores = [n for n in ast.walk(kernel.fn) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, ast.Store)]
    as_object = any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
                    for n in ast.walk(kernel.fn))
    if before.strip() or after.strip() and not after.strip().startswith("#") or len(stores) != 1 or as_object:
        return None
    return name, stmt


def _host_edits(ks: KernelSource, kernel: Kernel, call: ast.Call, torch: str, taken: set[str]) -> list[Edit] | str:
    """Before the launch: the original number of programs and the persistent count; the launch
    takes a grid of that count and passes the original as N_TILES."""
    stmt = launch_statement(ks, call)
    if isinstance(stmt, str):
        return stmt
    tiles = _program_count(ks, kernel, call, stmt)
    if not isinstance(tiles, ast.expr):
        return tiles
    if all(isinstance(n, ast.Constant) or (isinstance(n, ast.Name) and n.id in ks.constants)
           for n in ast.walk(tiles) if isinstance(n, (ast.Constant, ast.Name))):
        return "its grid is a constant number of programs, nothing to loop over"
    sized = _sm_count_in(ks, stmt, tiles)
    if sized:
        return f"its number of programs is already sized by the SM count ({sized})"
    tile = _tile_in_count(ks, kernel, call, tiles)
    if tile:
        return f"its number of programs follows {tile}, which its launch passes: fewer, larger programs are a launch move"
    device = device_argument(ks, kernel, call)
    if device is None:
        return "no pointer argument named at its launch to read the device from"
    n, per_sm, programs = (fresh_name(s, taken) for s in ("n_tiles", "programs_per_sm", "programs"))
    warps, warps_line, warps_edits = _warps_in_a_local(ks, kernel, call, taken)
    held = f"max(1, min({PER_SM}, {WARPS_PER_SM} // {warps}))" if warps else PER_SM
    before = warps_line + program_count(
        (n, per_sm, programs), ast.unparse(tiles), held, device, torch,
        ("the ids the kernel loops over: the programs its grid had (persistent_grid)",
         "on CPU tensors (the interpreter) a few, each taking many ids"))
    return [insert_before(stmt, before), Edit(Place.of(call.func.slice), f"({programs},)"),
            insert_keyword(call, TILES, n, order=1), *warps_edits]


def launch_statement(ks: KernelSource, call: ast.Call) -> ast.stmt | str:
    """The statement a launch a persistent recipe rewrites is part of (the host lines go before
    it), or why the launch cannot be rewritten."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return "its launch passes arguments with * or **"
    stmt = statement_of(ks.tree, call)
    return stmt if stmt is not None else "its launch is not inside a function's statements"


def _warps_in_a_local(ks: KernelSource, kernel: Kernel, call: ast.Call,
                      taken: set[str]) -> tuple[str, list[str], list[Edit]]:
    """The launch's num_warps moved to a local set before the launch (its value, or Triton's
    default), so that the launch search's moves of num_warps reach the program count too: the
    local's name, the line that sets it, the launch's edit. None where the autotuner or
    heuristics may set the warps."""
    if kernel.autotuned or kernel.heuristics:
        return "", [], []
    local = fresh_name("warps", taken)
    given = next((k.value for k in call.keywords if k.arg == "num_warps"), None)
    line = (f"{local} = {ks.text(given) if given is not None else DEFAULT_WARPS}"
            f"  # the launch's warps: an SM holds {WARPS_PER_SM} (persistent_grid)")
    use = Edit(Place.of(given), local) if given is not None else insert_keyword(call, "num_warps", local, order=2)
    return local, [line], [use]


def program_count(names: tuple[str, str, str], ids: str, per_sm: int | str, device: str, torch: str,
                  notes: tuple[str, str]) -> list[str]:
    """The host lines before a persistent launch: the number of ids (`ids`, the original grid),
    and the programs to start: `per_sm` per SM (the SM count read at run time from the device
    of the tensor `device`), or CPU_PROGRAMS on CPU tensors so that in the interpreter each
    takes several ids. names: the locals for the ids, programs per SM (a line of its own, for
    the launch search to tune) and programs; notes: the comments on the ids' and the CPU
    count's lines (each recipe words its own)."""
    n, sm, programs = names
    return [f"{n} = {ids}  # {notes[0]}",
            f"{sm} = {per_sm}",
            f"{programs} = min({n}, {CPU_PROGRAMS})  # {notes[1]}",
            f"if {device}.is_cuda:",
            f"    {programs} = min({n}, {torch}.cuda.get_device_properties({device}.device).multi_processor_count"
            f" * {sm})"]


def _tile_in_count(ks: KernelSource, kernel: Kernel, call: ast.Call, count: ast.expr) -> str | None:
    """The constexpr whose value the count of programs divides by (`cdiv(n, BLOCK)` beside
    `BLOCK=BLOCK`, or the literal both repeat), if any: such programs are not tiny by nature,
    their size is a launch value the launch search already moves."""
    passed = {}
    for param, node in call_arguments(call, kernel.params).items():
        if param in kernel.constexprs:
            text = ks.text(node)
            if not (isinstance(node, ast.Constant) and node.value in (0, 1)):
                passed[text] = param
    for n in ast.walk(count):
        if isinstance(n, (ast.Name, ast.Constant, ast.Subscript)) and ast.unparse(n) in passed:
            return passed[ast.unparse(n)]
    return None


def _sm_count_in(ks: KernelSource, stmt: ast.stmt, count: ast.expr) -> str | None:
    """What in the count of programs reads the device's SM count (`multi_processor_count`,
    directly or through locals of the launching function set from it), if anything: Liger's
    `grid = (sm_count,)` over partial sums is persistent already."""
    fn = _function_of(ks, stmt)
    sized: set[str] = set()
    for _ in range(3):  # locals set from locals set from the count
        for s in ast.walk(fn) if fn else ():
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and \
                    _reads_sm_count(s.value, sized):
                sized.add(s.targets[0].id)
    for n in ast.walk(count):
        if _reads_sm_count(n, sized):
            return ks.text(n) if not isinstance(n, ast.Name) else n.id
    return None


def _reads_sm_count(node: ast.AST, sized: set[str]) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr == "multi_processor_count")
               or (isinstance(n, ast.Name) and n.id in sized) for n in ast.walk(node))


def _function_of(ks: KernelSource, stmt: ast.stmt) -> ast.FunctionDef | None:
    return next((f for f in ast.walk(ks.tree) if isinstance(f, ast.FunctionDef) and f.name not in ks.kernels
                 and any(s is stmt for s in ast.walk(f))), None)


def _program_count(ks: KernelSource, kernel: Kernel, call: ast.Call, stmt: ast.stmt) -> ast.expr | str:
    """The expression for the grid's number of programs, evaluated where the launch is."""
    axes = grid_axes(ks, kernel, call, stmt)
    if isinstance(axes, str):
        return axes
    return axes[0] if len(axes) == 1 else "its grid is not 1-D"


def grid_axes(ks: KernelSource, kernel: Kernel, call: ast.Call, stmt: ast.stmt) -> list[ast.expr] | str:
    """The expressions for the grid's number of programs on each axis, evaluated where the
    launch is."""
    grid = call.func.slice
    if isinstance(grid, ast.Name):
        fn = _function_of(ks, stmt)
        sets = [s.value for s in ast.walk(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == grid.id] if fn else []
        if sets and all(isinstance(v, (ast.Tuple, ast.List)) for v in sets):
            if len({len(v.elts) for v in sets}) != 1:
                return "its grid is set to tuples of different lengths"
            # Its expressions, written again at the launch, where nothing they read was set since;
            # otherwise the tuple's own entries.
            changed = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                       and sets[0].lineno < n.lineno <= stmt.lineno}
            if len(sets) == 1 and not any(isinstance(n, ast.Name) and n.id in changed for n in ast.walk(sets[0])):
                return [copy.deepcopy(e) for e in sets[0].elts]
            return [ast.Subscript(ast.Name(grid.id, ast.Load()), ast.Constant(i), ast.Load())
                    for i in range(len(sets[0].elts))]
        if len(sets) != 1 or not isinstance(sets[0], ast.Lambda):
            return f"its grid '{grid.id}' is not set, in the launching function, to tuples or to one lambda"
        grid = sets[0]
    if isinstance(grid, ast.Lambda):
        return _lambda_axes(ks, kernel, call, grid)
    if not isinstance(grid, (ast.Tuple, ast.List)):
        return "its grid is neither a tuple, a lambda, nor a name set to them"
    return [copy.deepcopy(e) for e in grid.elts]


def _lambda_axes(ks: KernelSource, kernel: Kernel, call: ast.Call, grid: ast.Lambda) -> list[ast.expr] | str:
    """A `lambda meta: (e, ...)` grid's entries, each with each `meta["NAME"]` replaced by the launch's argument
    for NAME (the value Triton would pass it); refused where the autotuner or heuristics set it."""
    if len(grid.args.args) != 1 or not isinstance(grid.body, (ast.Tuple, ast.List)):
        return "its grid lambda does not take one argument and return a tuple"
    meta, args = grid.args.args[0].arg, call_arguments(call, kernel.params)

    class Meta(ast.NodeTransformer):
        def __init__(self) -> None:
            self.missing: list[str] = []

        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id == meta and isinstance(node.slice, ast.Constant):
                if node.slice.value in args:
                    return copy.deepcopy(args[node.slice.value])
                self.missing.append(str(node.slice.value))
            return self.generic_visit(node)

    swap = Meta()
    axes = [swap.visit(copy.deepcopy(e)) for e in grid.body.elts]
    if swap.missing or any(isinstance(n, ast.Name) and n.id == meta for e in axes for n in ast.walk(e)):
        return f"its grid reads {', '.join(swap.missing) or meta} from the launch's meta-parameters, " \
               f"not passed at the launch (set by the autotuner or heuristics)"
    return axes


def device_argument(ks: KernelSource, kernel: Kernel, call: ast.Call) -> str | None:
    """A name the launch passes for a pointer the kernel loads or stores through (a tensor)."""
    env = single_assignments(kernel.fn.body)
    args = call_arguments(call, kernel.params)
    accesses = tl_calls(ks, kernel.fn, "load") + tl_calls(ks, kernel.fn, "store") + tl_calls(ks, kernel.fn, "atomic")
    for access in sorted(accesses, key=lambda c: (c.lineno, c.col_offset)):  # the first in the source
        ptr = access.args[0] if access.args else next((k.value for k in access.keywords if k.arg == "pointer"), None)
        for _ in range(8):  # follow `row_ptr = x_ptr + ...` back to the parameter
            while isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add):
                ptr = ptr.left
            if not (isinstance(ptr, ast.Name) and ptr.id in env):
                break
            ptr = env[ptr.id]
        arg = args.get(ptr.id) if isinstance(ptr, ast.Name) and ptr.id in kernel.params else None
        if isinstance(arg, ast.Name):
            return arg.id
    return None
