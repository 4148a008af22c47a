"""From launch values to tunables: one literal is one tunable however many launches and
grids use it, a grid's own copy of a block size is tied to it, and each tunable says
whether the search may change it and within which legal values."""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from typing import Any

from tritonforge.analysis.launch_sites.coverage import host_floors, launch_guards
from tritonforge.analysis.launch_sites.launches import (Launch, Use, divisor_literals, grid_expr, grid_form,
                                                       grid_literals, insertion_point)
from tritonforge.analysis.launch_sites.model import (BLOCK_MAX, BLOCK_MIN, DEFAULT_STAGES, DEFAULT_WARPS, DOT_MIN,
                                                     DOT_ROLES, LOOP_HINT_ROLES, MAX_TENSOR_NUMEL, SPLIT_ROLES, STAGES,
                                                     TILE_ROLES, UNROLLS, WARPS, ConfigSpec, KernelFacts, LaunchSite,
                                                     Span, Tunable, is_pow2)
from tritonforge.analysis.launch_sites.resolve import Resolved, SourceModule
from tritonforge.analysis.launch_sites.replay_statements import Given
from tritonforge.analysis.launch_sites.runtime import RECEIVED, ReplayedValue, Runtime, replay_value
from tritonforge.analysis.astfold import params_of
from tritonforge.analysis.launch_sites.syntax import defaults_of, literal_span, span_of


SPLIT_RELATION = "splits the work over programs: the grid reads it too"


class _Groups:
    """Union-find over literal spans: one group is one tunable."""

    def __init__(self) -> None:
        self.parent: dict[tuple, tuple] = {}

    def find(self, k: tuple) -> tuple:
        self.parent.setdefault(k, k)
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, a: tuple, b: tuple) -> None:
        self.parent[self.find(a)] = self.find(b)


def build_sites(module: SourceModule, launches: list[Launch], runtime: Runtime | None = None,
                verify: bool = True) -> list[LaunchSite]:
    uses = []
    seen: dict[str, int] = defaultdict(int)
    unlaunched: list[int] = []
    floors: dict[int, dict[str, tuple[int, str]]] = {}
    for i, launch in enumerate(launches):
        occurrence = seen[launch.facts.name]
        seen[launch.facts.name] += 1
        if runtime is not None:
            floors[i] = _tile_floors(launch, occurrence, runtime)
        for u in launch.uses:
            u.launch = i
            if runtime is not None and verify and u.resolved.kind in ("literal", "insert"):
                _check_as_run(u, occurrence, runtime)
                _set_by_unread_autotuner(module, u, occurrence, runtime)
            if u.resolved.kind == "literal" and u.resolved.node is not None:
                u.span = literal_span(u.resolved.node)
            elif u.kind == "autotune_configs":
                if runtime is not None and verify and u.configs is None:  # captured from this very file
                    _configs_at_run_time(module, launch, u, occurrence, runtime)
            elif runtime is not None:
                _replay(module, launch, u, occurrence, runtime, verify)
                if u.replayed is None and verify:
                    _absent_option(module, launch, u, occurrence, runtime)
                # What ran is this file's only if captured from it.
                if u.replayed is None and verify and u.resolved.kind != "insert":
                    _as_run(u, occurrence, runtime)
            uses.append(u)
            if u.replayed is not None and runtime is not None:
                uses += _branches(u, runtime)
        if runtime is not None:
            _replay_grid(module, launch, occurrence, runtime, verify)
            if verify and not any(runtime.launch(case, launch.facts.name, occurrence) for case in runtime.cases):
                unlaunched.append(i)
    _never_ran(uses, unlaunched, runtime)
    _grid_unseen(uses, launches)
    groups, spans = _group_uses(module, launches, uses)
    splits = {i: _work_splits(module, launch) for i, launch in enumerate(launches)}
    tunable_of = _make_tunables(launches, uses, groups, spans, floors, splits)
    _mark_followers(list({t.id: t for t in tunable_of.values()}.values()))
    return [_site(module, launch, i, uses, tunable_of) for i, launch in enumerate(launches)]


