"""How replay walks host code's statements: frames of names, bindings evaluated only when
read (`Thunk`), `if`/`match` control flow and the literals that choose a branch, and the lazy
values replay hands around (a dict display, a helper function). Expressions are `replay`'s."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tritonforge.analysis.astfold import last_name, params_of
from tritonforge.analysis.launch_sites.replay_values import UNKNOWN, ClassValue, Instance, Items, Record, same_key
from tritonforge.analysis.launch_sites.syntax import defaults_of, dict_setdefault, dict_update, item_columns, walk_local

if TYPE_CHECKING:
    from tritonforge.analysis.launch_sites.replay import Replay


@dataclass
class Frame:
    """Names in one function call: each bound to a `Thunk` (replayed from the body) or to a
    captured value (seen at the launch)."""

    fn: ast.FunctionDef | ast.Lambda | None  # None: module level
    values: dict[str, Any] = field(default_factory=dict)
    captured: dict[str, Any] = field(default_factory=dict)  # locals seen at the launch (runtime_value form)


@dataclass
class Thunk:
    """A name's binding, evaluated only when read, so that the literals it reads are charged
    to the value that needs them; `control` holds the literals of the `if` tests that chose it."""

    expr: ast.expr
    frame: Frame  # the names visible where it was bound
    control: tuple[ast.Constant, ...] = ()
    path: tuple[int, ...] = ()  # indexes into the value: (1,) for `b` of `a, b = x.shape`, (0, 1) for
    # `n` of `(m, n), w = pick()`


# Function name -> parameter -> (the argument its caller passes, the caller), on the way from
# the entry to a launch.
Given = dict[str, dict[str, tuple[ast.expr, ast.FunctionDef]]]


class StatementReplay:
    """The statement half of `Replay`: frames, bindings and control flow."""

    tree: ast.Module
    captured: dict[str, dict[str, Any]]
    reads: list[ast.Constant]
    classes: dict[str, ast.ClassDef]
    _module: Frame | None
    _once: dict[tuple[int, str], bool]
    _broke = False  # a `break` was replayed: the loop it ends stops there

    def eval(self, node: ast.expr, frame: Frame) -> Any:  # the expression half (`Replay.eval`)
        raise NotImplementedError

    def module_frame(self) -> Frame:
        if self._module is None:
            self._module = Frame(None)
            self._statements(self.tree.body, self._module, None, ())
        return self._module

    def function_frame(self, fn: ast.FunctionDef, stop_line: int | None,
                       args: dict[str, Any] | None = None, defaulted: frozenset[str] = frozenset(),
                       given: Given | None = None) -> Frame:
        """`fn`'s names as they stand just before line `stop_line`, with its parameters from
        `args` (a helper called by replayed code) or the captured locals (the launching call);
        `defaulted`: parameters its caller leaves at their defaults; `given`: what the callers
        on the way from the entry pass, read where a captured parameter is an object the
        capture cannot show (a config record built by the caller)."""
        frame = Frame(fn, captured=self.captured.get(fn.name, {}))
        # A parameter the body assigns again (`block = block or 64`) was captured after that:
        # one the caller leaves out starts from its default instead.
        # (Most replays have no such parameter: the body is walked only for those that may.)
        assigned = {t.id for n in walk_local(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Name)} if defaulted else set()
        defaults = defaults_of(fn)
        for p in params_of(fn):
            if args is not None and p.arg in args:
                frame.values[p.arg] = args[p.arg]
            elif p.arg in assigned & defaulted and p.arg in defaults:
                frame.values[p.arg] = self.eval(defaults[p.arg], self.module_frame())
            elif p.arg in frame.captured:
                frame.values[p.arg] = frame.captured[p.arg]
            if frame.values.get(p.arg, UNKNOWN) is UNKNOWN and p.arg in (given or {}).get(fn.name, {}):
                expr, caller = given[fn.name][p.arg]  # type: ignore[index]
                frame.values[p.arg] = Thunk(expr, self.function_frame(caller, expr.lineno, given=given))
        kw = fn.args.kwarg
        if kw is not None and args is None and kw.arg in (given or {}).get(fn.name, {}) and _popped(fn, kw.arg):
            # `BLOCK = kwargs.pop("BLOCK", 128)`: the captured `kwargs` is what the pops left.
            expr, caller = given[fn.name][kw.arg]  # type: ignore[index]
            frame.values[kw.arg] = Thunk(expr, self.function_frame(caller, expr.lineno, given=given))
        self._bind_self(fn, frame)
        self._statements(fn.body, frame, stop_line, ())
        return frame

    def _bind_self(self, fn: ast.FunctionDef, frame: Frame) -> None:
        """A method's `self` (`cls`), an object the capture cannot show, reads the attributes its
        class body writes (`self._CONFIGS[x.dtype]`)."""
        owner = next((c for c in self.classes.values() if fn in c.body), None)
        params = params_of(fn)
        marks = {last_name(d) for d in fn.decorator_list}
        if owner is None or not params or frame.values.get(params[0].arg, UNKNOWN) is not UNKNOWN:
            return
        first = params[0].arg
        if "staticmethod" not in marks:
            frame.values[first] = ClassValue(owner) if "classmethod" in marks else self._module_instance(owner)
        elif fn.name == "backward":
            frame.values[first] = self._saved_context(owner)

    def _saved_context(self, owner: ast.ClassDef) -> Any:
        """An autograd Function's `ctx` as its `backward` sees it: the attributes `forward` set
        (`ctx.BLOCK_SIZE = BLOCK_SIZE`), forward replayed on the locals its own launch captured."""
        forward = next((n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
        params = params_of(forward) if forward is not None else []
        if forward is None or not params:
            return UNKNOWN
        ctx = Instance(ClassValue(owner))
        self.function_frame(forward, None, args={params[0].arg: ctx})
        return ctx

    def _module_instance(self, owner: ast.ClassDef) -> Any:
        """The one instance of `owner` the module makes (`bias_tanh = BiasTanh()`, an entry),
        as replay makes it; the class itself where there is not exactly one."""
        made = [s for s in self.tree.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name) and s.value.func.id == owner.name]
        if len(made) == 1 and len(made[0].targets) == 1 and isinstance(made[0].targets[0], ast.Name):
            mark = len(self.reads)
            got = self.name(made[0].targets[0].id, self.module_frame())
            if isinstance(got, Instance):
                got.made_reads = tuple(self.reads[mark:])  # the 128 of `Op(block_size=128)`
                return got
        return ClassValue(owner)

    def _statements(self, body: list[ast.stmt], frame: Frame, stop_line: int | None,
                    control: tuple[ast.Constant, ...]) -> bool:
        """Replay statements in order; False once a `return` or the stop line is reached."""
        for s in body:
            if stop_line is not None and s.lineno >= stop_line and not contains_line(s, stop_line):
                return False
            if not hasattr(s, "body"):  # `f((BLOCK := ...))`, the launch's line included
                self._walrus(s, frame, control)
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                for t in targets:
                    self._bind(t, s.value, frame, control)
            elif isinstance(s, ast.Expr) and (update := dict_update(s)) is not None \
                    and isinstance(table := self.force(frame.values.get(update[0])), LazyDict):
                for key, value in update[1]:  # `kwargs.update(num_warps=2)`: items added in order
                    table = table.with_item(key, value, copy_frame(frame))
                frame.values[update[0]] = table
            elif isinstance(s, ast.Expr) and (default := dict_setdefault(s)) is not None \
                    and isinstance(table := self.force(frame.values.get(default[0])), LazyDict):
                had = table.lookup(self.eval(default[1], frame))  # `kwargs.setdefault("num_warps", 4)`
                frame.values[default[0]] = UNKNOWN if had is UNKNOWN else \
                    table.with_item(default[1], default[2], copy_frame(frame)) if had is MISSING else table
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                self._bind(s.target, ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value), frame, control)
            elif isinstance(s, ast.If):
                saved = self.reads
                self.reads = []
                test = self.eval(s.test, frame)
                chosen, self.reads = tuple(self.reads), saved
                if test is UNKNOWN:
                    told = self._branch_by_capture(s, frame)
                    if told is None:
                        self._forget(s, frame)
                    elif not self._statements(told, frame, stop_line, control):
                        return False
                elif not self._statements(s.body if test else s.orelse, frame, stop_line, control + chosen):
                    return False
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                if not self._statements(s.body, frame, stop_line, control):
                    return False
            elif isinstance(s, ast.Match):
                taken = self._match(s, frame)
                if taken is None:
                    self._forget(s, frame)
                elif taken[0] is not None and not self._statements(taken[0].body, frame, stop_line, control + taken[1]):
                    return False
            elif isinstance(s, ast.Return):
                if s.value is not None:
                    frame.values["<return>"] = Thunk(s.value, copy_frame(frame), control)
                return False
            elif isinstance(s, ast.Break):
                self._broke = True
                return False
            elif isinstance(s, ast.For) and (done := self._for(s, frame, stop_line, control)) is not None:
                if not done:
                    return False
            elif isinstance(s, ast.FunctionDef) and frame.fn is not None and not s.decorator_list:
                frame.values[s.name] = Helper(s, closure=frame)  # a helper's own helper, closing over it
            elif isinstance(s, (ast.For, ast.While, ast.AsyncFor, ast.Try, ast.Import, ast.ImportFrom,
                                ast.FunctionDef, ast.ClassDef)):
                self._forget(s, frame)  # loops, handlers, imports: their names come from the capture
            if stop_line is not None and contains_line(s, stop_line):
                return False
        return True

    def _for(self, loop: ast.For, frame: Frame, stop_line: int | None,
             control: tuple[ast.Constant, ...]) -> bool | None:
        """A search over a table the file writes (`for max_n, block, warps in _TABLE: if n <=
        max_n: break`), item by item, leaving the target bound to the item it stops at (the
        thresholds its tests read are not among the literals a move may edit), or a loop over
        work items with the launch inside (`_launching_loop`). None (not replayed) for anything
        else: another iterable, `continue`, an `else`. False once a `return` is reached."""
        items = self._table(loop.iter, frame)
        if items is None or loop.orelse or any(isinstance(n, ast.Continue) for n in ast.walk(loop)):
            return None
        if stop_line is not None and contains_line(loop, stop_line):
            return self._launching_loop(loop, items, frame, stop_line, control)
        saved, self.reads = self.reads, []
        try:
            for item in items:
                self._bind(loop.target, item, frame, control + tuple(self.reads))
                self._broke, went_on = False, self._statements(loop.body, frame, None, control + tuple(self.reads))
                if self._broke or not went_on:
                    break
            chose = tuple(self.reads)
        finally:
            self.reads = saved
        if items:  # the item it stopped at, bound again under what the loop itself read
            self._bind(loop.target, item, frame, control + chose)
        if self._broke:
            self._broke = False
            return True
        return went_on if items else True

    def _launching_loop(self, loop: ast.For, items: list[ast.expr], frame: Frame, stop_line: int,
                        control: tuple[ast.Constant, ...]) -> bool | None:
        """The launch inside a loop over work items, one launch per item: replayed as the
        first item's (the launch matched to it), where every item gives the same integers, whose
        columns an edit then moves together (`columns`). None where they differ."""
        columns = item_columns(items)
        if columns is None or any(isinstance(n, ast.Break) for n in ast.walk(loop)):
            return None
        self.columns.update(columns)
        self._bind(loop.target, items[0], frame, control)
        return self._statements(loop.body, frame, stop_line, control)

    def _table(self, node: ast.expr, frame: Frame) -> list[ast.expr] | None:
        """The items of a tuple or list display, written in place or bound once to a name."""
        if isinstance(node, ast.Name):
            bound = self.binding(node.id, frame)
            node = bound.expr if bound is not None else node
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) <= 64 \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            return list(node.elts)
        return None

    def binding(self, name: str, frame: Frame) -> Thunk | None:
        """The expression `name` is bound to (in `frame`, else at module level), unevaluated,
        where it is bound to one whole: not a part of an unpacking, not a captured value."""
        bound = frame.values[name] if name in frame.values else self.module_frame().values.get(name)
        return bound if isinstance(bound, Thunk) and not bound.path else None

    def _match(self, stmt: ast.Match, frame: Frame) -> tuple[ast.match_case | None, tuple[ast.Constant, ...]] | None:
        """The case a `match` takes (None in its place when none does) and the literals that
        chose it, as an `if` chain's tests; None when a pattern or guard cannot be replayed."""
        saved, self.reads = self.reads, []
        try:
            subject = self.eval(stmt.subject, frame)
            if subject is UNKNOWN:
                return None
            for case in stmt.cases:
                hit = self._pattern(case.pattern, subject, frame)
                if hit is not UNKNOWN and hit and case.guard is not None:
                    hit = self.eval(case.guard, frame)
                if hit is UNKNOWN:
                    return None
                if hit:
                    return case, tuple(self.reads)
            return None, tuple(self.reads)
        finally:
            self.reads = saved

    def _pattern(self, pattern: ast.pattern, subject: Any, frame: Frame) -> Any:
        """Whether `subject` matches: values, `_`, captures and `|` of them; UNKNOWN otherwise."""
        if isinstance(pattern, ast.MatchValue):
            value = self.eval(pattern.value, frame)
            return UNKNOWN if value is UNKNOWN else subject == value
        if isinstance(pattern, ast.MatchSingleton):
            return subject is pattern.value
        if isinstance(pattern, ast.MatchOr):
            hits = [self._pattern(p, subject, frame) for p in pattern.patterns]
            return UNKNOWN if UNKNOWN in hits else any(hits)
        if isinstance(pattern, ast.MatchAs):
            hit = True if pattern.pattern is None else self._pattern(pattern.pattern, subject, frame)
            if hit is True and pattern.name is not None:
                frame.values[pattern.name] = subject
            return hit
        return UNKNOWN

    def _bind(self, target: ast.expr, value: ast.expr, frame: Frame, control: tuple[ast.Constant, ...]) -> None:
        if isinstance(target, ast.Name):
            frame.values[target.id] = Thunk(value, copy_frame(frame), control)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target, value, copy_frame(frame), frame, control, ())
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and isinstance(owner := frame.values.get(target.value.id), Instance):
            owner.attrs[target.attr] = Thunk(value, copy_frame(frame), control)  # `self.block = ...`
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(table := self.force((holder := self._holder(target.value.id, frame)).values.get(
                    target.value.id)), LazyDict):
            holder.values[target.value.id] = table.with_item(target.slice, value, copy_frame(frame))
        else:
            self._forget_target(target, frame)

    def _holder(self, name: str, frame: Frame) -> Frame:
        """The frame whose `name` an item assignment writes into: the function's own, or the
        module's for a global it does not bind (`_CACHE[key] = ...` filling a module cache)."""
        return frame if name in frame.values or frame.fn is None else self.module_frame()

    def _unpack(self, target: ast.Tuple | ast.List, value: ast.expr, env: Frame, frame: Frame,
                control: tuple[ast.Constant, ...], path: tuple[int, ...]) -> None:
        """Each name of a (nested) unpacking bound to its part of `value`, all read in `env`,
        the names as they were before the statement (so `a, b = b, a` swaps)."""
        same = not path and isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
        for i, t in enumerate(target.elts):
            v, at = (value.elts[i], ()) if same else (value, path + (i,))  # type: ignore[attr-defined]
            if isinstance(t, ast.Name):
                frame.values[t.id] = Thunk(v, env, control, at)
            elif isinstance(t, (ast.Tuple, ast.List)):
                self._unpack(t, v, env, frame, control, at)
            else:
                self._forget_target(t, frame)

    def _walrus(self, stmt: ast.stmt, frame: Frame, control: tuple[ast.Constant, ...]) -> None:
        """Bind the names a simple statement's `:=` expressions set, outside lambdas."""
        stack: list[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                self._bind(node.target, node.value, frame, control)
            if not isinstance(node, ast.Lambda):
                stack.extend(ast.iter_child_nodes(node))

    def _branch_by_capture(self, s: ast.If, frame: Frame) -> list[ast.stmt] | None:
        """The branch of an `if` chain that replay cannot decide (a device query, fla's
        `if check_shared_mem("hopper", idx): CONST_TILING = 128 elif ...`), told by the values
        the launch's capture saw: the one branch whose own assignments give every name it
        sets that was captured its captured value. None where no branch, or several, fit."""
        bodies, node = [], s
        while True:
            saved, self.reads = self.reads, []
            test = self.eval(node.test, frame)
            self.reads = saved
            if test is UNKNOWN or test:
                bodies.append(node.body)
            if test is not UNKNOWN and test:
                break
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                continue
            bodies.append(node.orelse)
            break
        fits = [b for b in bodies if self._fits_capture(b, frame)]
        return fits[0] if len(fits) == 1 else None

    def _fits_capture(self, body: list[ast.stmt], frame: Frame) -> bool:
        names = [t.id for st in body if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None
                 for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)]
        names = [n for n in names if n in frame.captured]
        if not names:
            return False
        # As the file ran, the literals unedited: a move of the branch's own literal must not
        # make it look untaken.
        trial, saved, edits, self.reads, self.edits = copy_frame(frame), self.reads, self.edits, [], {}
        try:
            self._statements(body, trial, None, ())
            got = [self.force(trial.values.get(n, UNKNOWN)) for n in names]
        finally:
            self.reads, self.edits = saved, edits
        return all(g is not UNKNOWN and type(g) is type(frame.captured[n]) and g == frame.captured[n]
                   for g, n in zip(got, names))

    def _forget(self, stmt: ast.stmt, frame: Frame) -> None:
        # A def or class binds its name only: the names its body sets are not this frame's.
        inside = () if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ast.walk(stmt)
        for n in inside:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                frame.values[n.id] = frame.captured.get(n.id, UNKNOWN)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                    and isinstance(owner := frame.values.get(n.value.id), Instance):
                owner.attrs[n.attr] = UNKNOWN  # `self.block = ...` in a branch or loop replay did not take
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
            names = [stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) else \
                [(a.asname or a.name).split(".")[0] for a in stmt.names]
            for name in names:
                frame.values.pop(name, None)  # resolved by name (modules, helpers) when read

    def _forget_target(self, target: ast.expr, frame: Frame) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                frame.values[n.id] = frame.captured.get(n.id, UNKNOWN)

    def force(self, value: Any) -> Any:
        """A name's value: a thunk is evaluated now, its literals charged to the caller."""
        if not isinstance(value, Thunk):
            return value
        self.reads.extend(value.control)
        start = len(self.reads)
        got = self.eval(value.expr, value.frame)
        for i in value.path:
            self.keep_item(start, got, i)
            got = got[i] if isinstance(got, (tuple, list)) and i < len(got) else UNKNOWN
        return got

    def keep_item(self, start: int, got: Any, i: Any) -> None:
        """Of the literals read since `start`, drop those only the other items of the written-out
        tuple `got` read: `BLOCK, warps = settings(n)` charges the warp ladder to warps alone."""
        if not isinstance(got, Items) or not isinstance(i, int) or not -len(got) <= i < len(got):
            return
        drop = Counter(id(c) for j, part in enumerate(got.parts) if j != i % len(got) for c in part)
        kept = []
        for c in self.reads[start:]:
            if drop[id(c)]:
                drop[id(c)] -= 1
            else:
                kept.append(c)
        self.reads[start:] = kept

    def _bound_once(self, fn: ast.FunctionDef | ast.Lambda | None, name: str) -> bool:
        if not isinstance(fn, ast.FunctionDef):
            return False
        key = (id(fn), name)
        if key not in self._once:
            stores = sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                         for n in walk_local(fn))
            self._once[key] = stores + (name in {p.arg for p in params_of(fn)}) <= 1
        return self._once[key]


