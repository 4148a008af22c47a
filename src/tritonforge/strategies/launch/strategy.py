"""`LaunchParamStrategy`: a budgeted neighbour search over the launch parameters of the best.

It walks the space from the best candidate, neighbours first, ordered by the priors
(see `priors`), then two-step combinations once those run out. Every move considered,
proposed or pruned, is kept for the run record.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Iterable

from tritonforge.analysis.launch_sites import SearchSpace, Tunable
from tritonforge.analysis.launch_sites.runtime import Runtime, Unreachable
from tritonforge.strategies.base import Candidate, SearchState, Strategy, source_key
from tritonforge.strategies.launch.feasibility import FeasibleHook, HardwareLimits, check_assignment
from tritonforge.strategies.launch.leaps import Outlook, leaps
from tritonforge.strategies.launch.moves import Lesson, Move, MoveRecord, combinations, describe_move, neighbours
from tritonforge.strategies.launch.priors import blocked, lesson_verdict, pointless, scored
from tritonforge.strategies.launch.rewrite import apply_assignment
from tritonforge.strategies.launch.values import jsonable, numeric_changes


class LaunchParamStrategy(Strategy):
    """Budgeted neighbour search over launch parameters of the best candidate."""

    name = "launch_params"  # the origin in run records and the registry name
    tunes = True

    def __init__(self, feasible: FeasibleHook | None = None, limits: HardwareLimits = HardwareLimits(),
                 max_autotune_configs: int = 32, max_new_configs: int = 8, max_combos: int = 120) -> None:
        self.feasible = feasible
        self.limits = limits
        # Every config is compiled and benchmarked on first call: widen a list a few at a time.
        self.max_autotune_configs = max_autotune_configs
        self.max_new_configs = max_new_configs
        self.max_combos = max_combos
        self.last_space: SearchSpace | None = None
        self.last_basis = ""  # the key of the candidate last_space was read from
        self.last_moves: list[MoveRecord] = []
        self._analyses: dict[str, SearchSpace | None] = {}  # by source key: sources never change
        self._runtime: Runtime | None = None
        self._runtimes: dict[str, Runtime] = {}  # rewritten files' own captures, by source key

    def applies(self, source: str, entry: str) -> bool:
        """Any launch reachable from the entry, or any kernel of the file: values the host code
        computes only become free once the baseline's launches are captured, at the start of
        the search, and so do launches made in forms read only from the capture."""
        space = self._space(source, entry)
        return bool(space and (space.by_id or (space.module is not None and space.module.kernels)))

    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        self.last_moves = []
        self._learn_runtime(state)
        space = self._space(state.best.source, state.entry)
        self.last_space, self.last_basis = space, state.best.key
        if space is None or not space.tunables or limit <= 0:
            return []
        limits = self.limits.with_gpu(state.gpu)
        lessons = self._lessons(state)
        studied = {lesson.tid for lesson in lessons}
        caps = (self.max_autotune_configs, self.max_new_configs)
        outlook = Outlook.from_state(state)
        ring1 = scored(space, neighbours(space, caps, limits, studied, leaps(space, limits, outlook, studied)),
                       lessons, state.findings, limits, outlook.far)
        ring2 = scored(space, combinations(space, ring1, lessons, self.max_combos), lessons, state.findings, limits,
                       outlook.far)
        return self._walk(state, space, ring1 + ring2, limit, limits, lessons)

    def describe_space(self) -> dict[str, Any]:
        """The last analysed space and the moves of the last `propose`, in walk order."""
        out = space_record(self.last_space) if self.last_space else {"sites": [], "tunables": [], "fixed": []}
        out["strategy"] = self.name
        out["on"] = self.last_basis  # a rewrite's own turn reads another file than the best
        out["moves"] = [asdict(m) for m in self.last_moves]
        return out

    # analysis
    def _learn_runtime(self, state: SearchState) -> None:
        """Computed launch values become tunable once the baseline's launches are known."""
        # The entry's trailing arguments no case passes keep their defaults, which moves may edit.
        passed = min(map(len, state.case_shapes.values())) if state.case_shapes else None
        if self._runtime is None and state.captured:
            self._runtime = Runtime.from_records(state.captured, state.dominant_case,
                                                 source_key(state.baseline_source), passed)
            self._analyses.clear()
        for key, launches in state.captured_rewrites.items():
            if launches and key not in self._runtimes:
                self._runtimes[key] = Runtime.from_records(launches, state.dominant_case, key, passed)
                self._analyses.pop(key, None)

    def _space(self, source: str, entry: str) -> SearchSpace | None:
        key = source_key(source)
        if key not in self._analyses:
            try:
                self._analyses[key] = SearchSpace.from_source(source, entry, self._runtimes.get(key, self._runtime))
            except (SyntaxError, ValueError):
                self._analyses[key] = None  # another strategy's file we cannot read: no launches
        return self._analyses[key]

    def _lessons(self, state: SearchState) -> list[Lesson]:
        by_key = {o.candidate.key: o for o in state.history}
        out: list[Lesson] = []
        for o in state.history:
            parent = self._parent(o.candidate.parent, by_key, state)
            if parent is None:
                continue
            before = self._space(parent[0], state.entry)
            after = self._space(o.candidate.source, state.entry)
            if before is None or after is None:
                continue
            changed = numeric_changes(before.current, after.current)
            verdict = lesson_verdict(o.status, o.speedup, o.faster, parent[1])
            if verdict == "wrong":
                # Warps and stages never change what a kernel computes: a wrong result comes
                # from the tile value that moved (a row block shrunk below the row).
                changed = {t: v for t, v in changed.items() if t in after.by_id and after.by_id[t].kind == "constexpr"}
            for tid, (a, b) in changed.items():
                sign = 1 if b > a else -1
                out.append(Lesson(tid, sign, a, b, verdict, len(changed) == 1, after.current))
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
              limits: HardwareLimits, lessons: list[Lesson]) -> list[Candidate]:
        seen = {state.best.key, source_key(state.baseline_source)}
        out: list[Candidate] = []
        for order, m in enumerate(moves):
            record = MoveRecord(order, describe_move(space, m), m.kind, m.ring, round(m.score, 3), "deferred",
                                notes=m.notes)
            self.last_moves.append(record)
            changes = {k: v[1] for k, v in m.changes.items()}
            full = {**space.current, **changes}
            reason = (pointless(space, m, state.launch_facts) or blocked(space, full, lessons)
                      or check_assignment(space, changes, limits, self.feasible))
            if reason:
                record.status, record.reason = "pruned", reason
                continue
            if len(out) >= limit:
                record.reason = "over this round's limit"
                continue
            try:
                source = apply_assignment(space, changes)
            except Unreachable as e:
                record.status, record.reason = "pruned", str(e)
                continue
            key = source_key(source)
            if key in seen or state.tried(key):
                earlier = key in {c.key for c in out}
                record.status = "duplicate" if earlier else "tried"
                record.reason = "same source as an earlier move" if earlier else "this source was evaluated already"
                continue
            seen.add(key)
            record.status = "proposed"
            out.append(Candidate(source=source, origin=self.name, params=jsonable(full),
                                 parent=state.best.key, description=record.description))
        return out