def _never_ran(uses: list[Use], unlaunched: list[int], runtime: Runtime | None) -> None:
    """The uses of a launch no case made (a dispatch table's fp16 launcher where the cases are
    fp32): a move of its values would change nothing the cases time. Where launches could
    not be matched to sites by line (`Runtime.at_sites`), they are matched in call order, so
    where another site of the kernel disagrees with what its matched launch received, the
    launch may be this site's, and it is left as it is. Each
    stands alone, so that a literal it shares with a launch that ran still moves."""
    by_line = runtime.lines if runtime is not None else {}
    mismatched = {u.kernel for u in uses if RECEIVED in u.resolved.where and u.kernel not in by_line}
    for u in [u for u in uses if u.launch in unlaunched and u.kernel not in mismatched]:
        r = u.resolved
        u.resolved = Resolved("unknown", r.text, f"{r.where}; this launch ran on no case: not moved", None, r.value)
        u.span, u.replayed = None, None


def _grid_unseen(uses: list[Use], launches: list[Launch]) -> None:
    """The blocks of a launch whose grid is made out of sight and not of the meta-parameters
    (`launches._seen_launch`): the grid may divide by its own copy of one, so none is moved."""
    for u in uses:
        if launches[u.launch].grid_unseen and u.kind == "constexpr":
            r = u.resolved
            u.resolved = Resolved("unknown", r.text, f"{r.where}; the launch's grid is made where launch analysis "
                                  "cannot see it, and may hold a copy of it: not moved", None, r.value)
            u.span, u.replayed = None, None


def _mark_followers(tunables: list[Tunable]) -> None:
    """A computed value whose every literal is another tunable's (`BLOCK2 =
    next_power_of_2(cdiv(n, BLOCK))` beside `BLOCK = 1024`) follows that tunable: it is not
    moved on its own, and a move of the other may change it (`SearchSpace.literal_edits`)."""
    owner = {loc.key: t.id for t in tunables if t.free for loc in t.locations if loc.insert is None}
    followers = set()
    for t in tunables:
        if t.replayed is None or not t.free:
            continue
        keys = [span_of(k).key for k in t.replayed.knobs]
        if keys and all(owner.get(k) not in (None, t.id) for k in keys):
            t.free, t.locations, t.legal = False, (), ()
            t.why = f"computed from {', '.join(dict.fromkeys(owner[k] for k in keys))}: not moved on its own, it follows"
            followers.add(t.id)
    # A fixed computed value reading only literals of free ones (`NUM_CHUNKS = cdiv(n, BLOCK)`
    # beside a computed BLOCK) follows their moves where no edit keeps it (literal_edits), and says so.
    reads: dict[int, str] = {}
    for t in tunables:
        for k in t.replayed.knobs if t.free and t.replayed is not None else ():
            reads.setdefault(id(k), t.id)  # the first value reading a literal names it
    for t in tunables:
        if t.free or t.id in followers or t.replayed is None or not t.replayed.knobs:
            continue
        from_ = [owner.get(span_of(k).key) or reads.get(id(k)) for k in t.replayed.knobs]
        if all(from_):
            names = list(dict.fromkeys(from_))
            t.why += (f"; computed from {', '.join(names)}, it follows {'a move' if len(names) == 1 else 'moves'} "
                      f"of {'it' if len(names) == 1 else 'them'} that cannot keep it")