MISSING = object()  # a key a table does not have


class LazyDict:
    """A dict literal whose values are evaluated only when looked up, so that a lookup reads
    the literals of the entry it selects and no others."""

    def __init__(self, replay: Replay, node: ast.Dict, frame: Frame, namespace: bool = False) -> None:
        self.replay = replay
        self.entries = [(k, v, frame) for k, v in zip(node.keys, node.values)]  # each read in its frame
        self.namespace = namespace  # a `types.SimpleNamespace(...)`, read by attribute
        self.default: Helper | None = None  # a defaultdict's factory

    def with_default(self, factory: Helper) -> "LazyDict":
        out = self.with_entries([])
        out.default = factory
        return out

    def with_entries(self, more: list[tuple[ast.expr | None, ast.expr, Frame]]) -> "LazyDict":
        out = LazyDict(self.replay, ast.Dict([], []), self.entries[0][2] if self.entries else None, self.namespace)
        out.entries, out.default = [*self.entries, *more], self.default
        return out

    def with_fields(self, record: Record) -> "LazyDict":
        """`dataclasses.asdict(cfg)`: the record's fields, each read where it was given."""
        self.entries = [(ast.Constant(name), expr, where) for name, (expr, where) in record.fields.items()]
        return self

    def with_item(self, key: ast.expr, value: ast.expr, frame: Frame) -> "LazyDict":
        """The dict after `d[key] = value` (a table filled at import time)."""
        return self.with_entries([(key, value, frame)])

    def listing(self, kind: str) -> Any:
        """`.items()`, `.keys()` or `.values()` of a table every key of which the file writes."""
        table: dict[str, tuple[Any, Any]] = {}
        for k, v, frame in self.entries:
            key = self.replay.eval(k, frame) if k is not None else UNKNOWN
            if key is UNKNOWN:
                return UNKNOWN
            table[repr(key)] = (key, self.replay.eval(v, frame))
        pairs = list(table.values())
        return tuple(pairs if kind == "items" else [p[0] if kind == "keys" else p[1] for p in pairs])

    def get(self, key: Any) -> Any:
        got = self.lookup(key)
        if got is MISSING:
            return self.default.call(self.replay, [], {}) if self.default is not None else UNKNOWN
        return got

    def lookup(self, key: Any) -> Any:
        """The value of `key`, MISSING where the table does not have it, UNKNOWN where replay
        cannot tell."""
        found = self.entry(key)
        return found if found is MISSING or found is UNKNOWN else self.replay.eval(*found)

    def entry(self, key: Any) -> Any:
        """(the expression, its frame) the table gives `key`, unevaluated; MISSING or UNKNOWN."""
        for k, v, frame in reversed(self.entries):  # the last write of a key wins
            if k is None:  # `{**_BASE, **_OVERRIDES.get(dtype, {})}`: the spread dict's own
                inner = self.replay.eval(v, frame)
                got = inner.entry(key) if isinstance(inner, LazyDict) else UNKNOWN
                if got is not MISSING:
                    return got
                continue
            mark = len(self.replay.reads)
            written = self.replay.eval(k, frame)
            del self.replay.reads[mark:]  # a key is compared, not set: editing it would only rename the row
            if written is not UNKNOWN and same_key(written, key):
                return v, frame
        return MISSING


