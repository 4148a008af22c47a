"""The persistent grid for tiled products, the part of `persistent_grid` for `tl.dot` kernels.

A matmul launched one program per output tile on a 2-D grid starts thousands of programs
(2048 of 128x256 at 8192^3), and each fills its load pipeline from empty and drains it at
its end before the program after it can begin on that SM. Persistent, the kernel runs its
body in a loop over the tiles, `for tile_id in tl.range(tl.program_id(0), N_TILES,
tl.num_programs(0), flatten=True)`, on one program per SM (`programs_per_sm`, a line of its
own), so one program's next tile follows its last with no start between, its first loads
issued while the last tile's finish (`flatten`, as in Triton's persistent-matmul tutorial).

At any moment the programs work on consecutive tiles. A grid whose ids are read plainly
takes them in groups: tile t is `tl.swizzle2d(t // tiles_1, t % tiles_1, TILES_0, tiles_1,
8)`, eight ids of axis 0 by every id of axis 1, axis 0 fastest, so the tiles in flight share
a few rows of A and columns of B in L2 (the launch's own order, axis 0 fastest over all of
it, would stream every row of A past each column of B). At 8192^3 on an H100 this order was
the larger part of the persistent kernel's gain (benchmarks/results/2026-12-07-h100-s23.md).
A grid already in a grouped order (tile_order's `tl.swizzle2d` over `tl.num_programs`) keeps
it: tile t is the program (t % TILES_0, t // TILES_0) of the original grid, and its
`tl.num_programs` reads become the original grid's sizes.

Applies to a kernel with `tl.dot` that loads its tiles through tensor descriptors (the tma
recipe's kernel, the form Triton's persistent-matmul tutorial loops over): with the pointer
loads and small tiles a file often starts from, one program per SM would leave each SM
short of work, and the candidate would only spend a slot of the search's first round. Its
grid has one or two axes, each id read once, with no `return`, no helper of the file that
reads its own id, and a launch whose grid sizes are readable at the launch (tuples, a name
set to one, or a lambda of arguments the launch passes).
"""

from __future__ import annotations

import ast

from tritonforge.analysis.kernel_source import Kernel, KernelSource, program_axis
from tritonforge.strategies.editing import Edit, Place, append_parameter, insert_keywords
from tritonforge.strategies.recipes.host import fresh_name, insert_before, per_launch
from tritonforge.strategies.recipes.persistent import (TILES, IdLoop, device_argument, grid_axes, launch_statement,
                                                       local_names, loop_over_ids, loop_refusal, program_count,
                                                       tl_calls)
from tritonforge.strategies.recipes.tile_order import GROUP

AXIS0 = "TILES_0"  # the original grid's programs on its first axis
# One program per SM: a tile of 128x256 with three stages of A and B fills most of an SM's
# shared memory, so a second would not fit beside it.
PER_SM = 1


def tile_edits(ks: KernelSource, kernel: Kernel, tl: str, torch: str, taken: set[str]) -> list[Edit] | str:
    """The edits that make a tiled `tl.dot` kernel and its launches persistent, or why not."""
    why = _why_not(ks, kernel)
    if why:
        return why
    axes = 1 + max(program_axis(c) for c in tl_calls(ks, kernel.fn, "program_id"))
    host = per_launch(ks, kernel, lambda call: _host_edits(ks, kernel, call, torch, taken, axes))
    if isinstance(host, str):
        return host
    return _kernel_edits(ks, kernel, tl, axes) + [e for h in host for e in h]


def _why_not(ks: KernelSource, kernel: Kernel) -> str | None:
    fn = kernel.fn
    if TILES in kernel.params or AXIS0 in kernel.params:
        return "already loops over its tiles"
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "load"
               and isinstance(n.func.value, ast.Name) and n.func.value.id in kernel.params for n in ast.walk(fn)):
        return "loads no tile through a tensor descriptor (run the tma recipe first)"
    ids = tl_calls(ks, fn, "program_id")
    if not ids:
        return "never reads tl.program_id: no per-tile work"
    reads = [program_axis(c) for c in ids]
    if any(a not in (0, 1) for a in reads) or sorted(reads) != list(range(len(reads))):
        return "does not read tl.program_id(0) (and (1)) once each: a grid of other axes"
    if any(program_axis(c) not in reads for c in tl_calls(ks, fn, "num_programs")):
        return "reads tl.num_programs of an axis whose id it does not read"
    return loop_refusal(ks, fn)