def _replay(module: SourceModule, launch: Launch, u: Use, occurrence: int, runtime: Runtime,
            verify: bool) -> None:
    """A computed value becomes tunable through the literals it reads, if replay reproduces it."""
    if u.expr is None or u.resolved.kind not in ("derived", "unknown", "heuristic"):
        return
    rv = ReplayedValue(u.expr, u.fn, launch.call.lineno, u.kernel, occurrence,
                       heuristic=u.resolved.kind == "heuristic", defaulted=_defaulted(launch), given=_given(launch))
    _, note = replay_value(module.tree, runtime, rv, u.param, verify=verify)
    if note or not rv.knobs:
        u.resolved.where += f"; {note or 'no integer literal decides it on the cases run'}"
        return
    u.replayed = rv
    literals = ", ".join(f"{c.value} (line {c.lineno})" for c in rv.knobs)
    origin = f"@triton.heuristics: {u.resolved.text}" if rv.heuristic else u.resolved.text or u.param
    where = f"{origin}, computed at run time; it reads {literals}" + _per_case(rv.per_case)
    for case, (floor, why) in _guard_floors(launch, u, occurrence, runtime).items():
        rv.floors[case] = floor
        where += f"; {why}" if case == rv.case(runtime) else ""
    u.resolved = Resolved("replayed", u.resolved.text, where, None, rv.per_case.get(rv.case(runtime)))


def _absent_option(module: SourceModule, launch: Launch, u: Use, occurrence: int, runtime: Runtime) -> None:
    """`num_warps` or `num_stages` that may come from a spread whose keys the file does not say
    (`**CFG`, a Mapping subclass): where no case's launch was passed it, the launch leaves it
    to Triton's default, and the keyword is inserted as for any launch that does not pass it
    (it cannot clash with a key the spread lacks)."""
    if u.kind not in ("num_warps", "num_stages") or launch.spread is None or u.resolved.kind != "unknown":
        return
    made = [m for case in runtime.cases if (m := runtime.launch(case, u.kernel, occurrence)) is not None]
    if not made or any(m.given is None or u.param in m.given for m in made):
        return
    default = DEFAULT_WARPS if u.kind == "num_warps" else DEFAULT_STAGES
    where = f"not passed: no key of **{module.text(launch.spread)} on any case run; Triton's default {default}"
    u.resolved = Resolved("insert", str(default), where, None, default)
    u.span = insertion_point(launch.call, u.param)
    _check_as_run(u, occurrence, runtime)


def _per_case(values: dict[str, Any]) -> str:
    """"; as run: 2048 on cols=1500, 1024 on cols=700" where the cases differ, else ""."""
    if len(set(map(repr, values.values()))) < 2:
        return ""
    return "; as run: " + ", ".join(f"{v} on {case}" for case, v in values.items())


def _check_as_run(u: Use, occurrence: int, runtime: Runtime) -> None:
    """A value the file seems to give (a literal, or Triton's default where the launch passes
    none) that some case's launch did not receive is set elsewhere at run time (a setter of a
    module global, a heuristic that sets num_warps, a spread dict): editing the literal, or
    inserting the keyword, would change nothing that runs, so it is not moved."""
    if u.kind not in ("constexpr", "num_warps", "num_stages"):
        return
    seen = _received(u, occurrence, runtime)
    differ = {case: v for case, v in seen.items() if v is not None and v != u.resolved.value}
    if not differ:
        return
    case, got = next(iter(differ.items()))
    u.resolved = Resolved("unknown", u.resolved.text, f"{u.resolved.where}, but {RECEIVED} {got} on {case}: "
                          "set elsewhere at run time", None, seen.get(runtime.dominant, got))


def _set_by_unread_autotuner(module: SourceModule, u: Use, occurrence: int, runtime: Runtime) -> None:
    """A launch that went through an autotuner the file's text does not show (one made by code
    the analysis cannot read): every config sets num_warps and num_stages and its own keys, so
    a keyword inserted at the launch would clash with them ("got multiple values for keyword
    argument") and an edited literal would be overridden. Not moved."""
    if u.kind not in ("constexpr", "num_warps", "num_stages") or u.resolved.kind not in ("literal", "insert"):
        return
    kernel = module.kernels.get(u.kernel)
    if kernel is not None and kernel.autotuned:
        return
    for case in runtime.cases:
        made = runtime.launch(case, u.kernel, occurrence)
        configs = made.configs if made is not None else None
        if configs and (u.kind != "constexpr" or any(u.param in c.get("kwargs", {}) for c in configs)):
            u.resolved = Resolved("unknown", u.resolved.text, f"{u.resolved.where}, but on {case} the launch went "
                                  f"through @triton.autotune ({len(configs)} configs) made where the file's text "
                                  "does not show it: its configs set it", None, u.resolved.value)
            return


