"""Long jumps: launch values several doublings away, sized from the hardware and the floor.

A streaming kernel (no tl.dot) runs near its memory floor when every SM has enough bytes in
flight, every thread loads 16 bytes at a time and the grid gives several waves of programs
over the SMs. A target number of elements per program follows from those; a leap sets the
tile to it in one move, putting the growth into loop-stepped dims (they do not thin the
grid) and shrinking the dims the grid divides by (BLOCK_M down while BLOCK_N goes up), with
the current warps and with twice as many. tl.dot kernels get `moves.DOT_PRESETS` instead.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from tritonforge.analysis.launch_sites import DEFAULT_WARPS, LaunchSite, SearchSpace, Tunable
from tritonforge.analysis.launch_sites.runtime import Unreachable
from tritonforge.strategies.base import SearchState
from tritonforge.strategies.launch.feasibility import HardwareLimits, launch_metrics, launch_values
from tritonforge.strategies.launch.moves import Move
from tritonforge.strategies.launch.rewrite import apply_assignment
from tritonforge.strategies.launch.values import Assignment

ELEM_BYTES = 4  # the element size is not known statically: fp32 asks for the fewest elements
VECTOR_BYTES = 16  # the widest load a thread issues
LINE_BYTES = 128  # a cache line: the narrowest a leap makes a tile's innermost dim
BYTES_IN_FLIGHT_PER_SM = 64 * 1024  # what an SM needs outstanding to cover DRAM latency
MIN_WAVES = 2  # programs per SM the grid should give at least, in waves over the SMs
DEFAULT_SMS = 132  # an H100 SXM / H200
FAR_FROM_FLOOR = 0.5  # below this fraction of the roofline floor, the best is "far"
MIN_GAP = 2  # doublings between the tile and its target that make a leap worth a move
LEAP_BONUS = 1.0  # over the doublings it closes: the target is the hardware's, not a typical size


@dataclass(frozen=True)
class Outlook:
    """What the search knows of the GPU, the cases' sizes and the best's distance to its floor."""

    sm_count: int = DEFAULT_SMS
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    sizes: tuple[dict[str, int], ...] = ()  # integer sizes of each case, largest first
    floor_fraction: float | None = None  # floor / the best's time on its slowest case; None: unknown

    @property
    def far(self) -> bool:
        return self.floor_fraction is not None and self.floor_fraction < FAR_FROM_FLOOR

    @property
    def near(self) -> bool:
        return self.floor_fraction is not None and self.floor_fraction >= FAR_FROM_FLOOR

    @staticmethod
    def from_state(state: SearchState) -> "Outlook":
        gpu = state.gpu or {}
        sizes = [_sizes(c.case) for c in state.best_cases]
        sizes.sort(key=lambda s: -math.prod(s.values()) if s else 0)
        return Outlook(sm_count=int(gpu.get("sm_count") or DEFAULT_SMS),
                       max_warps_per_sm=int(gpu.get("max_warps_per_sm") or 64),
                       max_blocks_per_sm=int(gpu.get("max_blocks_per_sm") or 32),
                       sizes=tuple(s for s in sizes if s), floor_fraction=_floor_fraction(state))


def _sizes(label: str) -> dict[str, int]:
    """ "M=64, N=2048" -> {"M": 64, "N": 2048}; a spec label gives {}."""
    return {k: int(v) for k, v in re.findall(r"\b([A-Za-z_]\w*)=(\d+)\b(?![\[.])", label)}


def _floor_fraction(state: SearchState) -> float | None:
    timed = [(c.median_ms, state.floors_ms.get(c.case)) for c in state.best_cases if c.median_ms]
    timed = [(ms, floor) for ms, floor in timed if floor]
    if not timed:
        return None
    ms, floor = max(timed)
    return floor / ms


def leaps(space: SearchSpace, limits: HardwareLimits, outlook: Outlook, studied: set[str]) -> list[Move]:
    """Tiles sized for the memory system, for each streaming launch whose tile is >= 4x off.

    Like the x4 jump, a cold-start move: once the history speaks of a tile's values the
    search steps along what paid, unless the best is still far from its floor."""
    out: list[Move] = []
    for site in space.sites:
        dims = _tile_tunables(space, site)
        if site.facts.has_dot or site.autotuned or not dims:
            continue
        if not outlook.far and any(t.id in studied for t in dims):
            continue
        out.extend(_site_leaps(space, site, dims, limits, outlook))
    return out


def _tile_tunables(space: SearchSpace, site: LaunchSite) -> list[Tunable]:
    """The free block sizes of the launch's largest tile (or its one block)."""
    cur = space.current
    tiles = list(site.facts.tiles) or [(d,) for d in site.facts.tile_dims()]
    best: list[Tunable] = []
    for tile in tiles:
        ts = [space.by_id.get(site.bindings.get(d, "")) for d in tile]
        ts = [t for t in ts if t is not None and t.free and t.kind == "constexpr" and isinstance(cur.get(t.id), int)]
        if math.prod(cur[t.id] for t in ts) > math.prod(cur[t.id] for t in best):
            best = ts
    return best