def _kernel_edits(ks: KernelSource, kernel: Kernel, tl: str, axes: int) -> list[Edit]:
    """The body in a loop over the tiles, each id and program count read from the tile number."""
    grouped = axes == 2 and not tl_calls(ks, kernel.fn, "num_programs")
    names = local_names(kernel.fn)
    tile_0 = fresh_name("tile_0", names)
    tile_1 = fresh_name("tile_1", names | {tile_0})
    tiles_1 = fresh_name("tiles_1", names | {tile_0, tile_1})

    def reads(var: str) -> tuple[tuple[str, ...], dict[ast.Call, str]]:
        # The loop variable is a plain int in the interpreter: tl.cast makes each id a tensor there.
        def cast(e: str) -> str:
            return f"{tl}.cast({e}, {tl}.int32)"
        lines: tuple[str, ...] = ()
        if grouped:  # a group: GROUP consecutive ids of axis 0 by every id of axis 1, axis 0 fastest
            call = f"{tile_0}, {tile_1} = {tl}.swizzle2d("
            lines = (f"{call}{cast(f'{var} // {tiles_1}')}, {cast(f'{var} % {tiles_1}')},",
                     f"{' ' * len(call)}{AXIS0}, {tiles_1}, {GROUP})  # tiles in groups of {GROUP} along axis 0")
            ids = {0: tile_0, 1: tile_1}
        elif axes == 2:
            ids = {0: cast(f"{var} % {AXIS0}"), 1: cast(f"{var} // {AXIS0}")}
        else:
            ids = {0: cast(var)}
        counts = {0: AXIS0, 1: f"({TILES} // {AXIS0})"} if axes == 2 else {0: TILES}
        return lines, {**{c: ids[program_axis(c)] for c in tl_calls(ks, kernel.fn, "program_id")},
                       **{c: counts[program_axis(c)] for c in tl_calls(ks, kernel.fn, "num_programs")}}

    order = f"grouped by {GROUP} along axis 0" if grouped else "in the launch's order"
    before = (f"{tiles_1} = {TILES} // {AXIS0}  # the tiles on the grid's second axis",) if grouped else ()
    loop = IdLoop(TILES, "tile_id", f"persistent: tiles {order}, strided by num_programs", before=before,
                  flatten=True)
    return [append_parameter(kernel.fn, f"{TILES}, {AXIS0}" if axes == 2 else TILES),
            loop_over_ids(ks, kernel, tl, loop, names | {tile_0, tile_1, tiles_1}, reads=reads)]


def _host_edits(ks: KernelSource, kernel: Kernel, call: ast.Call, torch: str, taken: set[str],
                axes: int) -> list[Edit] | str:
    """Before the launch: the original grid's tiles and the persistent count; the launch takes
    a grid of that count and passes the tiles (and the first axis's size)."""
    stmt = launch_statement(ks, call)
    if isinstance(stmt, str):
        return stmt
    sizes = grid_axes(ks, kernel, call, stmt)
    if isinstance(sizes, str):
        return sizes
    if len(sizes) > axes and any(not (isinstance(s, ast.Constant) and s.value == 1) for s in sizes[axes:]):
        return f"its grid has {len(sizes)} axes, its kernel reads {axes}"
    device = device_argument(ks, kernel, call)
    if device is None:
        return "no pointer argument named at its launch to read the device from"
    n, per_sm, programs = (fresh_name(s, taken) for s in ("n_tiles", "programs_per_sm", "programs"))
    first = ast.unparse(sizes[0])
    lines = []
    if axes == 2:
        first = fresh_name("tiles_0", taken)
        lines.append(f"{first} = {ast.unparse(sizes[0])}  # the tiles on the grid's first axis (persistent_grid)")
    count = f"{first} * ({ast.unparse(sizes[1])})" if axes == 2 and len(sizes) > 1 else first
    lines += program_count((n, per_sm, programs), count, PER_SM, device, torch,
                           ("the tiles the kernel loops over: the programs its grid had (persistent_grid)",
                            "on CPU tensors (the interpreter) a few, each taking several tiles"))
    passed = [(TILES, n)] + ([(AXIS0, first)] if axes == 2 else [])
    return [insert_before(stmt, lines), Edit(Place.of(call.func.slice), f"({programs},)"),
            insert_keywords(call, passed, order=1)]