class Helper:
    """A plain function of the file (or a lambda) that replayed code calls."""

    def __init__(self, fn: ast.FunctionDef | ast.Lambda, closure: Frame | None = None, bound: tuple = ()) -> None:
        self.fn, self.closure = fn, closure
        self.bound = bound  # leading arguments already given: a class method's class

    def call(self, replay: Replay, args: list[Any], kwargs: dict[str, Any]) -> Any:
        args = [*self.bound, *args]
        names = [p.arg for p in params_of(self.fn)]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        a = self.fn.args
        if a.vararg is not None:  # `def launch(*args)`: what the positional names leave over
            bound[a.vararg.arg] = tuple(args[len(a.posonlyargs) + len(a.args):])  # thunks stay unread
        if a.kwarg is not None:  # `def __init__(self, **kw)`: the keywords no parameter names
            bound[a.kwarg.arg] = {k: v for k, v in kwargs.items() if k not in names}
        if isinstance(self.fn, ast.Lambda):
            outer = self.closure.values if self.closure else {}
            return replay.eval(self.fn.body, Frame(self.fn, values={**outer, **bound}))
        for name, default in defaults_of(self.fn).items():
            if name not in bound:  # read where it is used, so its literals go to what reads it
                bound[name] = Thunk(default, replay.module_frame())
        frame = Frame(self.fn, values={**(self.closure.values if self.closure else {}), **bound})
        replay._statements(self.fn.body, frame, None, ())
        return replay.force(frame.values.get("<return>", UNKNOWN))


def copy_frame(frame: Frame) -> Frame:
    return Frame(frame.fn, dict(frame.values), frame.captured)


def contains_line(s: ast.stmt, line: int) -> bool:
    return s.lineno <= line <= (s.end_lineno or s.lineno)


def _popped(fn: ast.FunctionDef, name: str) -> bool:
    """Whether `fn`'s body calls `name.pop(...)`."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop"
               and isinstance(n.func.value, ast.Name) and n.func.value.id == name for n in walk_local(fn))