def _site_leaps(space: SearchSpace, site: LaunchSite, dims: list[Tunable], limits: HardwareLimits,
                outlook: Outlook) -> list[Move]:
    cur = space.current
    wid = site.bindings.get("num_warps")
    w_tunable = space.by_id.get(wid) if wid else None
    warps = cur.get(wid, DEFAULT_WARPS) if wid else DEFAULT_WARPS
    now = _elements(site, cur, limits)
    programs = _programs(site, cur, outlook)
    base_target = _target(warps, programs, limits, outlook)
    if not now or math.log2(base_target / now) < MIN_GAP:
        return []
    out = []
    options = [(warps, 0.0)]
    if w_tunable is not None and w_tunable.free and warps * 2 in w_tunable.legal and warps * 2 <= 8:
        options.append((warps * 2, -0.5))  # blocks up with warps up: same elements per thread
    for w, bias in options:
        target = _target(w, programs, limits, outlook)
        for shrink in (1, 4) if len(dims) > 1 else (1,):
            changes = _shape(dims, cur, target, shrink)
            if changes is None:
                continue
            if w != warps:
                changes[wid] = (warps, w)
            full = {**cur, **{k: v[1] for k, v in changes.items()}}
            got = _elements(site, full, limits)
            if not got or got <= now or not _keeps_waves(space, site, changes, programs, outlook):
                continue
            # The doublings closed stand in for the prior's pull to typical sizes (see `priors`).
            closed = min(math.log2(got / now), math.log2(base_target / now))  # the extra warps' share: no credit
            score = LEAP_BONUS + closed + bias + (2.0 if outlook.far else -3.0 if outlook.near else 0.0)
            note = (f"leap to {got} elements per program: {BYTES_IN_FLIGHT_PER_SM >> 10} KiB in flight per SM, "
                    f"{VECTOR_BYTES}-byte loads, {outlook.sm_count} SMs")
            out.append(Move(changes, "leap", score=score, notes=[note]))
    return out


