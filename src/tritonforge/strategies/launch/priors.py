"""Ordering and pruning moves: a prior towards typical GPU sizes, diagnosis findings,
and what paid or hurt in the history."""

from __future__ import annotations

import math
from typing import Any, Iterable

from tritonforge.analysis.launch_sites import SearchSpace, Tunable
from tritonforge.strategies.launch.feasibility import HardwareLimits
from tritonforge.strategies.launch.moves import Lesson, Move, typical_size
from tritonforge.strategies.launch.values import Assignment, equal, numeric


def scored(space: SearchSpace, moves: list[Move], lessons: list[Lesson], findings: list[Any],
            limits: HardwareLimits, far_from_floor: bool = False) -> list[Move]:
    """Moves best-first: prior (typical sizes) + diagnosis findings + history. While the best
    is far from its roofline floor, moves of several values at once come first."""
    cur = space.current
    base = _prior(space, cur, limits)
    kinds = _finding_kinds(findings)
    for m in moves:
        new = {**cur, **{k: v[1] for k, v in m.changes.items()}}
        prior = _prior(space, new, limits) - base
        # A leap is scored by the doublings it closes towards the hardware's target (see
        # `leaps`); the typical sizes of the prior only add where they agree.
        m.score += max(0.0, prior) if m.kind == "leap" else prior
        if far_from_floor and m.kind in _TOGETHER:
            m.score += _FAR_BONUS
            m.notes.append(f"far from the roofline floor: {_FAR_BONUS:+.1f}")
        m.score += _finding_bias(space, m, kinds) + _lesson_bias(m, lessons)
    return sorted(moves, key=lambda m: -m.score)  # stable: generation order breaks ties


# Moves of several tunables at once, and how much they gain while the best is far from its floor.
_TOGETHER = ("tile", "block+warps", "preset")


_FAR_BONUS = 1.5


# Words in diagnosis finding kinds (tritonforge.diagnosis rule ids and the like), and the
# direction each suggests. Shrink words win over grow words within one kind, because
# "launch_bound_tiny_grid" (fewer programs than SMs) wants smaller blocks, while a plain
# launch-bound or memory-bound-far-from-peak kernel wants more work per program.
_SHRINK = ("spill", "register", "occupancy", "tiny_grid", "low_parallelism", "few_programs", "tail", "wave")


_GROW = ("memory_bound_far", "launch_bound", "bandwidth", "tiny_block", "small_block", "too_many_programs",
         "redundant_traffic")


_MORE_WARPS = ("spill", "register", "occupancy")


_MORE_STAGES = ("latency", "stall", "pipelin")


_FEWER_STAGES = ("shared_mem", "smem", "out_of_resources")


_LESSON_WEIGHT = {"paid": 2.5, "slower": -1.5, "failed": -3.0, "wrong": -3.0, "flat": -0.5}


def _weight(space: SearchSpace, t: Tunable) -> float:
    if t.kind == "constexpr":
        return 1.0
    if t.kind == "num_warps":
        return 0.6
    dots = any(s.facts.has_dot for s in space.sites if t.id in s.bindings.values())
    return 0.4 if dots else 0.15  # stages matter where tl.dot operands are pipelined


def _prior(space: SearchSpace, values: Assignment, limits: HardwareLimits) -> float:
    total = 0.0
    for t in space.tunables:
        v = values.get(t.id)
        if t.kind == "autotune_configs" or not isinstance(v, int) or v <= 0:
            continue
        total -= _weight(space, t) * abs(math.log2(v / typical_size(space, t, values, limits)))
    return total


def _finding_kinds(findings: Iterable[Any]) -> list[str]:
    kinds = []
    for f in findings or ():
        kind = f.get("kind") if isinstance(f, dict) else getattr(f, "kind", f if isinstance(f, str) else None)
        if kind:
            kinds.append(str(getattr(kind, "value", kind)).lower())
    return kinds


def _finding_bias(space: SearchSpace, m: Move, kinds: list[str]) -> float:
    if not kinds:
        return 0.0
    grow = warps = stages = 0.0
    for k in kinds:
        if any(w in k for w in _SHRINK):
            grow -= 1.5
        elif any(w in k for w in _GROW):
            grow += 1.5
        warps += 1.0 if any(w in k for w in _MORE_WARPS) else 0.0
        stages += 1.0 if any(w in k for w in _MORE_STAGES) else 0.0
        stages -= 1.0 if any(w in k for w in _FEWER_STAGES) else 0.0
    per_kind = {"constexpr": grow, "num_warps": warps, "num_stages": stages}
    total = 0.0
    for tid, (old, new) in m.changes.items():
        t = space.by_id[tid]
        if t.kind in per_kind:
            total += (1 if new > old else -1) * per_kind[t.kind]
    if total:
        m.notes.append(f"findings {', '.join(kinds)}: {total:+.1f}")
    return total


