"""Move generation: the changes of launch values tried from the best candidate.

Ring 1 holds its neighbours (x2 and /2 per value, 2D tiles moved together, block and
warps moved together, a x4 jump for blocks far from typical sizes, tl.dot presets,
wider or pinned autotune lists, and the long jumps of `leaps`); ring 2 holds two-step
combinations, for when ring 1 is spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tritonforge.analysis.launch_sites import BLOCK_MAX, BLOCK_MIN, DEFAULT_STAGES, DEFAULT_WARPS, DOT_ROLES, STAGES, WARPS
from tritonforge.analysis.launch_sites import ConfigSpec, LaunchSite, SearchSpace, Tunable, is_pow2
from tritonforge.strategies.launch.feasibility import HardwareLimits, check_site, launch_metrics, launch_values
from tritonforge.strategies.launch.values import Assignment, hashable


@dataclass
class Move:
    """A change of some tunables from the best candidate's values."""

    changes: dict[str, tuple[Any, Any]]  # id -> (old, new)
    kind: str  # step | jump | leap | tile | block+warps | preset | widen | pin | retune | combo | further
    ring: int = 1  # 1: neighbours of the best; 2: two-step combinations
    score: float = 0.0
    notes: list[str] = field(default_factory=list)  # what moved the score

    @property
    def signature(self) -> frozenset:
        return frozenset((k, hashable(v[1])) for k, v in self.changes.items())


@dataclass
class MoveRecord:
    """One move as the run record shows it: the order walked, and what became of it."""

    order: int
    description: str
    kind: str
    ring: int
    score: float
    status: str  # proposed | pruned | tried | duplicate | deferred
    reason: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Lesson:
    """What one evaluated change taught: tunable, direction, value reached, verdict."""

    tid: str
    sign: int
    start: Any
    reached: Any
    verdict: str  # paid | slower | failed (no verdict on results) | wrong (incorrect results) | flat
    single: bool  # the only value that changed
    after: Assignment


def neighbours(space: SearchSpace, caps: tuple[int, int], limits: HardwareLimits, studied: set[str],
               leaps: list[Move] | None = None) -> list[Move]:
    """Neighbours of the best, after `leaps` (see `leaps`; they win over an equal jump).
    Jumps are a cold-start shortcut: once the history says something about a tunable, it
    moves in x2 steps along what paid."""
    cur = space.current
    moves: list[Move] = list(leaps or [])
    for t in space.tunables:
        if t.kind == "autotune_configs":
            moves.extend(_autotune_moves(space, t, caps, limits))
            continue
        for new in _steps(t, cur[t.id]):
            moves.append(Move({t.id: (cur[t.id], new)}, "step"))
        jump = None if t.id in studied else _jump(space, t, cur, limits)
        if jump is not None:
            moves.append(Move({t.id: (cur[t.id], jump)}, "jump"))
    moves.extend(_tile_moves(space, cur))
    moves.extend(_block_warp_moves(space, cur, moves))
    moves.extend(_dot_presets(space, cur))
    return _dedupe(moves)


# Tile shapes that usually do well for fp16/bf16 tl.dot kernels on recent GPUs
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages). A single x2 step cannot get there
# from small tiles: the tile, the warps and the pipelining depth must change together.
DOT_PRESETS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4),
               (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4)]


def _dot_presets(space: SearchSpace, cur: Assignment) -> list[Move]:
    out = []
    for site in space.sites:
        for dims in site.facts.dots:
            ids = [site.bindings.get(d) if d else None for d in dims]
            ids += [site.bindings.get("num_warps"), site.bindings.get("num_stages")]
            for preset in DOT_PRESETS:
                changes = {}
                for tid, value in zip(ids, preset):
                    t = space.by_id.get(tid) if tid else None
                    if t is not None and t.free and value in t.legal and cur.get(tid) != value:
                        changes[tid] = (cur[tid], value)
                if len(changes) >= 2:
                    out.append(Move(changes, "preset"))
    return out


def _is_stages(t: Tunable) -> bool:
    """The launch's num_stages or a loop's own (`tl.range(..., num_stages=S)`): moved by one."""
    return t.kind == "num_stages" or "loop_stages" in t.roles