def _as_run(u: Use, occurrence: int, runtime: Runtime) -> None:
    """A value the file does not give: what each case's launch received, so the report shows
    the value that ran (not moved all the same)."""
    if u.resolved.value is not None or u.kind not in ("constexpr", "num_warps", "num_stages"):
        return
    seen = _received(u, occurrence, runtime)
    if seen.get(runtime.dominant) is None:
        return
    u.resolved.value = seen[runtime.dominant]
    u.resolved.where += _per_case(seen)


def _received(u: Use, occurrence: int, runtime: Runtime) -> dict[str, Any]:
    """What each case's launch of the use's kernel received for its parameter."""
    return {case: launch.values.get(u.param) for case in runtime.cases
            if (launch := runtime.launch(case, u.kernel, occurrence)) is not None}


def _branches(u: Use, runtime: Runtime) -> list[Use]:
    """A computed value that other cases take from other literals than the dominant case (a
    size-keyed dict or branch): one more value per such branch, its moves aimed at its first
    case, so each branch is tuned for the cases that take it."""
    rv = u.replayed
    assert rv is not None
    main = rv.case(runtime)  # the dominant case, or the last that launches this kernel
    seen = [frozenset(id(k) for k in rv.case_knobs.get(main, ()))]
    out = []
    for case, knobs in rv.case_knobs.items():
        reads = frozenset(id(k) for k in knobs)
        if not reads - seen[0] or reads in seen:
            continue
        seen.append(reads)
        branch = dataclasses.replace(rv, knobs=knobs, aim=case)
        literals = ", ".join(f"{c.value} (line {c.lineno})" for c in knobs)
        where = f"{u.resolved.text or u.param} on {case} (another branch than {main}); it reads {literals}"
        out.append(dataclasses.replace(u, resolved=Resolved("replayed", u.resolved.text, where, None, rv.per_case[case]),
                                       replayed=branch))
    return out


def _defaulted(launch: Launch) -> frozenset[str]:
    """Parameters of the launching function its caller, as the file says, does not pass (for
    the entry: those no case passes, bound to their defaults by `_left_to_defaults`)."""
    fn = launch.scope.fn
    if fn is None:
        return frozenset()
    if launch.scope.is_entry:
        defaults = defaults_of(fn)
        return frozenset(name for name, (expr, _) in launch.scope.args.items() if defaults.get(name) is expr)
    return frozenset(p.arg for p in params_of(fn)) - set(launch.scope.args)


def _given(launch: Launch) -> Given:
    """What each function on the way from the entry to the launch is passed, by its caller."""
    out: Given = {}
    todo = [launch.scope]
    while todo:
        scope = todo.pop()
        if scope.fn is None or not isinstance(scope.fn, ast.FunctionDef) or scope.fn.name in out:
            continue
        out[scope.fn.name] = {}
        for name, (expr, caller) in scope.args.items():
            if isinstance(caller.fn, ast.FunctionDef) and hasattr(expr, "lineno"):
                out[scope.fn.name][name] = (expr, caller.fn)
                todo.append(caller)
    return out


def _replay_grid(module: SourceModule, launch: Launch, occurrence: int, runtime: Runtime, verify: bool) -> None:
    """A grid the host code computes beyond what `grid_literals` follows (a helper's return,
    a tuple unpacked): the literals it divides a size by, found by replaying it."""
    if launch.scope.fn is None or grid_form(module, launch)[0] == "lambda":
        return
    rv = ReplayedValue(launch.grid, launch.scope.fn, launch.call.lineno, launch.facts.name, occurrence,
                       defaulted=_defaulted(launch), given=_given(launch))
    _, note = replay_value(module.tree, runtime, rv, "grid", verify=verify)
    if not note:
        launch.replayed_divisors = divisor_literals(module, launch, rv.knobs)