def space_record(space: SearchSpace, launched: Iterable[str] = ()) -> dict[str, Any]:
    """The search space as plain data, for the run record; `launched`: kernels seen at run
    time, besides those of the space's own capture."""

    def tunable(t: Tunable) -> dict[str, Any]:
        current = [c.flat() for c in t.current] if isinstance(t.current, tuple) else plain(t.current)
        return {
            "id": t.id, "kind": t.kind, "current": current, "free": t.free, "why": t.why,
            "legal": list(t.legal), "roles": sorted(t.roles), "feeds": list(t.feeds),
            "pairs": list(t.pairs), "relations": list(t.relations),
            "locations": [[s.line, s.col] for s in t.locations],
        }

    sites = [{"kernel": s.kernel, "line": s.line, "function": s.function, "via": list(s.via),
              "grid": s.grid, "grid_kind": s.grid_kind, "grid_resolved": s.grid_resolved,
              "grid_meta": list(s.grid_meta), "autotuned": s.autotuned, "bindings": dict(s.bindings),
              # values other cases take from another branch of the code than the dominant case
              "branches": {t.id.split(".", 1)[1]: t.id for t in s.tunables if t.id not in s.bindings.values()}}
             for s in space.sites]
    return {"sites": sites, "tunables": [tunable(t) for t in space.tunables],
            "fixed": [tunable(t) for t in space.fixed], "unreached": space.unreached(launched)}


def plain(value: Any) -> Any:
    """A launch value as JSON holds it: a replayed dtype (`tl.float32`) by its name as written."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return getattr(value, "name", None) or repr(value)