def _steps(t: Tunable, value: int) -> list[int]:
    if _is_stages(t):
        candidates = [value + 1, value - 1]
    else:
        candidates = [value * 2, value // 2]
    return [v for v in candidates if v in t.legal and v != value]


def _jump(space: SearchSpace, t: Tunable, cur: Assignment, limits: HardwareLimits) -> int | None:
    """A x4 step towards the typical size, for blocks at least 4x away from it."""
    if t.kind != "constexpr":
        return None
    typical = typical_size(space, t, cur, limits)
    value = cur[t.id]
    gap = math.log2(typical / value)
    if abs(gap) < 2:
        return None
    new = value * 4 if gap > 0 else value // 4
    return new if new in t.legal else None


def _tile_moves(space: SearchSpace, cur: Assignment) -> list[Move]:
    """Both dims of a 2D tile at once: grow, shrink, and reshape at equal area."""
    out = []
    for a in space.tunables:
        for bid in a.pairs:
            b = space.by_id.get(bid)
            if b is None or not b.free or bid <= a.id:
                continue
            for fa, fb in ((2, 2), (0.5, 0.5), (2, 0.5), (0.5, 2)):
                na, nb = int(cur[a.id] * fa), int(cur[b.id] * fb)
                if na in a.legal and nb in b.legal:
                    out.append(Move({a.id: (cur[a.id], na), b.id: (cur[b.id], nb)}, "tile"))
    return out


def _block_warp_moves(space: SearchSpace, cur: Assignment, singles: list[Move]) -> list[Move]:
    """A block step together with a warps step the same way: elements per thread stay put."""
    out = []
    for m in singles:
        if m.kind not in ("step", "jump") or len(m.changes) != 1:
            continue
        (tid, (old, new)), = m.changes.items()
        if space.by_id[tid].kind != "constexpr":
            continue
        for wid in _warps_of(space, tid):
            w = space.by_id[wid]
            nw = cur[wid] * 2 if new > old else cur[wid] // 2
            if nw in w.legal:
                out.append(Move({tid: (old, new), wid: (cur[wid], nw)}, "block+warps"))
    return out


def _warps_of(space: SearchSpace, tid: str) -> list[str]:
    out = []
    for site in space.sites:
        wid = site.bindings.get("num_warps")
        if tid in site.bindings.values() and wid and wid in space.by_id and space.by_id[wid].free:
            out.append(wid)
    return list(dict.fromkeys(out))


def _autotune_moves(space: SearchSpace, t: Tunable, caps: tuple[int, int], limits: HardwareLimits) -> list[Move]:
    """Widen the config list with feasible neighbours of its configs (round-robin over the
    configs, so each gets some); pin single configs, unless the autotuner prunes its configs."""
    configs: tuple[ConfigSpec, ...] = t.current
    site = next(s for s in space.sites if s.bindings.get("autotune_configs") == t.id)
    dims = site.facts.tile_dims() | site.facts.work_splits(site.grid_meta)
    seen = {hashable(c) for c in configs}
    extra: list[ConfigSpec] = []
    for n in _round_robin([_config_neighbours(c, dims, site.facts.has_loop, i) for i, c in enumerate(configs)]):
        key = hashable(n)
        if key not in seen and _config_ok(space, site, t, n, limits):
            seen.add(key)
            extra.append(n)
    room = max(0, min(caps[0] - len(configs), caps[1]))
    moves = []
    if extra and room:
        wider = configs + tuple(extra[:room])
        moves.append(Move({t.id: (configs, wider)}, "widen", score=0.8))
    # One config left is run without the pruner, on cases the pruner would have kept it from
    # (`early_config_prune` dropping tiles too small for the row): with one, no pins.
    if len(configs) > 1 and not site.facts.autotune_pruned:
        for c in configs:
            moves.append(Move({t.id: (configs, (c,))}, "pin", score=-0.3))
    # A list of one is a fixed launch written as autotune (Triton benchmarks nothing): each
    # neighbour replaces it, so a round holds more than the one widening.
    if len(configs) == 1 and not site.facts.autotune_pruned:
        moves.extend(Move({t.id: (configs, (n,))}, "retune", score=0.2) for n in extra)
    return moves


def _round_robin(lists: list[list[ConfigSpec]]) -> list[ConfigSpec]:
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def _config_neighbours(c: ConfigSpec, dims: set[str], has_loop: bool, turn: int = 0) -> list[ConfigSpec]:
    """Each value's growing step, then each one's shrinking step (a config written once is
    more often too small than too large), the values taken from the `turn`-th on: widened a few
    at a time, the configs of a list each move another value (before, all moved the first key,
    and a SPLIT_K listed last waited for later rounds)."""
    steps = [([c.with_values(**{k: v * 2})], [c.with_values(**{k: v // 2})] if v > 1 else [])
             for k, v in c.kwargs if k in dims and is_pow2(v)]
    steps.append(([c.with_values(num_warps=c.warps * 2)], [c.with_values(num_warps=c.warps // 2)]))
    if has_loop:
        steps.append(([c.with_values(num_stages=c.stages + 1)], [c.with_values(num_stages=c.stages - 1)]))
    turn %= len(steps)
    steps = steps[turn:] + steps[:turn]
    return [n for grow, _ in steps for n in grow] + [n for _, shrink in steps for n in shrink]


def _config_ok(space: SearchSpace, site: LaunchSite, t: Tunable, c: ConfigSpec, limits: HardwareLimits) -> bool:
    # As for a written block (`tunables._legal`): only a tl.dot dimension needs 16; any other
    # tile may be one row.
    low = {k: BLOCK_MIN if site.facts.roles.get(k, frozenset()) & DOT_ROLES else 1 for k in site.facts.tile_dims()}
    legal_blocks = all(low[k] <= v <= BLOCK_MAX and is_pow2(v) for k, v in c.kwargs if k in low)
    if not legal_blocks or c.warps not in WARPS or c.stages not in STAGES:
        return False
    return check_site(site, {**space.current, t.id: (c,)}, space.current, limits) is None


def combinations(space: SearchSpace, ring1: list[Move], lessons: list[Lesson], max_combos: int) -> list[Move]:
    """Two single moves on different tunables at once, best-scored singles first."""
    singles = [m for m in ring1 if m.kind in ("step", "jump")][:16]
    known = {m.signature for m in ring1}
    out = []
    for i, a in enumerate(singles):
        for b in singles[i + 1:]:
            if a.changes.keys() & b.changes.keys():
                continue
            m = Move({**a.changes, **b.changes}, "combo", ring=2, score=-0.25)
            if m.signature not in known:
                known.add(m.signature)
                out.append(m)
    out.extend(_further(space, lessons, known))
    return out[:max_combos]


def _further(space: SearchSpace, lessons: list[Lesson], known: set) -> list[Move]:
    """Two steps along a direction that paid (x4 from the best), when ring 1 is spent."""
    cur, out = space.current, []
    for lesson in lessons:
        t = space.by_id.get(lesson.tid)
        if lesson.verdict != "paid" or t is None or not t.free or t.kind == "autotune_configs":
            continue
        value = cur[t.id]
        new = value * 4 if lesson.sign > 0 else value // 4
        if _is_stages(t):
            new = value + 2 * lesson.sign
        m = Move({t.id: (value, new)}, "further", ring=2)
        if new in t.legal and m.signature not in known:
            known.add(m.signature)
            out.append(m)
    return out


def _dedupe(moves: list[Move]) -> list[Move]:
    seen, out = set(), []
    for m in moves:
        if m.signature not in seen:
            seen.add(m.signature)
            out.append(m)
    return out


def typical_size(space: SearchSpace, t: Tunable, values: Assignment, limits: HardwareLimits) -> float:
    """A size that usually performs well on a current GPU, for the prior to pull towards."""
    if t.kind == "constexpr" and "loop_stages" in t.roles:
        return DEFAULT_STAGES
    if t.kind == "constexpr" and "loop_unroll" in t.roles:
        return 2
    if t.kind == "constexpr":
        if "dot_k" in t.roles:
            return 64 if limits.dot_elem_bytes <= 2 else 32
        if t.roles & DOT_ROLES:
            return 128
        return 64 if "tile" in t.roles else 1024
    if t.kind == "num_stages":
        return DEFAULT_STAGES
    return _typical_warps(space, t, values)


def _typical_warps(space: SearchSpace, t: Tunable, values: Assignment) -> float:
    # About 128 accumulator values per thread for dots (up to 16 warps), 8 elements per
    # thread otherwise (up to 8 warps: wider programs rarely help elementwise work).
    for site in space.sites:
        if site.bindings.get("num_warps") != t.id:
            continue
        launch = launch_values(site, values)[0]
        metrics = launch_metrics(site, launch, HardwareLimits())
        if "acc_regs" in metrics:
            want, cap = metrics["acc_regs"] * launch.warps / 128, 16
        elif "elems_per_thread" in metrics:
            want, cap = metrics["elems_per_thread"] * launch.warps / 8, 8
        else:
            continue
        return float(min(cap, max(1, 2 ** round(math.log2(max(want, 1))))))
    return DEFAULT_WARPS


def describe_move(space: SearchSpace, m: Move) -> str:
    """ "BLOCK_SIZE 64->256, num_warps 4->8"; config lists by size or the pinned config."""
    parts = []
    for tid, (old, new) in m.changes.items():
        label = space.label(tid)
        if space.by_id[tid].kind == "autotune_configs":
            if m.kind == "pin":
                parts.append(f"{label}: pin {new[0].label()}")
            elif m.kind == "retune":
                was, now = old[0].flat(), new[0].flat()
                parts.append(f"{label}: " + ", ".join(f"{k} {was.get(k)}->{v}" for k, v in now.items() if was.get(k) != v))
            else:
                parts.append(f"{label}: {len(old)} -> {len(new)} configs ({m.kind})")
        else:
            parts.append(f"{label} {old}->{new}")
    return ", ".join(parts)