def _configs_at_run_time(module: SourceModule, launch: Launch, u: Use, occurrence: int, runtime: Runtime) -> None:
    """Configs the file builds by code (a comprehension, a filter, a helper's list) are tuned as
    the list they were at run time: the first move writes that list out as literals in place of
    the code, keeping `key`, `prune_configs_by` and the rest of the decorator as they are."""
    node = module.autotune_written(module.functions[launch.facts.name])
    seen = [runtime.launch(case, launch.facts.name, occurrence) for case in runtime.cases]
    lists = [c.configs for c in seen if c is not None and c.configs]
    if node is None or not lists or len(lists) < len(seen):
        return
    if any(other != lists[0] for other in lists[1:]):
        u.resolved.where += "; the configs differ from case to case"
        return
    if any(c.get("pre_hook") for c in lists[0]):
        u.resolved.where += "; a config has a pre_hook, which cannot be written out as text"
        return
    text = module.text(node)
    u.configs = tuple(_config_spec(c) for c in lists[0])
    u.span = span_of(node)
    shown = " ".join(text.split())  # a list widened before spans lines, one config each
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    u.resolved = Resolved("configs", text, f"configs of @triton.autotune, built by code ({shown}): "
                                           f"the {len(u.configs)} it made at run time")


def _config_spec(data: dict[str, Any]) -> ConfigSpec:
    extra = [f"num_ctas={data['num_ctas']}"] if data.get("num_ctas") not in (None, 1) else []
    extra += [f"maxnreg={data['maxnreg']}"] if data.get("maxnreg") is not None else []
    return ConfigSpec(tuple(data["kwargs"].items()), data.get("num_warps"), data.get("num_stages"), tuple(extra))


def _use_key(u: Use) -> tuple:
    if u.replayed is not None:
        # One computed value however many launches pass it: the same literals read, the same
        # value on every case (a block and the flag computed from it read the same cap).
        values = tuple(repr(v) for _, v in sorted(u.replayed.per_case.items()))
        return ("replayed", u.kind, u.replayed.aim, values) + tuple(sorted(span_of(c).key for c in u.replayed.knobs))
    if u.span is not None and u.span.insert is None:
        return ("span",) + u.span.key
    if u.span is not None:
        return ("insert", u.param) + u.span.key
    return ("launch", u.launch, u.param)


def _group_uses(module: SourceModule, launches: list[Launch], uses: list[Use]) -> tuple[_Groups, dict[tuple, Span]]:
    groups = _Groups()
    spans: dict[tuple, Span] = {}
    for u in uses:
        groups.find(_use_key(u))
        if u.span is not None:
            spans[_use_key(u)] = u.span
    owned = {u.span.key for u in uses if u.span is not None}
    for i, launch in enumerate(launches):
        blocks = [u for u in uses if u.launch == i and u.kind == "constexpr" and not _is_branch(u)
                  and u.resolved.kind in ("literal", "replayed")]
        grid_names = {n.id for n in ast.walk(launch.grid) if isinstance(n, ast.Name)}
        for span, value in dict.fromkeys([*grid_literals(module, launch), *launch.replayed_divisors]):
            if span.key in owned:
                continue  # the grid reads a value we already tune (a shared variable)
            same = [u for u in blocks
                    if isinstance(u.resolved.value, int) and u.resolved.value >= 4 and u.resolved.value == value]
            if len({u.param for u in same}) > 1 and any(u.resolved.kind == "replayed" for u in same):
                # Two computed blocks of this launch equal on this case (BLOCK and BLOCK_P2 =
                # next_power_of_2(BLOCK)): the one the grid names, or neither. (Equal literal
                # blocks tie as one square tile, as the module docstring says.)
                same = [u for u in same if u.resolved.text in grid_names]
                same = same if len({u.param for u in same}) == 1 else []
            for u in same:
                key = ("span",) + span.key
                spans[key] = span
                groups.union(key, _use_key(u))
    return groups, spans