def _shape(dims: list[Tunable], cur: Assignment, target: int, shrink: int) -> dict[str, tuple[Any, Any]] | None:
    """`target` elements over the tile: grid dims divided by `shrink`, the rest on loop dims
    (or, without any, on the last dim)."""
    loop = [t for t in dims if "loop_step" in t.roles] or dims[-1:]
    new = {t.id: cur[t.id] for t in dims}
    for t in dims:
        if t not in loop:
            smaller = cur[t.id] // shrink
            if shrink > 1 and smaller not in t.legal:
                return None
            if shrink > 1 and t is dims[-1] and smaller * ELEM_BYTES < LINE_BYTES:
                # The innermost dim is the contiguous one in a row-major tile (`rows[:, None] *
                # stride + cols[None, :]`): narrower than a line, each row's segment wastes
                # most of what it moves (col_sum's BLOCK_N 16 -> 4: 16-byte segments).
                return None
            new[t.id] = smaller
    rest = target // math.prod(new[t.id] for t in dims if t not in loop)
    share = 2 ** max(0, int(math.log2(max(rest, 1))) // len(loop))
    for t in loop:
        new[t.id] = share
    if any(v not in t.legal for t in dims for v in [new[t.id]]):
        return None
    changes = {t.id: (cur[t.id], new[t.id]) for t in dims if new[t.id] != cur[t.id]}
    return changes or None


def _elements(site: LaunchSite, values: Assignment, limits: HardwareLimits) -> int | None:
    numel = launch_metrics(site, launch_values(site, values)[0], limits).get("numel")
    return int(numel) if numel else None


def _target(warps: int, programs: int | None, limits: HardwareLimits, outlook: Outlook) -> int:
    """Elements per program: one 16-byte load per thread at least, and the SM's share of the
    bytes in flight, split among the programs it holds at once."""
    threads = 32 * warps
    vector = threads * VECTOR_BYTES // ELEM_BYTES
    per_sm = min(outlook.max_warps_per_sm // warps, outlook.max_blocks_per_sm) or 1
    if programs:
        per_sm = max(1, min(per_sm, math.ceil(programs / outlook.sm_count)))
    in_flight = BYTES_IN_FLIGHT_PER_SM // (ELEM_BYTES * per_sm)
    want = max(vector, in_flight)
    cap = min(threads * limits.max_elems_per_thread, limits.max_numel)
    return int(2 ** math.floor(math.log2(min(2 ** math.ceil(math.log2(want)), cap))))


def _keeps_waves(space: SearchSpace, site: LaunchSite, changes: dict[str, tuple[Any, Any]], before: int | None,
                 outlook: Outlook) -> bool:
    """A leap may not thin a grid below `MIN_WAVES` waves over the SMs on the largest case.
    The grid is read from the rewritten file: a grid's own copy of a block moves with it."""
    if before is None:
        return True
    try:
        moved = SearchSpace.from_source(apply_assignment(space, {k: v[1] for k, v in changes.items()}), site.via[0])
    except Unreachable:
        return False  # no edit of the file's literals gives these values: the search says why
    same = [s for s in moved.sites if (s.kernel, s.via) == (site.kernel, site.via)]
    after = _programs(same[0], moved.current, outlook) if len(same) == 1 else None
    if before is None or after is None or after >= before:
        return True
    return after >= MIN_WAVES * outlook.sm_count


_GRID_NODES = (ast.Expression, ast.Tuple, ast.List, ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.UnaryOp,
               ast.operator, ast.unaryop, ast.Call, ast.Attribute, ast.Lambda, ast.arguments, ast.arg,
               ast.Subscript)
_GRID_CALLS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max,
               "next_power_of_2": lambda n: 1 << max(0, int(n) - 1).bit_length()}


def _programs(site: LaunchSite, values: Assignment, outlook: Outlook) -> int | None:
    """Programs the grid launches on the largest case, where the grid is plain arithmetic of
    the case's sizes and the launch's block values; None otherwise."""
    if not outlook.sizes:
        return None
    text = site.grid_resolved or site.grid
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(n, _GRID_NODES) for n in ast.walk(tree)):
        return None
    meta = {p: values[tid] for p, tid in site.bindings.items() if isinstance(values.get(tid), int)}
    names = {text: meta[p] for p, text in site.args.items() if p in meta and text.isidentifier()}
    scope = {**outlook.sizes[0], **names, **_GRID_CALLS, "triton": _Triton}
    try:
        grid = eval(compile(tree, "<grid>", "eval"), {"__builtins__": {}}, scope)  # checked: arithmetic only
        if callable(grid):
            grid = grid(meta)
        dims = grid if isinstance(grid, (tuple, list)) else (grid,)
        return math.prod(int(d) for d in dims) or None
    except Exception:  # a name the grid takes from the entry's locals: not known here
        return None


class _Triton:
    cdiv = staticmethod(_GRID_CALLS["cdiv"])
    next_power_of_2 = staticmethod(_GRID_CALLS["next_power_of_2"])
