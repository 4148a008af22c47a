"""Launch-parameter search: block sizes, num_warps, num_stages and autotune config lists.

Three parts, usable on their own:

* `rewrite` / `apply_assignment` change only the chosen values in a problem file (the
  literal text, or an inserted `num_warps=` keyword); every other byte stays as it was.
* `check_assignment` rejects, before any GPU time, values that cannot compile or fit:
  illegal values, tl.dot dims under 16, tensors over 2**20 elements, an fp32 accumulator
  needing more than ~200 registers per thread, dot operands x num_stages over the 227 KB of
  shared memory of an sm_90 SM, too few or too many elements per thread. A value the
  current source already runs with widens the bound it is measured against (the estimates
  are rough; a working baseline proves the hardware takes it). A caller-supplied
  `feasible(assignment)` hook (an offline compile, say) runs after these.
  Checked against Triton 3.6 on an H200 (examples/matmul.py, 90 configs): the shared-memory
  estimate equalled the compiler's own figure, every accumulator rejection spilled, and
  every accepted config compiled without spills.
* `LaunchParamStrategy` walks the space from the best candidate: neighbours first (x2 and
  /2 per value, 2D tiles moved together, block and warps moved together, a x4 jump for
  blocks far from typical sizes), ordered by a prior (typical GPU sizes, diagnosis
  findings, what paid or hurt in the history), then two-step combinations once those run
  out. Every move considered, proposed or pruned, is kept for the run record.
"""

from __future__ import annotations

import ast
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable

from tritonforge.analysis.launch_sites import (
    BLOCK_MAX,
    BLOCK_MIN,
    DEFAULT_STAGES,
    DEFAULT_WARPS,
    DOT_MIN,
    DOT_ROLES,
    MAX_TENSOR_NUMEL,
    STAGES,
    WARPS,
    ConfigSpec,
    LaunchSite,
    SearchSpace,
    Span,
    Tunable,
    entry_of,
    is_pow2,
)
from tritonforge.strategies.base import Candidate, SearchState, source_key

Assignment = dict[str, Any]
FeasibleHook = Callable[[Assignment], "bool | str | None"]


# --- rewriting -----------------------------------------------------------------------------


def rewrite(source: str, assignment: Assignment, entry: str | None = None) -> str:
    """`source` with the tunables named in `assignment` set to the given values.

    Ids are those of `SearchSpace.from_source(source, entry)`; `entry` defaults to the
    file's `ENTRY`. Values equal to the current ones are left untouched, so a full
    assignment of the current values returns `source` unchanged. Raises ValueError for an
    unknown or non-tunable id, or a value of the wrong type.
    """
    entry = entry or entry_of(source)
    if not entry:
        raise ValueError("no entry given and the file sets no ENTRY")
    out = apply_assignment(SearchSpace.from_source(source, entry), assignment)
    ast.parse(out)  # a rewrite only swaps numbers; this guards against a span bug
    return out


def apply_assignment(space: SearchSpace, assignment: Assignment) -> str:
    """`space.source` with the assigned values written in (see `rewrite`)."""
    edits: list[tuple[int, int, int, Span, str]] = []
    offsets = _line_offsets(space.source)
    for tid, value in assignment.items():
        t = _tunable_for(space, tid)
        value = _normalise(t, value)
        if _same(t, value, t.current):
            continue
        for order, loc in enumerate(t.locations):
            start = offsets[loc.line - 1] + loc.col
            end = offsets[loc.end_line - 1] + loc.end_col
            text = _render(space.source.encode()[start:end].decode(), t, value, loc)
            edits.append((start, end, _insert_order(loc, order), loc, text))
    return _splice(space.source.encode(), sorted(edits, key=lambda e: (e[0], e[2])))


def _tunable_for(space: SearchSpace, tid: str) -> Tunable:
    if tid not in space.by_id:
        raise ValueError(f"unknown tunable {tid!r}; known: {', '.join(space.by_id)}")
    t = space.by_id[tid]
    if not t.free:
        raise ValueError(f"{tid} is not tunable: {t.why}")
    return t