def _make_tunables(launches: list[Launch], uses: list[Use], groups: _Groups, spans: dict[tuple, Span],
                   floors: dict[int, dict[str, tuple[int, str]]],
                   splits: dict[int, frozenset[str]]) -> dict[int, Tunable]:
    """The tunable of each use, keyed by the use's position in `uses`."""
    members: dict[tuple, list[Use]] = defaultdict(list)
    for u in uses:
        members[groups.find(_use_key(u))].append(u)
    locations: dict[tuple, list[Span]] = defaultdict(list)
    for key, span in spans.items():
        locations[groups.find(key)].append(span)
    by_root: dict[tuple, Tunable] = {}
    taken: set[str] = set()
    for root, group in members.items():  # first-use order: dicts keep insertion order
        aim = group[0].replayed.aim if group[0].replayed else None
        case = f"@{aim.replace(' ', '')}" if aim else ""  # no ", " in an id: move descriptions split on it
        tid = _fresh_id(f"{group[0].kernel}.{group[0].param}{case}", taken)
        locs = tuple(sorted(set(locations[root]), key=lambda s: (s.line, s.col)))
        by_root[root] = _cover(_tunable(launches, tid, group, locs, splits), group, floors)
    return {i: by_root[groups.find(_use_key(u))] for i, u in enumerate(uses)}


def _fresh_id(base: str, taken: set[str]) -> str:
    tid, n = base, 1
    while tid in taken:
        n += 1
        tid = f"{base}#{n}"
    taken.add(tid)
    return tid


def _tunable(launches: list[Launch], tid: str, group: list[Use], locs: tuple[Span, ...],
             splits: dict[int, frozenset[str]]) -> Tunable:
    first = group[0]
    feeds = tuple(dict.fromkeys(f"{u.kernel}.{u.param}" for u in group))
    kinds = {u.kind for u in group}
    roles = frozenset().union(*(launches[u.launch].facts.roles.get(u.param, frozenset()) for u in group))
    current = first.configs if first.kind == "autotune_configs" else first.resolved.value
    why = first.resolved.where
    split = all(u.param in splits.get(u.launch, ()) for u in group)
    problem = _not_free(first, kinds, group, launches, split)
    return Tunable(
        # A fixed value replay checked against the capture is kept: moves of others must hold it.
        replayed=first.replayed if problem is None or first.resolved.kind == "replayed" else None,
        id=tid,
        kind=first.kind,
        current=current,
        free=problem is None,
        why=problem or why,
        locations=locs if problem is None else (),
        legal=_legal(first.kind, current, roles) if problem is None else (),
        roles=roles,
        feeds=feeds,
        relations=_relations(first.kind, roles, group) + ((SPLIT_RELATION,) if split and problem is None else ()),
    )


def _guard_floors(launch: Launch, u: Use, occurrence: int, runtime: Runtime) -> dict[str, tuple[int, str]]:
    """Per case, the bound a guard of the launching function puts on the block `u` passes by
    name (`if N > BLOCK_SIZE: raise`, coverage.host_floors), and why, in words."""
    fn = launch.scope.fn
    if u.kind != "constexpr" or not isinstance(u.expr, ast.Name) or not isinstance(fn, ast.FunctionDef):
        return {}
    bound = host_floors(fn).get(u.expr.id)
    out: dict[str, tuple[int, str]] = {}
    for case in runtime.cases if bound else ():
        run = runtime.launch(case, u.kernel, occurrence)
        v = runtime.frames_at(case, run).get(fn.name, {}).get(bound) if run else None
        if isinstance(v, int) and not isinstance(v, bool):
            out[case] = (v, f"{fn.name} raises unless {u.expr.id} >= {bound} ({v} on {case})")
    return out