def _lesson_bias(m: Move, lessons: list[Lesson]) -> float:
    """Lessons on the same tunable and direction, from the nearest starting value only:
    64->128 paid but 128->256 was slower says nothing good about 128->256 any more."""
    total = 0.0
    for tid, (old, new) in m.changes.items():
        if not numeric(old) or not numeric(new):
            continue
        sign = 1 if new > old else -1
        same = [lesson for lesson in lessons if lesson.tid == tid and lesson.sign == sign]
        if not same:
            continue
        nearest = min(_distance(lesson.start, old) for lesson in same)
        for lesson in same:
            if _distance(lesson.start, old) == nearest:
                w = _LESSON_WEIGHT[lesson.verdict] * (1.0 if lesson.single else 0.6)
                total += w
                m.notes.append(f"{tid} {lesson.start}->{lesson.reached} {lesson.verdict} before: {w:+.1f}")
    return total


def _distance(a: int, b: int) -> float:
    return abs(math.log2(max(a, 1)) - math.log2(max(b, 1)))


def pointless(space: SearchSpace, m: Move, compiled: list[dict[str, Any]] | None = None) -> str | None:
    """num_stages of a kernel without loops compiles to the same code: not worth a run; nor
    where the kernel, compiled at two stages or more (`compiled`: CompileFacts.to_json() of
    the current launches), has no asynchronous copy, so its pipeliner took no load. Taken to
    hold at any count: compiled for sm_90 with Triton 3.6, the plain loads in the loops of
    log_softmax_vocab's and col_sum's kernels gave the same PTX at 1, 2, 3 and 4 stages."""
    by_name = {f.get("kernel_name"): f for f in compiled or []}
    for tid in m.changes:
        if space.by_id[tid].kind != "num_stages":
            continue
        kernels = [s.facts for s in space.sites if s.bindings.get("num_stages") == tid]
        if kernels and not any(k.has_loop for k in kernels):
            return f"{', '.join(k.name for k in kernels)} has no loop: num_stages has nothing to pipeline"
        facts = [by_name.get(k.name) for k in kernels]
        if kernels and all(f and _nothing_pipelined(f) for f in facts):
            return (f"{', '.join(k.name for k in kernels)} compiled at num_stages={facts[0]['num_stages']} has no "
                    f"asynchronous copy: no load is pipelined, at any number of stages")
    return None


def _nothing_pipelined(facts: dict[str, Any]) -> bool:
    ptx = facts.get("ptx")
    return (int(facts.get("num_stages") or 0) >= 2 and isinstance(ptx, dict)
            and not ptx.get("async_copies") and not ptx.get("bulk_copies"))


def blocked(space: SearchSpace, full: Assignment, lessons: list[Lesson]) -> str | None:
    """A move at or beyond a value that was slower or failed, all else equal, is not retried;
    nor one at or beyond a tile value that gave wrong results, whatever the warps and stages."""
    for lesson in lessons:
        if lesson.verdict not in ("slower", "failed", "wrong") or not lesson.single or lesson.tid not in full:
            continue
        value = full[lesson.tid]
        beyond = (value - lesson.reached) * lesson.sign >= 0
        others = all(equal(full.get(k), v) for k, v in lesson.after.items() if k != lesson.tid and k in full
                     and (lesson.verdict != "wrong" or getattr(space.by_id.get(k), "kind", "") == "constexpr"))
        if beyond and others:
            return (f"{space.label(lesson.tid)}={value} is at or beyond {lesson.reached}, "
                    f"which was {lesson.verdict} with the same other values")
    return None


def lesson_verdict(status: str, speedup: float | None, faster: bool, parent_speedup: float | None) -> str:
    status = str(getattr(status, "value", status))
    if status == "wrong":
        return "wrong"
    if status != "correct":
        return "failed"
    if speedup is not None and parent_speedup:
        if speedup > parent_speedup * 1.02 and (faster or speedup > parent_speedup * 1.05):
            return "paid"
        if speedup < parent_speedup * 0.98:
            return "slower"
        return "flat"
    return "paid" if faster else "flat"