def _normalise(t: Tunable, value: Any) -> Any:
    if t.kind == "autotune_configs":
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{t.id} needs a non-empty list of configs")
        return tuple(v if isinstance(v, ConfigSpec) else ConfigSpec.from_flat(dict(v)) for v in value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{t.id} needs an integer, not {value!r}")
    return value


def _same(t: Tunable, a: Any, b: Any) -> bool:
    if t.kind == "autotune_configs":
        return [(c.flat(), c.extra) for c in a] == [(c.flat(), c.extra) for c in b]
    return a == b


def _insert_order(loc: Span, order: int) -> int:
    # Two keywords inserted at one point: num_warps first, then num_stages.
    return {"num_warps": 0, "num_stages": 1}.get(loc.insert or "", order)


def _line_offsets(source: str) -> list[int]:
    """Byte offset of each line start; `ast` columns are UTF-8 byte offsets."""
    offsets, pos = [], 0
    for line in source.encode().splitlines(keepends=True):
        offsets.append(pos)
        pos += len(line)
    offsets.append(pos)
    return offsets


def _render(old: str, t: Tunable, value: Any, loc: Span) -> str:
    if t.kind == "autotune_configs":
        return _render_configs(old, value, t.current)
    if loc.insert is not None:
        return f"{', ' if loc.lead else ''}{loc.insert}={value}"
    return str(value + loc.delta)


def _splice(data: bytes, edits: list[tuple[int, int, int, Span, str]]) -> str:
    out, pos, last_insert_at = [], 0, -1
    for start, end, _, loc, text in edits:
        if start < pos:
            raise ValueError("overlapping edits")  # two tunables share text: an analysis bug
        if loc.insert is not None and start == last_insert_at and not text.startswith(", "):
            text = ", " + text  # a second keyword inserted into an empty call
        out.append(data[pos:start])
        out.append(text.encode())
        pos = end
        last_insert_at = start if loc.insert is not None else -1
    out.append(data[pos:])
    return b"".join(out).decode()


def _render_configs(old: str, configs: tuple[ConfigSpec, ...], written: tuple[ConfigSpec, ...]) -> str:
    """A config list written like the one it replaces (name, quotes, layout); configs it
    already had keep their text."""
    tree = ast.parse(old.strip(), mode="eval").body
    first = tree.elts[0] if isinstance(tree, (ast.List, ast.Tuple)) and tree.elts else None
    prefix = ast.unparse(first.func) if isinstance(first, ast.Call) else "triton.Config"
    quote = "'" if 0 <= old.find("'") < (old.find('"') if '"' in old else len(old)) else '"'
    texts = {_hashable(c): c.text for c in written if c.text}
    items = [texts.get(_hashable(c)) or _render_config(c, prefix, quote) for c in configs]
    opening, closing = ("(", ")") if old.lstrip().startswith("(") else ("[", "]")
    lines = old.splitlines()
    if len(lines) == 1:
        trailer = "," if opening == "(" and len(items) == 1 else ""
        return opening + ", ".join(items) + trailer + closing
    indent = lines[1][: len(lines[1]) - len(lines[1].lstrip())]
    last = lines[-1]
    close_indent = last[: len(last) - len(last.lstrip())] if last.strip().startswith(closing) else indent[:-4]
    body = "".join(f"{indent}{item},\n" for item in items)
    return f"{opening}\n{body}{close_indent}{closing}"


def _render_config(c: ConfigSpec, prefix: str, quote: str) -> str:
    kw = ", ".join(f"{quote}{k}{quote}: {v!r}" for k, v in c.kwargs)
    parts = ["{" + kw + "}"]
    if c.num_warps is not None:
        parts.append(f"num_warps={c.num_warps}")
    if c.num_stages is not None:
        parts.append(f"num_stages={c.num_stages}")
    parts.extend(c.extra)
    return f"{prefix}({', '.join(parts)})"


# --- feasibility ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HardwareLimits:
    """Static bounds for pruning; defaults are an sm_90 (H100/H200) GPU."""

    smem_bytes: int = 232448  # 227 KiB of shared memory per block
    acc_regs_per_thread: float = 200  # fp32 accumulator registers, leaving room for the rest
    max_elems_per_thread: float = 64  # non-dot tile per thread; 128 fp32 took ~245 registers on an H200
    min_elems_per_thread: float = 1.0  # fewer: threads hold copies of the same elements
    dot_elem_bytes: int = 2  # fp16/bf16 operands; fp32 (tf32) dots would be 4
    max_numel: int = MAX_TENSOR_NUMEL
    dot_min: int = DOT_MIN

    def with_facts(self, facts: dict[str, Any]) -> "HardwareLimits":
        """Bounds adjusted by `SearchState.facts`, where known: "smem_bytes" (or the
        "max_shared_per_block" of analysis.occupancy's GpuSpec), "dot_elem_bytes",
        "acc_regs_per_thread"."""
        known = {k: facts[k] for k in ("smem_bytes", "dot_elem_bytes", "acc_regs_per_thread") if k in facts}
        if "smem_bytes" not in known and "max_shared_per_block" in facts:
            known["smem_bytes"] = facts["max_shared_per_block"]
        return replace(self, **known) if known else self


@dataclass(frozen=True)
class _LaunchValues:
    """The values one launch (or one autotune config of it) runs with."""

    values: dict[str, int | None]
    warps: int
    stages: int
    label: str


def check_assignment(space: SearchSpace, assignment: Assignment, limits: HardwareLimits = HardwareLimits(),
                     feasible: FeasibleHook | None = None) -> str | None:
    """Why `assignment` (merged over the current values) cannot run well, or None if it may."""
    full = {**space.current, **assignment}
    for tid, value in assignment.items():
        reason = _illegal(space.by_id.get(tid), tid, value)
        if reason:
            return reason
    for site in space.sites:
        reason = _check_site(site, full, space.current, limits)
        if reason:
            return reason
    return _ask_hook(feasible, full)


def _illegal(t: Tunable | None, tid: str, value: Any) -> str | None:
    if t is None or not t.free:
        return f"{tid} is not a tunable of this file" if t is None else f"{tid} is not tunable: {t.why}"
    if t.kind == "autotune_configs":
        return None if value else f"{t.id}: an empty config list"
    if value not in t.legal:
        return f"{t.id}={value} is not legal (allowed: {_span_text(t.legal)})"
    return None


def _span_text(values: tuple[int, ...]) -> str:
    return f"{values[0]}..{values[-1]}" if len(values) > 6 else ", ".join(map(str, values))


def _ask_hook(feasible: FeasibleHook | None, full: Assignment) -> str | None:
    if feasible is None:
        return None
    try:
        verdict = feasible(dict(full))
    except Exception as e:  # a broken hook must not stop the search, but must be visible
        return f"feasibility hook raised {type(e).__name__}: {e}"
    if isinstance(verdict, str):
        return verdict or None
    return None if verdict in (True, None) else "rejected by the feasibility hook"


def _check_site(site: LaunchSite, full: Assignment, current: Assignment, limits: HardwareLimits) -> str | None:
    ref = _max_metrics(site, current, limits)
    for launch in _launches(site, full):
        reason = _check_launch(site, launch, ref, limits)
        if reason:
            return f"{site.kernel} (line {site.line}) {launch.label}: {reason}"
    return None


def _launches(site: LaunchSite, full: Assignment) -> list[_LaunchValues]:
    values: dict[str, int | None] = {}
    for param in site.facts.constexprs:
        tid = site.bindings.get(param)
        v = (full[tid] if tid in full else _tunable_of(site, tid).current) if tid else None
        values[param] = v if _numeric(v) else None
    tid = site.bindings.get("autotune_configs")
    if tid is not None:
        configs = full.get(tid) or _tunable_of(site, tid).current or ()
        return [_LaunchValues({**values, **c.values()}, c.warps, c.stages, c.label()) for c in configs]
    warps = _value(site, full, "num_warps", DEFAULT_WARPS)
    stages = _value(site, full, "num_stages", DEFAULT_STAGES)
    label = ", ".join(f"{k}={v}" for k, v in values.items() if v is not None)
    return [_LaunchValues(values, warps, stages, f"{{{label}, num_warps={warps}, num_stages={stages}}}")]


def _tunable_of(site: LaunchSite, tid: str) -> Tunable:
    return next(t for t in site.tunables if t.id == tid)


def _value(site: LaunchSite, full: Assignment, option: str, default: int) -> int:
    tid = site.bindings.get(option)
    if tid is None:
        return default
    v = full.get(tid, _tunable_of(site, tid).current)
    return v if isinstance(v, int) else default


def _metrics(site: LaunchSite, launch: _LaunchValues, limits: HardwareLimits) -> dict[str, float]:
    """Rough per-program costs; a metric is absent when a value it needs is not known."""
    v, threads, facts = launch.values, 32 * launch.warps, site.facts
    out: dict[str, float] = {}
    sizes = [_product(v, tile) for tile in facts.tiles] + [v.get(d) for d in facts.tile_dims()]
    known = [s for s in sizes if s]
    if known:
        out["numel"] = max(known)
        out["elems_per_thread"] = max(known) / threads
    for m, n, k in facts.dots:
        vm, vn, vk = v.get(m or ""), v.get(n or ""), v.get(k or "")
        if vm and vn:
            out["acc_regs"] = max(out.get("acc_regs", 0), vm * vn / threads)
        if vm and vn and vk:
            smem = (vm * vk + vk * vn) * limits.dot_elem_bytes * launch.stages
            out["smem"] = max(out.get("smem", 0), smem)
    return out


def _product(values: dict[str, int | None], dims: tuple[str, ...]) -> int | None:
    out = 1
    for d in dims:
        v = values.get(d)
        if not v:
            return None
        out *= v
    return out


def _max_metrics(site: LaunchSite, current: Assignment, limits: HardwareLimits) -> dict[str, float]:
    """The largest cost of each kind the current values already run with (and the fewest elements)."""
    out: dict[str, float] = {}
    for launch in _launches(site, current):
        m = _metrics(site, launch, limits)
        for k, v in m.items():
            out[k] = max(out.get(k, v), v)
        if "elems_per_thread" in m:
            out["min_elems"] = min(out.get("min_elems", math.inf), m["elems_per_thread"])
    return out


def _check_launch(site: LaunchSite, launch: _LaunchValues, ref: dict[str, float], limits: HardwareLimits) -> str | None:
    for m, n, k in site.facts.dots:
        for d in (m, n, k):
            value = launch.values.get(d or "")
            if value is not None and value < limits.dot_min:
                return f"tl.dot needs {d} >= {limits.dot_min}, got {value}"
    got = _metrics(site, launch, limits)
    if got.get("numel", 0) > limits.max_numel:
        return f"a tile of {int(got['numel'])} elements exceeds Triton's {limits.max_numel}"
    bounds = (
        ("acc_regs", limits.acc_regs_per_thread, "fp32 accumulator needs {:.0f} registers/thread (> {:.0f})"),
        ("smem", limits.smem_bytes, "shared memory {:.0f} B for dot operands x num_stages (> {:.0f} B)"),
        ("elems_per_thread", limits.max_elems_per_thread,
         "{:.0f} elements per thread (> {:.0f}): at or past the register limit"),
    )
    for key, bound, words in bounds:
        if key == "elems_per_thread" and site.facts.has_dot:
            continue  # dot operands live in shared memory; the accumulator check covers registers
        allowed = max(bound, ref.get(key, 0))
        if got.get(key, 0) > allowed:
            return words.format(got[key], allowed)
    if "elems_per_thread" in got:
        floor = min(limits.min_elems_per_thread, ref.get("min_elems", limits.min_elems_per_thread))
        if got["elems_per_thread"] < floor:
            return f"{got['elems_per_thread']:.2g} elements per thread (< {floor:.2g}): idle or duplicated threads"
    return None


# --- the search ----------------------------------------------------------------------------


@dataclass
class Move:
    """A change of some tunables from the best candidate's values."""

    changes: dict[str, tuple[Any, Any]]  # id -> (old, new)
    kind: str  # step | jump | tile | block+warps | widen | pin | combo
    ring: int = 1  # 1: neighbours of the best; 2: two-step combinations
    score: float = 0.0
    notes: list[str] = field(default_factory=list)  # what moved the score

    @property
    def signature(self) -> frozenset:
        return frozenset((k, _hashable(v[1])) for k, v in self.changes.items())


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
class _Lesson:
    """What one evaluated change taught: tunable, direction, value reached, verdict."""

    tid: str
    sign: int
    start: Any
    reached: Any
    verdict: str  # paid | slower | failed | flat
    single: bool  # the only value that changed
    after: Assignment


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

_LESSON_WEIGHT = {"paid": 2.5, "slower": -1.5, "failed": -3.0, "flat": -0.5}


class LaunchParamStrategy:
    """Budgeted neighbour search over launch parameters of the best candidate."""

    name = "launch_params"

    def __init__(self, feasible: FeasibleHook | None = None, limits: HardwareLimits = HardwareLimits(),
                 max_autotune_configs: int = 32, max_new_configs: int = 8, max_combos: int = 120) -> None:
        self.feasible = feasible
        self.limits = limits
        # Every config is compiled and benchmarked on first call: widen a list a few at a time.
        self.max_autotune_configs = max_autotune_configs
        self.max_new_configs = max_new_configs
        self.max_combos = max_combos
        self.last_space: SearchSpace | None = None
        self.last_moves: list[MoveRecord] = []
        self._analyses: dict[str, SearchSpace | None] = {}  # by source key: sources never change

    # protocol
    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        self.last_moves = []
        space = self._space(state.best.source, state.entry)
        self.last_space = space
        if space is None or not space.tunables or limit <= 0:
            return []
        limits = self.limits.with_facts(state.facts)
        lessons = self._lessons(state)
        studied = {lesson.tid for lesson in lessons}
        caps = (self.max_autotune_configs, self.max_new_configs)
        ring1 = _scored(space, _ring1(space, caps, limits, studied), lessons, state.findings, limits)
        ring2 = _scored(space, _ring2(space, ring1, lessons, self.max_combos), lessons, state.findings, limits)
        return self._walk(state, space, ring1 + ring2, limit, limits, lessons)

    def space_description(self) -> dict[str, Any]:
        """The last analysed space and the moves of the last `propose`, in walk order."""
        out = describe_space(self.last_space) if self.last_space else {"sites": [], "tunables": [], "fixed": []}
        out["strategy"] = self.name
        out["moves"] = [asdict(m) for m in self.last_moves]
        return out

    # analysis
    def _space(self, source: str, entry: str) -> SearchSpace | None:
        key = source_key(source)
        if key not in self._analyses:
            try:
                self._analyses[key] = SearchSpace.from_source(source, entry)
            except (SyntaxError, ValueError):
                self._analyses[key] = None  # another strategy's file we cannot read: no launches
        return self._analyses[key]

    def _lessons(self, state: SearchState) -> list[_Lesson]:
        by_key = {o.candidate.key: o for o in state.history}
        out: list[_Lesson] = []
        for o in state.history:
            parent = self._parent(o.candidate.parent, by_key, state)
            if parent is None:
                continue
            before = self._space(parent[0], state.entry)
            after = self._space(o.candidate.source, state.entry)
            if before is None or after is None:
                continue
            changed = _numeric_changes(before.current, after.current)
            verdict = _verdict(o.status, o.speedup, o.faster, parent[1])
            for tid, (a, b) in changed.items():
                sign = 1 if b > a else -1
                out.append(_Lesson(tid, sign, a, b, verdict, len(changed) == 1, after.current))
        return out

    def _parent(self, key: str | None, by_key: dict, state: SearchState) -> tuple[str, float | None] | None:
        if key is None or key == source_key(state.baseline_source):
            return state.baseline_source, 1.0
        if key in by_key:
            return by_key[key].candidate.source, by_key[key].speedup
        if key == state.best.key:
            return state.best.source, state.best_speedup
        return None

    def _walk(self, state: SearchState, space: SearchSpace, moves: list[Move], limit: int,
              limits: HardwareLimits, lessons: list[_Lesson]) -> list[Candidate]:
        seen = {state.best.key, source_key(state.baseline_source)}
        out: list[Candidate] = []
        for order, m in enumerate(moves):
            record = MoveRecord(order, describe_move(space, m), m.kind, m.ring, round(m.score, 3), "deferred",
                                notes=m.notes)
            self.last_moves.append(record)
            changes = {k: v[1] for k, v in m.changes.items()}
            full = {**space.current, **changes}
            reason = (_pointless(space, m) or _blocked(space, full, lessons)
                      or check_assignment(space, changes, limits, self.feasible))
            if reason:
                record.status, record.reason = "pruned", reason
                continue
            if len(out) >= limit:
                record.reason = "over this round's limit"
                continue
            source = apply_assignment(space, changes)
            key = source_key(source)
            if key in seen or state.tried(key):
                earlier = key in {c.key for c in out}
                record.status = "duplicate" if earlier else "tried"
                record.reason = "same source as an earlier move" if earlier else "this source was evaluated already"
                continue
            seen.add(key)
            record.status = "proposed"
            out.append(Candidate(source=source, origin=self.name, params=_jsonable(full),
                                 parent=state.best.key, description=record.description))
        return out


# --- move generation -----------------------------------------------------------------------


def _scored(space: SearchSpace, moves: list[Move], lessons: list[_Lesson], findings: list[Any],
            limits: HardwareLimits) -> list[Move]:
    """Moves best-first: prior (typical sizes) + diagnosis findings + history."""
    cur = space.current
    base = _prior(space, cur, limits)
    kinds = _finding_kinds(findings)
    for m in moves:
        new = {**cur, **{k: v[1] for k, v in m.changes.items()}}
        m.score += _prior(space, new, limits) - base
        m.score += _finding_bias(space, m, kinds) + _lesson_bias(m, lessons)
    return sorted(moves, key=lambda m: -m.score)  # stable: generation order breaks ties


def _ring1(space: SearchSpace, caps: tuple[int, int], limits: HardwareLimits, studied: set[str]) -> list[Move]:
    """Neighbours of the best. Jumps are a cold-start shortcut: once the history says
    something about a tunable, it moves in x2 steps along what paid."""
    cur = space.current
    moves: list[Move] = []
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


def _steps(t: Tunable, value: int) -> list[int]:
    if t.kind == "num_stages":
        candidates = [value + 1, value - 1]
    else:
        candidates = [value * 2, value // 2]
    return [v for v in candidates if v in t.legal and v != value]


def _jump(space: SearchSpace, t: Tunable, cur: Assignment, limits: HardwareLimits) -> int | None:
    """A x4 step towards the typical size, for blocks at least 4x away from it."""
    if t.kind != "constexpr":
        return None
    typical = _typical(space, t, cur, limits)
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
    configs, so each gets some); pin single configs."""
    configs: tuple[ConfigSpec, ...] = t.current
    site = next(s for s in space.sites if s.bindings.get("autotune_configs") == t.id)
    dims = site.facts.tile_dims()
    seen = {_hashable(c) for c in configs}
    extra: list[ConfigSpec] = []
    for n in _round_robin([_config_neighbours(c, dims, site.facts.has_loop) for c in configs]):
        key = _hashable(n)
        if key not in seen and _config_ok(space, site, t, n, limits):
            seen.add(key)
            extra.append(n)
    room = max(0, min(caps[0] - len(configs), caps[1]))
    moves = []
    if extra and room:
        wider = configs + tuple(extra[:room])
        moves.append(Move({t.id: (configs, wider)}, "widen", score=0.8))
    if len(configs) > 1:
        for c in configs:
            moves.append(Move({t.id: (configs, (c,))}, "pin", score=-0.3))
    return moves


def _round_robin(lists: list[list[ConfigSpec]]) -> list[ConfigSpec]:
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def _config_neighbours(c: ConfigSpec, dims: set[str], has_loop: bool) -> list[ConfigSpec]:
    out = []
    for k, v in c.kwargs:
        if k in dims and is_pow2(v):
            out += [c.with_values(**{k: v * 2}), c.with_values(**{k: v // 2})]
    out += [c.with_values(num_warps=c.warps * 2), c.with_values(num_warps=c.warps // 2)]
    if has_loop:
        out += [c.with_values(num_stages=c.stages + 1), c.with_values(num_stages=c.stages - 1)]
    return out


def _config_ok(space: SearchSpace, site: LaunchSite, t: Tunable, c: ConfigSpec, limits: HardwareLimits) -> bool:
    legal_blocks = all(BLOCK_MIN <= v <= BLOCK_MAX and is_pow2(v) for k, v in c.kwargs if k in site.facts.tile_dims())
    if not legal_blocks or c.warps not in WARPS or c.stages not in STAGES:
        return False
    return _check_site(site, {**space.current, t.id: (c,)}, space.current, limits) is None


def _ring2(space: SearchSpace, ring1: list[Move], lessons: list[_Lesson], max_combos: int) -> list[Move]:
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


def _further(space: SearchSpace, lessons: list[_Lesson], known: set) -> list[Move]:
    """Two steps along a direction that paid (x4 from the best), when ring 1 is spent."""
    cur, out = space.current, []
    for lesson in lessons:
        t = space.by_id.get(lesson.tid)
        if lesson.verdict != "paid" or t is None or not t.free or t.kind == "autotune_configs":
            continue
        value = cur[t.id]
        new = value * 4 if lesson.sign > 0 else value // 4
        if t.kind == "num_stages":
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


# --- priors --------------------------------------------------------------------------------


def _typical(space: SearchSpace, t: Tunable, values: Assignment, limits: HardwareLimits) -> float:
    """A size that usually performs well on a current GPU, for the prior to pull towards."""
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
        launch = _launches(site, values)[0]
        metrics = _metrics(site, launch, HardwareLimits())
        if "acc_regs" in metrics:
            want, cap = metrics["acc_regs"] * launch.warps / 128, 16
        elif "elems_per_thread" in metrics:
            want, cap = metrics["elems_per_thread"] * launch.warps / 8, 8
        else:
            continue
        return float(min(cap, max(1, 2 ** round(math.log2(max(want, 1))))))
    return DEFAULT_WARPS


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
        total -= _weight(space, t) * abs(math.log2(v / _typical(space, t, values, limits)))
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


def _lesson_bias(m: Move, lessons: list[_Lesson]) -> float:
    """Lessons on the same tunable and direction, from the nearest starting value only:
    64->128 paid but 128->256 was slower says nothing good about 128->256 any more."""
    total = 0.0
    for tid, (old, new) in m.changes.items():
        if not _numeric(old) or not _numeric(new):
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


def _pointless(space: SearchSpace, m: Move) -> str | None:
    """num_stages of a kernel without loops compiles to the same code: not worth a run."""
    for tid in m.changes:
        if space.by_id[tid].kind != "num_stages":
            continue
        kernels = [s.facts for s in space.sites if s.bindings.get("num_stages") == tid]
        if kernels and not any(k.has_loop for k in kernels):
            return f"{', '.join(k.name for k in kernels)} has no loop: num_stages has nothing to pipeline"
    return None


def _blocked(space: SearchSpace, full: Assignment, lessons: list[_Lesson]) -> str | None:
    """A move at or beyond a value that was slower or failed, all else equal, is not retried."""
    for lesson in lessons:
        if lesson.verdict not in ("slower", "failed") or not lesson.single or lesson.tid not in full:
            continue
        value = full[lesson.tid]
        beyond = (value - lesson.reached) * lesson.sign >= 0
        others = all(_equal(full.get(k), v) for k, v in lesson.after.items() if k != lesson.tid and k in full)
        if beyond and others:
            return (f"{space.label(lesson.tid)}={value} is at or beyond {lesson.reached}, "
                    f"which was {lesson.verdict} with the same other values")
    return None


def _verdict(status: str, speedup: float | None, faster: bool, parent_speedup: float | None) -> str:
    if str(getattr(status, "value", status)) != "correct":
        return "failed"
    if speedup is not None and parent_speedup:
        if speedup > parent_speedup * 1.02 and (faster or speedup > parent_speedup * 1.05):
            return "paid"
        if speedup < parent_speedup * 0.98:
            return "slower"
        return "flat"
    return "paid" if faster else "flat"


# --- small helpers -------------------------------------------------------------------------


def _numeric(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _numeric_changes(before: Assignment, after: Assignment) -> dict[str, tuple[int, int]]:
    return {k: (before[k], after[k]) for k in before.keys() & after.keys()
            if _numeric(before[k]) and _numeric(after[k]) and before[k] != after[k]}


def _equal(a: Any, b: Any) -> bool:
    return _hashable(a) == _hashable(b)


def _hashable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, ConfigSpec):
        return (tuple(sorted(v.flat().items())), v.extra)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def _jsonable(values: Assignment) -> dict[str, Any]:
    return {k: [c.flat() for c in v] if isinstance(v, tuple) else v for k, v in values.items()}


def describe_move(space: SearchSpace, m: Move) -> str:
    """ "BLOCK_SIZE 64->256, num_warps 4->8"; config lists by size or the pinned config."""
    parts = []
    for tid, (old, new) in m.changes.items():
        label = space.label(tid)
        if space.by_id[tid].kind == "autotune_configs":
            if m.kind == "pin":
                parts.append(f"{label}: pin {new[0].label()}")
            else:
                parts.append(f"{label}: {len(old)} -> {len(new)} configs ({m.kind})")
        else:
            parts.append(f"{label} {old}->{new}")
    return ", ".join(parts)


def describe_space(space: SearchSpace) -> dict[str, Any]:
    """The search space as plain data, for the run record."""

    def tunable(t: Tunable) -> dict[str, Any]:
        current = [c.flat() for c in t.current] if isinstance(t.current, tuple) else t.current
        return {
            "id": t.id, "kind": t.kind, "current": current, "free": t.free, "why": t.why,
            "legal": list(t.legal), "roles": sorted(t.roles), "feeds": list(t.feeds),
            "pairs": list(t.pairs), "relations": list(t.relations),
            "locations": [[s.line, s.col] for s in t.locations],
        }

    sites = [{"kernel": s.kernel, "line": s.line, "function": s.function, "via": list(s.via),
              "grid": s.grid, "grid_kind": s.grid_kind, "grid_resolved": s.grid_resolved,
              "grid_meta": list(s.grid_meta), "autotuned": s.autotuned, "bindings": dict(s.bindings)}
             for s in space.sites]
    return {"sites": sites, "tunables": [tunable(t) for t in space.tunables],
            "fixed": [tunable(t) for t in space.fixed]}