def _tile_floors(launch: Launch, occurrence: int, runtime: Runtime) -> dict[str, tuple[int, str]]:
    """Per constexpr of a single tile (coverage.py): the largest value its parameter took on a
    captured case, and why it bounds the block, in words."""
    out: dict[str, tuple[int, str]] = {}
    for c, p in launch.facts.single_tiles:
        taken = {case: v for case in runtime.cases if (run := runtime.launch(case, launch.facts.name, occurrence))
                 and isinstance(v := run.args.get(p), int) and not isinstance(v, bool)}
        if taken:
            case = max(taken, key=lambda k: taken[k])
            why = (f"one tile: the kernel masks tl.arange(0, {c}) by < {p}, so {c} >= {p} "
                   f"({taken[case]} on {case})")
            if c not in out or out[c][0] < taken[case]:
                out[c] = (taken[case], why)
    for u in launch.uses:  # a literal block a host guard bounds: its largest bound over the cases
        for floor in _guard_floors(launch, u, occurrence, runtime).values():
            if u.param not in out or out[u.param][0] < floor[0]:
                out[u.param] = floor
    return out


def _cover(t: Tunable, group: list[Use], floors: dict[int, dict[str, tuple[int, str]]]) -> Tunable:
    """A block that must cover its launch's argument keeps only values that do. Where the
    value runs below the bound on some case, the kernel means otherwise: no bound is kept."""
    bounds = [b for u in group if (b := floors.get(u.launch, {}).get(u.param))]
    if not bounds or not t.free or t.kind != "constexpr":
        return t
    low, why = max(bounds)
    ran = set(t.per_case.values()) or {t.current}
    if len(ran) != 1 or not all(isinstance(v, int) and v >= low for v in ran):
        return t
    t.legal = tuple(v for v in t.legal if v >= low)
    t.relations = t.relations + (why,)
    return t


def _work_splits(module: SourceModule, launch: Launch) -> frozenset[str]:
    """Constexprs of `launch` that shape no tensor but split its work over the programs: a loop
    of the kernel runs to them or steps by them (rows per program, a persistent grid's program
    count), and the grid reads them too, by meta key or through the name the launch passes.
    Moving one moves the grid with it, so no program's share is lost or done twice."""
    _, _, meta = grid_form(module, launch)
    names = {n.id for n in ast.walk(grid_expr(module, launch)[0]) if isinstance(n, ast.Name)}
    loops = {p for p, roles in launch.facts.roles.items() if roles & SPLIT_ROLES and not roles & TILE_ROLES}
    by_name = {u.param for u in launch.uses if u.kind == "constexpr" and u.param in loops
               and isinstance(u.expr, ast.Name) and u.expr.id in names}
    return frozenset(launch.facts.work_splits(meta) | by_name)


def _not_free(first: Use, kinds: set[str], group: list[Use], launches: list[Launch], split: bool = False) -> str | None:
    r = first.resolved
    if len(kinds) > 1:
        return f"one value feeds {' and '.join(sorted(kinds))}: not tuned"
    if r.kind == "configs":
        return None
    if r.kind not in ("literal", "insert", "replayed"):
        return r.where
    values = set(first.replayed.per_case.values()) if first.replayed else {r.value}
    if first.kind != "constexpr":
        legal = WARPS if first.kind == "num_warps" else STAGES
        bad = sorted(v for v in values if v not in legal)
        return f"{bad[0]} is not a legal {first.kind}" if bad else None
    roles = [launches[u.launch].facts.roles.get(u.param, frozenset()) for u in group]
    if all(role and role <= LOOP_HINT_ROLES for role in roles):  # how a loop compiles: any legal value
        bad = sorted(v for v in values if not isinstance(v, int) or v not in _legal("constexpr", 0, roles[0]))
        return f"{bad[0]} is not a legal {' or '.join(sorted(roles[0]))} value: {r.where}" if bad else None
    for u, role in zip(group, roles) if not split else ():
        if not role & TILE_ROLES:
            return f"{u.kernel}.{u.param} shapes no tensor (may carry meaning): {r.where}"
    bad = sorted(v for v in values if not is_pow2(v))
    if bad:
        return f"{bad[0]} is not a power of two: {r.where}"
    return None


