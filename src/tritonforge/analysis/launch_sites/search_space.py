"""Every launch reachable from a problem's entry, gathered into one search space."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from tritonforge.analysis.kernel_source import EntryFunction, entry_function
from tritonforge.analysis.launch_sites.launches import collect_launches
from tritonforge.analysis.launch_sites.model import LaunchSite, Span, Tunable
from tritonforge.analysis.launch_sites.resolve import Scope, SourceModule
from tritonforge.analysis.launch_sites.runtime import Runtime, Unreachable, replay_value, solve
from tritonforge.analysis.launch_sites.syntax import defaults_of, span_of
from tritonforge.analysis.launch_sites.tunables import build_sites
from tritonforge.domain.candidate import source_key


@dataclass
class SearchSpace:
    """The tunables of all launch sites, each once, in first-use order."""

    sites: list[LaunchSite]
    source: str = ""
    module: SourceModule | None = field(default=None, repr=False)
    runtime: Runtime | None = field(default=None, repr=False)
    by_id: dict[str, Tunable] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {}
        for site in self.sites:
            for t in site.tunables:
                self.by_id.setdefault(t.id, t)

    @property
    def tunables(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if t.free]

    @property
    def fixed(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if not t.free]

    @property
    def current(self) -> dict[str, Any]:
        return {t.id: t.current for t in self.tunables}

    def get(self, tid: str) -> Tunable:
        return self.by_id[tid]

    def unreached(self, launched: Iterable[str] = ()) -> dict[str, str]:
        """Kernels launched at run time (`launched`, or as the captured runtime saw them) with no
        launch site here, and why: the search can move only what it finds written in this file."""
        seen = set(launched) | {launch.kernel for launches in (self.runtime.cases.values() if self.runtime else ())
                                for launch in launches}
        tree = self.module.tree if self.module is not None else ast.Module([], [])
        imported, made, run_calls = _imported_names(tree), _made_by(tree), _run_calls(tree)
        out = {}
        for kernel in sorted(seen - {site.kernel for site in self.sites}):
            if kernel in imported:
                out[kernel] = f"imported from {imported[kernel]}: only kernels defined in the problem file are analysed"
            elif kernel in made:
                fn, times = made[kernel]
                out[kernel] = (f"defined {times} times inside {fn}(), which picks one at run time: neither is "
                               "analysed" if times > 1 else
                               f"defined inside {fn}(), which does not return it as the one kernel it makes: "
                               "it is not analysed")
            elif kernel in run_calls:
                out[kernel] = (f"launched as {run_calls[kernel]}(...), a form launch analysis does not read "
                               f"(`{kernel}[grid](...)` it does)")
            elif kernel not in (self.module.kernels if self.module else {}) and \
                    (decorated := _unread_decorator(tree, kernel)):
                out[kernel] = (f"defined here under @{decorated}, which analysis does not read as @triton.jit: "
                               "its launches are not analysed")
            else:
                out[kernel] = "launched at run time, but no launch of it was traced from the entry"
        return out

    def label(self, tid: str) -> str:
        """Short name for descriptions: the parameter name unless two tunables share it."""
        t = self.by_id[tid]
        same = [u for u in self.tunables if u.name == t.name]
        return t.name if len(same) <= 1 else tid

    def literal_edits(self, changes: dict[str, Any]) -> list[tuple[Span, str]]:
        """Edits of the literals that computed values read, for `changes` of any tunables:
        computed values in `changes` reach their targets on the dominant case, the others keep
        their values. Raises `runtime.Unreachable` when no such edits exist."""
        # Fixed computed values too (`VEC = 16 // x.element_size()` beside `BLOCK = VEC * 32 * w`):
        # a move of another value may not change them.
        replayed = {t.id: t.replayed for t in self.by_id.values() if t.replayed is not None}
        if not replayed or self.module is None or self.runtime is None:
            return []
        module, fixed, locked = self.module, {}, set()
        for t in self.tunables:
            for loc in t.locations:
                node = module.constant_at(loc.key) if loc.insert is None else None
                if node is None:
                    continue
                locked.add(id(node))
                if t.id in changes and changes[t.id] != t.current:
                    fixed[id(node)] = changes[t.id] + loc.delta
        targets = {tid: v for tid, v in changes.items() if tid in replayed}
        # A fixed value that reads a literal this move edits follows it (`BLOCK2 = next_power_of_2(
        # cdiv(n, BLOCK))` as BLOCK moves): it is not held. A free one is: it has moves of its own.
        held = {tid: v for tid, v in replayed.items()
                if self.by_id[tid].free or not {id(k) for k in v.knobs} & fixed.keys()}
        try:
            edits = solve(module.tree, self.runtime, held, targets, fixed, frozenset(locked))
        except Unreachable:
            # No edit keeps the values that read the literals a computed target reads (`NUM_CHUNKS =
            # cdiv(n, BLOCK)` as BLOCK's cap moves, a warps ladder on that block): they follow the
            # move, as the host code computes them.
            moving = set(fixed) | {id(k) for tid in targets for k in replayed[tid].knobs}
            released = {tid for tid, v in held.items() if tid not in targets and {id(k) for k in v.knobs} & moving}
            edits = solve(module.tree, self.runtime, {t: v for t, v in held.items() if t not in released},
                          targets, fixed, frozenset(locked))
            for tid in released:  # a follower the host code can no longer compute (a table lacking the key)
                if replay_value(module.tree, self.runtime, replayed[tid], "", edits, verify=False)[1]:
                    raise Unreachable(f"{tid}: not computable once the literals move")
        nodes = {id(n): n for n in ast.walk(module.tree) if isinstance(n, ast.Constant)}
        columns = {k: c for v in replayed.values() for k, c in v.columns.items()}
        return [(span_of(c), self._literal_text(c, v)) for k, v in edits.items() if k not in fixed
                for c in columns.get(k, (nodes[k],))]

    def _literal_text(self, node: ast.Constant, value: int) -> str:
        if not isinstance(node.value, str):
            return str(value)
        # A string of digits stays one, quoted as written (`os.environ.get("LIB_BLOCK", "1024")`).
        written = ast.get_source_segment(self.source, node) or repr(node.value)
        return written.replace(node.value, str(value), 1)

    @staticmethod
    def from_source(source: str, entry: str, runtime: Runtime | None = None) -> "SearchSpace":
        """`runtime`: launches captured per case, which make computed values tunable."""
        module = SourceModule(source)
        sites, matched = _discover(source, entry, runtime, module)
        return SearchSpace(sites, source, module, matched)


def _unread_decorator(tree: ast.Module, kernel: str) -> str:
    """The decorator of the file's function `kernel` (`functools.partial(triton.jit, ...)`),
    which made it a kernel at run time but not to launch analysis; "" when there is none."""
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    return ast.unparse(fn.decorator_list[0]) if fn is not None and fn.decorator_list else ""


def find_launch_sites(source: str, entry: str, runtime: Runtime | None = None,
                      module: SourceModule | None = None) -> list[LaunchSite]:
    """Every Triton launch reachable from `entry`, with the values that shape it.

    Raises SyntaxError for a file that does not parse, ValueError when `entry` is not a
    top-level function of it.
    """
    return _discover(source, entry, runtime, module or SourceModule(source))[0]


def _discover(source: str, entry: str, runtime: Runtime | None, module: SourceModule
              ) -> tuple[list[LaunchSite], Runtime | None]:
    """The launch sites, and `runtime` with its launches matched to them by line where it was
    captured from this very file (the lines of another are not these)."""
    found = entry_function(module.tree, entry) if entry not in module.kernels else None
    if found is None:
        raise ValueError(f"no plain top-level function named {entry!r}")
    made = module.instance_of(ast.Name(found.instance, ast.Load()), module.module_scope()) if found.instance else None
    scope = Scope(found.fn, _left_to_defaults(module, found, runtime), (entry,), found.owner, made)
    verify = runtime is not None and runtime.source_key in ("", source_key(source))
    launches = list(collect_launches(module, scope, runtime if verify else None))
    if runtime is not None and verify:
        runtime = runtime.at_sites([(launch.facts.name, launch.call.lineno, launch.scope.calls) for launch in launches])
    return build_sites(module, launches, runtime, verify), runtime


def _left_to_defaults(module: SourceModule, found: EntryFunction, runtime: Runtime | None
                      ) -> dict[str, tuple[ast.expr, Scope]]:
    """The entry's parameters no case passes, bound to their defaults (`def softplus(x,
    block=512)` called as `softplus(x)`): a default every caller gets is a setting of the file.
    A parameter some case passes is the caller's, and stays where it is."""
    args = found.fn.args
    given = _partial_given(found, module)
    if runtime is None or runtime.passed is None:
        return given
    positional = [p.arg for p in [*args.posonlyargs, *args.args]][found.skip:]
    left = set(positional[runtime.passed:]) | {p.arg for p in args.kwonlyargs}
    return {name: (default, module.module_scope()) for name, default in defaults_of(found.fn).items()
            if name in left and name not in given} | given


def _partial_given(found: EntryFunction, module: SourceModule) -> dict[str, tuple[ast.expr, Scope]]:
    """What an entry made by `functools.partial(fn, ...)` binds: its positional arguments and
    keywords, read at module level where the partial is made."""
    if found.partial is None:
        return {}
    names = [p.arg for p in [*found.fn.args.posonlyargs, *found.fn.args.args]]
    given = dict(zip(names, found.partial.args[1:])) | {k.arg: k.value for k in found.partial.keywords if k.arg}
    return {name: (value, module.module_scope()) for name, value in given.items()}


def entry_of(source: str) -> str | None:
    """The module-level `ENTRY = "name"` of a problem file, if it has one."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRY" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Names the file imports with `from M import name`, and M."""
    return {(a.asname or a.name): "." * node.level + (node.module or "") for node in tree.body
            if isinstance(node, ast.ImportFrom) for a in node.names}


def _run_calls(tree: ast.Module) -> dict[str, str]:
    """Kernels launched through Triton's lower-level calls (`k.run(..., grid=grid)`,
    `k.__getitem__(grid)(...)`), and the call as written."""
    return {n.func.value.id: f"{n.func.value.id}.{n.func.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
            and n.func.attr in ("run", "__getitem__")}


def _made_by(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """Functions defined inside a top-level function (a kernel factory's): that function, and
    how many times it defines the name."""
    out: dict[str, tuple[str, int]] = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            names = Counter(n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn)
            out.update({name: (fn.name, times) for name, times in names.items()})
    return out