def _legal(kind: str, current: Any, roles: frozenset[str] = frozenset()) -> tuple[int, ...]:
    if kind == "num_warps":
        return WARPS
    if kind == "num_stages":
        return STAGES
    if kind == "constexpr" and roles and roles <= LOOP_HINT_ROLES:
        return tuple(sorted(set(STAGES if "loop_stages" in roles else UNROLLS) | {current} - {0}))
    if kind == "constexpr":
        # A tl.dot dimension needs 16; any other tile may shrink to one row (a 1 x 1024 tile
        # streams a row at full width where 8 x 8 tiles do not).
        low = BLOCK_MIN if roles & DOT_ROLES else 1
        values = {1 << p for p in range(low.bit_length() - 1, BLOCK_MAX.bit_length())}
        return tuple(sorted(values | {current}))
    return ()


def _relations(kind: str, roles: frozenset[str], group: list[Use]) -> tuple[str, ...]:
    out = []
    if kind == "constexpr":
        if "arange" in roles:
            out.append("tl.arange size: a power of two")
        if roles & DOT_ROLES:
            out.append(f"tl.dot dimension: >= {DOT_MIN}")
        if "loop_step" in roles:
            out.append("loop step: the loop count follows it")
        if "loop_stages" in roles:
            out.append("tl.range num_stages: how deep one loop's loads are pipelined, not what it computes")
        if "loop_unroll" in roles:
            out.append("tl.range loop_unroll_factor: how often one loop is unrolled, not what it computes")
    if kind == "num_warps":
        out.append("threads per program = 32 * num_warps")
    if kind == "num_stages":
        out.append("software-pipelined loads: shared memory grows with num_stages")
    if kind == "autotune_configs":
        keys = sorted({k for u in group for c in (u.configs or ()) for k, _ in c.kwargs})
        out.append(f"each config sets {', '.join(keys) or 'only warps/stages'}; the grid must read them from meta")
    return tuple(out)


def _site(module: SourceModule, launch: Launch, index: int, uses: list[Use], tunable_of: dict[int, Tunable]) -> LaunchSite:
    by_param = {u.param: tunable_of[i] for i, u in enumerate(uses) if u.launch == index and not _is_branch(u)}
    branches = [tunable_of[i] for i, u in enumerate(uses) if u.launch == index and _is_branch(u)]
    _set_pairs(launch.facts, by_param)
    kind, resolved, meta = grid_form(module, launch)
    scope = launch.scope
    return LaunchSite(
        kernel=launch.facts.name,
        line=launch.call.lineno,
        function=scope.chain[-1] if scope.fn else "",
        via=scope.chain,
        grid=module.text(launch.grid),
        grid_kind=kind,
        grid_resolved=resolved,
        grid_meta=meta,
        args=launch.args,
        bindings={p: t.id for p, t in by_param.items()},
        tunables=list({t.id: t for t in [*by_param.values(), *branches]}.values()),
        facts=launch.facts,
        guards=launch_guards(scope.fn, launch.args),
    )


def _is_branch(u: Use) -> bool:
    return u.replayed is not None and u.replayed.aim is not None


def _set_pairs(facts: KernelFacts, by_param: dict[str, Tunable]) -> None:
    for tile in facts.tiles:
        for a in tile:
            for b in tile:
                ta, tb = by_param.get(a), by_param.get(b)
                if ta is not None and tb is not None and ta is not tb and tb.id not in ta.pairs:
                    ta.pairs = ta.pairs + (tb.id,)
                    ta.relations = ta.relations + (f"2D tile with {tb.id}: product <= {MAX_TENSOR_NUMEL}",)
