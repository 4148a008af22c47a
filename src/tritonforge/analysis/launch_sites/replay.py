"""Replay the host code that computes a launch value, on one case's captured runtime values.

A launch value that is not a literal (`min(triton.next_power_of_2(n_cols), 1024)`,
`cfg["BLOCK_M"]` with `cfg = CONFIGS[x.dtype]`, `4 if BLOCK < 2048 else 8`, a helper's
return value, a `@triton.heuristics` lambda) is still a function of the file's integer
literals once the runtime inputs are known. `Replay` evaluates such an expression the way
Python would, reading names from the function body (assignments and `if` chains, replayed
in order) and, where the body does not say, from the locals captured at the launch. It
records which integer literals the value read, so a rewrite can change exactly those.

Only side-effect-free host code is understood: arithmetic, comparisons, conditionals and
`match`, `min`/`max`/`abs`/`int`, `triton.next_power_of_2`/`cdiv`, `math`, dict/list/tuple
literals and subscripts, tensor `.shape`/`.dtype`/`.numel()`/`.stride()`, enum members,
environment variables, CUDA's availability and capability, and calls of plain helper
functions of the same file (`replay_values` holds the values and functions). Anything else is
`UNKNOWN`, never a guess.
"""

from __future__ import annotations

import ast
import operator
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from tritonforge.analysis.launch_sites.replay_values import (
    BINOPS, COMPARE, DEVICE_QUERIES, ELEMENT_SIZE, FUNCTIONS, INT_METHODS, MAX_DEPTH, MODULES, TRITON_FUNCTIONS,
    UNKNOWN, ClassValue, Dotted, EnumClass, EnumMember, Record, TensorValue, device_query, last_part, literal_int,
    runtime_value, same_key)
from tritonforge.analysis.launch_sites.syntax import defaults_of, params_of, walk_local


@dataclass
class Frame:
    """Names in one function call: each bound to a `_Thunk` (replayed from the body) or to a
    captured value (seen at the launch)."""

    fn: ast.FunctionDef | ast.Lambda | None  # None: module level
    values: dict[str, Any] = field(default_factory=dict)
    captured: dict[str, Any] = field(default_factory=dict)  # locals seen at the launch (runtime_value form)


@dataclass
class _Thunk:
    """A name's binding, evaluated only when read, so that the literals it reads are charged
    to the value that needs them; `control` holds the literals of the `if` tests that chose it."""

    expr: ast.expr
    frame: Frame  # the names visible where it was bound
    control: tuple[ast.Constant, ...] = ()
    part: int | None = None  # index, for `a, b = x.shape`


class Replay:
    """Evaluate expressions of one source file on one case, with literals optionally replaced.

    `edits` maps id(ast.Constant) to the value that literal should have; `reads` collects
    the integer literals an evaluation depended on (reset it before each evaluation).
    """

    def __init__(self, tree: ast.Module, captured: dict[str, dict[str, Any]],
                 edits: dict[int, int] | None = None) -> None:
        self.tree = tree
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.enums = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)
                      and any(last_part(b).endswith("Enum") for b in n.bases)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and n.name not in self.enums}
        self.captured = captured  # function name -> its locals at the launch
        self.edits = edits or {}
        self.reads: list[ast.Constant] = []
        self._module: Frame | None = None
        self._depth = 0
        self._once: dict[tuple[int, str], bool] = {}

    def value_of(self, node: ast.expr, frame: Frame) -> tuple[Any, list[ast.Constant]]:
        """The value of `node` in `frame` and the integer literals it read, in order, once each."""
        self.reads = []
        value = self.eval(node, frame)
        return value, list({id(c): c for c in self.reads}.values())

    # --- frames -----------------------------------------------------------------------
    def module_frame(self) -> Frame:
        if self._module is None:
            self._module = Frame(None)
            self._statements(self.tree.body, self._module, None, ())
        return self._module

    def function_frame(self, fn: ast.FunctionDef, stop_line: int | None,
                       args: dict[str, Any] | None = None, defaulted: frozenset[str] = frozenset()) -> Frame:
        """`fn`'s names as they stand just before line `stop_line`, with its parameters from
        `args` (a helper called by replayed code) or the captured locals (the launching call);
        `defaulted`: parameters its caller leaves at their defaults."""
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
        self._statements(fn.body, frame, stop_line, ())
        return frame

    def _statements(self, body: list[ast.stmt], frame: Frame, stop_line: int | None,
                    control: tuple[ast.Constant, ...]) -> bool:
        """Replay statements in order; False once a `return` or the stop line is reached."""
        for s in body:
            if stop_line is not None and s.lineno >= stop_line and not _contains_line(s, stop_line):
                return False
            if not hasattr(s, "body"):  # `f((BLOCK := ...))`, the launch's line included
                self._walrus(s, frame, control)
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                for t in targets:
                    self._bind(t, s.value, frame, control)
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                self._bind(s.target, ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value), frame, control)
            elif isinstance(s, ast.If):
                saved = self.reads
                self.reads = []
                test = self.eval(s.test, frame)
                chosen, self.reads = tuple(self.reads), saved
                if test is UNKNOWN:
                    self._forget(s, frame)
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
                    frame.values["<return>"] = _Thunk(s.value, _copy(frame), control)
                return False
            elif isinstance(s, (ast.For, ast.While, ast.AsyncFor, ast.Try, ast.Import, ast.ImportFrom,
                                ast.FunctionDef, ast.ClassDef)):
                self._forget(s, frame)  # loops, handlers, imports: their names come from the capture
            if stop_line is not None and _contains_line(s, stop_line):
                return False
        return True

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

    def _bind(self, target: ast.expr, value: ast.expr, frame: Frame, control: tuple[ast.Constant, ...],
              part: int | None = None) -> None:
        if isinstance(target, ast.Name):
            frame.values[target.id] = _Thunk(value, _copy(frame), control, part)
        elif isinstance(target, (ast.Tuple, ast.List)) and part is None:
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                pairs = [(t, v, None) for t, v in zip(target.elts, value.elts)]
            else:
                pairs = [(t, value, i) for i, t in enumerate(target.elts)]
            env = _copy(frame)
            for t, v, i in pairs:
                if isinstance(t, ast.Name):
                    frame.values[t.id] = _Thunk(v, env, control, i)
                else:
                    self._forget_target(t, frame)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and part is None \
                and isinstance(table := self.force(frame.values.get(target.value.id)), _LazyDict):
            frame.values[target.value.id] = table.with_item(target.slice, value, _copy(frame))
        else:
            self._forget_target(target, frame)

    def _walrus(self, stmt: ast.stmt, frame: Frame, control: tuple[ast.Constant, ...]) -> None:
        """Bind the names a simple statement's `:=` expressions set, outside lambdas."""
        stack: list[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                self._bind(node.target, node.value, frame, control)
            if not isinstance(node, ast.Lambda):
                stack.extend(ast.iter_child_nodes(node))

    def _forget(self, stmt: ast.stmt, frame: Frame) -> None:
        # A def or class binds its name only: the names its body sets are not this frame's.
        inside = () if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ast.walk(stmt)
        for n in inside:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                frame.values[n.id] = frame.captured.get(n.id, UNKNOWN)
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
        if not isinstance(value, _Thunk):
            return value
        self.reads.extend(value.control)
        got = self.eval(value.expr, value.frame)
        if value.part is not None:
            got = got[value.part] if isinstance(got, tuple) and value.part < len(got) else UNKNOWN
        return got

    # --- expressions ------------------------------------------------------------------
    def name(self, name: str, frame: Frame) -> Any:
        if name in frame.values:
            got = self.force(frame.values[name])
            if got is UNKNOWN and name in frame.captured and self._bound_once(frame.fn, name):
                # Host code replay cannot follow (`X = X.contiguous().view(-1, d)`): the
                # launch's own local holds the one value this name ever had there.
                return frame.captured[name]
            return got
        if name in frame.captured:
            return frame.captured[name]
        module = self.module_frame()
        if frame is not module and name in module.values:
            return self.force(module.values[name])
        if name in FUNCTIONS or name in MODULES:
            return Dotted(name)
        if name in TRITON_FUNCTIONS:  # from triton import next_power_of_2
            return Dotted(f"triton.{name}")
        if name in self.functions:
            return _Helper(self.functions[name])
        if name in self.enums:
            return EnumClass(self.enums[name])
        if name in self.classes:
            return ClassValue(self.classes[name])
        return UNKNOWN

    def _bound_once(self, fn: ast.FunctionDef | ast.Lambda | None, name: str) -> bool:
        if not isinstance(fn, ast.FunctionDef):
            return False
        key = (id(fn), name)
        if key not in self._once:
            stores = sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                         for n in walk_local(fn))
            self._once[key] = stores + (name in {p.arg for p in params_of(fn)}) <= 1
        return self._once[key]

    def eval(self, node: ast.expr, frame: Frame) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                return UNKNOWN
            return self._eval(node, frame)
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, RecursionError):
            return UNKNOWN
        finally:
            self._depth -= 1

    def _eval(self, node: ast.expr, frame: Frame) -> Any:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self.name(node.id, frame)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, frame)
        if isinstance(node, ast.BinOp):
            return self._apply(BINOPS.get(type(node.op)), self.eval(node.left, frame), self.eval(node.right, frame))
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand, frame)
            if v is UNKNOWN:
                return UNKNOWN
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[type(node.op)](v)
        if isinstance(node, ast.Compare):
            return self._compare(node, frame)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, frame)
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, frame)
            return UNKNOWN if test is UNKNOWN else self.eval(node.body if test else node.orelse, frame)
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.eval(e, frame) for e in node.elts)
        if isinstance(node, ast.Dict):
            return _LazyDict(self, node, frame)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, frame)
        if isinstance(node, ast.Call):
            return self._call(node, frame)
        if isinstance(node, ast.NamedExpr):
            return self.eval(node.value, frame)  # its name is bound by the statement (`_walrus`)
        if isinstance(node, ast.Lambda):
            return _Helper(node, frame)
        return UNKNOWN

    def _constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, int) and not isinstance(v, bool):
            self.reads.append(node)
            return self.edits.get(id(node), v)
        if literal_int(node) is not None:  # `int(os.environ.get("LIB_BLOCK", "512"))`: the default's digits
            self.reads.append(node)
            return str(self.edits[id(node)]) if id(node) in self.edits else v
        return v

    def _attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        base = self.eval(node.value, frame)
        if isinstance(base, Dotted):
            dotted = f"{base.name}.{node.attr}"
            if base.name == "torch" or dotted.startswith("torch."):
                return dotted  # torch.float16 and the like: compared by name
            return Dotted(dotted)
        if isinstance(base, TensorValue):
            return base.attr(node.attr)
        if isinstance(base, _LazyDict) and base.namespace:
            return base.get(node.attr)
        if isinstance(base, EnumClass):  # `Tile.LARGE`: an IntEnum's member is its value
            member = base.member(node.attr)
            if member is None:
                return UNKNOWN
            return self.eval(member, self.module_frame()) if base.is_int else EnumMember(base.node.name, node.attr, member)
        if isinstance(base, ClassValue):
            return self._class_attribute(base, node.attr)
        if isinstance(base, Record):
            if node.attr in base.fields:
                expr, where = base.fields[node.attr]
                return self.eval(expr, where)
            method = base.cls.method(node.attr)  # `cfg.block`, a property of the fields
            if method is None or method[1] not in ("property", "plain"):
                return UNKNOWN
            helper = _Helper(method[0], bound=(base,))
            return helper.call(self, [], {}) if method[1] == "property" else helper
        if isinstance(base, EnumMember) and node.attr == "value":
            return self.eval(base.value, self.module_frame())
        if base == "torch.cuda":  # torch.cuda.is_available and the like (see DEVICE_QUERIES)
            return f"torch.cuda.{node.attr}"
        if isinstance(base, str) and node.attr == "itemsize":
            return ELEMENT_SIZE.get(base.removeprefix("torch."), UNKNOWN)
        return UNKNOWN

    def _record(self, cls: ClassValue, call: ast.Call, frame: Frame) -> Any:
        """`LaunchConfig(vec=2, num_warps=2)`: each field's expression, given or defaulted."""
        fields = cls.fields() or []
        names = [name for name, _ in fields]
        given: dict[str, tuple[ast.expr, Any]] = dict(zip(names, ((a, frame) for a in call.args)))
        given.update({k.arg: (k.value, frame) for k in call.keywords if k.arg})
        if len(call.args) > len(names) or set(given) - set(names):
            return UNKNOWN
        for name, default in fields:
            if name not in given:
                if default is None:
                    return UNKNOWN
                given[name] = (default, self.module_frame())
        return Record(cls, given)

    def _first(self, gen: ast.GeneratorExp, frame: Frame) -> Any:
        """`next(elt for target in items if ...)` over a sequence the file writes: the first
        item whose tests pass, as a loop searching a size table takes it."""
        if len(gen.generators) != 1 or gen.generators[0].is_async or not isinstance(gen.generators[0].target, ast.Name):
            return UNKNOWN
        loop = gen.generators[0]
        items = self.eval(loop.iter, frame)
        if not isinstance(items, tuple):
            return UNKNOWN
        for item in items:
            inner = Frame(frame.fn, {**frame.values, loop.target.id: item}, frame.captured)
            tests = [self.eval(t, inner) for t in loop.ifs]
            if any(t is UNKNOWN for t in tests):
                return UNKNOWN
            if all(tests):
                return self.eval(gen.elt, inner)
        return UNKNOWN  # StopIteration: not a launch value

    def _class_attribute(self, cls: ClassValue, attr: str) -> Any:
        """`Cls.X` or `cls.X`: a literal of the class body, or a method replay can call."""
        value = cls.attribute(attr)
        if value is not None:
            return self.eval(value, self.module_frame())
        method = cls.method(attr)
        if method is None:
            return UNKNOWN
        fn, binding = method
        return _Helper(fn, bound=(cls,) if binding == "class" else ())

    def _apply(self, op: Callable[[Any, Any], Any] | None, a: Any, b: Any) -> Any:
        if op is None or a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        return op(a, b)

    def _compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.eval(node.left, frame)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, frame)
            fn = COMPARE.get(type(op))
            if fn is None or left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if not fn(left, right):
                return False
            left = right
        return True

    def _boolop(self, node: ast.BoolOp, frame: Frame) -> Any:
        value: Any = None
        for v in node.values:
            value = self.eval(v, frame)
            if value is UNKNOWN:
                return UNKNOWN
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        base = self.eval(node.value, frame)
        key = self.eval(node.slice, frame)
        if base is UNKNOWN or key is UNKNOWN:
            return UNKNOWN
        if isinstance(base, _LazyDict):
            return base.get(key)
        if isinstance(base, dict):
            return next((v for k, v in base.items() if same_key(k, key)), UNKNOWN)
        if isinstance(base, tuple) and isinstance(key, int):
            return base[key]
        return UNKNOWN

    def _call(self, node: ast.Call, frame: Frame) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = self.eval(func.value, frame)
            if isinstance(owner, TensorValue):
                return owner.method(func.attr, [self.eval(a, frame) for a in node.args])
            if ast.unparse(func) in ("os.environ.get", "os.getenv") and node.args and not node.keywords:
                return self._environ(node, frame)
            if isinstance(owner, int) and func.attr in INT_METHODS and not node.args:
                return getattr(owner, func.attr)()  # `1 << (n - 1).bit_length()`: a power of two by bits
            if isinstance(owner, (_LazyDict, dict)) and func.attr == "get" and node.args:
                key = self.eval(node.args[0], frame)
                got = owner.get(key) if isinstance(owner, _LazyDict) else self._subscript_dict(owner, key)
                if got is UNKNOWN and len(node.args) > 1:
                    return self.eval(node.args[1], frame)
                return got
        target = self.eval(func, frame)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        made = last_part(func)
        if isinstance(target, ClassValue) and target.fields() is not None:
            return self._record(target, node, frame)
        if made == "next" and isinstance(func, ast.Name) and target is UNKNOWN and node.args \
                and isinstance(node.args[0], ast.GeneratorExp):  # `next(c for c in _CONFIGS if n <= c["max_n"])`
            return self._first(node.args[0], frame)
        if made == "asdict" and len(node.args) == 1 and isinstance(record := self.eval(node.args[0], frame), Record):
            return _LazyDict(self, ast.Dict([], []), frame).with_fields(record)
        if target is UNKNOWN and not node.args and (made == "SimpleNamespace" or made == "dict" and isinstance(
                func, ast.Name)):  # `dict(BLOCK=256, num_warps=4)`: a dict display by another name
            return _LazyDict(self, ast.Dict([ast.Constant(k.arg) for k in node.keywords],
                                            [k.value for k in node.keywords]), frame, made == "SimpleNamespace")
        args = [self.eval(a, frame) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, frame) for k in node.keywords if k.arg}
        if isinstance(target, _Helper):
            return target.call(self, args, kwargs)
        if isinstance(target, str) and target in DEVICE_QUERIES:
            return device_query(target)
        if isinstance(target, Dotted):
            fn = FUNCTIONS.get(target.name)
            if fn is None and target.name.startswith("triton."):
                fn = TRITON_FUNCTIONS.get(target.name.rsplit(".", 1)[-1])
            if fn is None or any(v is UNKNOWN for v in [*args, *kwargs.values()]):
                return UNKNOWN
            return fn(*args, **kwargs)
        return UNKNOWN

    def _environ(self, node: ast.Call, frame: Frame) -> Any:
        """An environment variable as this process sees it (a candidate runs under the same
        environment); its default, and the literals that default reads, when it is not set."""
        name = self.eval(node.args[0], frame)
        if not isinstance(name, str):
            return UNKNOWN
        if name in os.environ:
            return os.environ[name]
        return self.eval(node.args[1], frame) if len(node.args) > 1 else None

    @staticmethod
    def _subscript_dict(d: dict, key: Any) -> Any:
        return next((v for k, v in d.items() if same_key(k, key)), UNKNOWN)


class _LazyDict:
    """A dict literal whose values are evaluated only when looked up, so that a lookup reads
    the literals of the entry it selects and no others."""

    def __init__(self, replay: Replay, node: ast.Dict, frame: Frame, namespace: bool = False) -> None:
        self.replay = replay
        self.entries = [(k, v, frame) for k, v in zip(node.keys, node.values)]  # each read in its frame
        self.namespace = namespace  # a `types.SimpleNamespace(...)`, read by attribute

    def with_fields(self, record: Record) -> "_LazyDict":
        """`dataclasses.asdict(cfg)`: the record's fields, each read where it was given."""
        self.entries = [(ast.Constant(name), expr, where) for name, (expr, where) in record.fields.items()]
        return self

    def with_item(self, key: ast.expr, value: ast.expr, frame: Frame) -> "_LazyDict":
        """The dict after `d[key] = value` (a table filled at import time)."""
        out = _LazyDict(self.replay, ast.Dict([], []), frame, self.namespace)
        out.entries = [*self.entries, (key, value, frame)]
        return out

    def get(self, key: Any) -> Any:
        for k, v, frame in reversed(self.entries):  # the last write of a key wins
            if k is None:
                return UNKNOWN  # **spread: the keys are not all written here
            written = self.replay.eval(k, frame)
            if written is not UNKNOWN and same_key(written, key):
                return self.replay.eval(v, frame)
        return UNKNOWN


class _Helper:
    """A plain function of the file (or a lambda) that replayed code calls."""

    def __init__(self, fn: ast.FunctionDef | ast.Lambda, closure: Frame | None = None, bound: tuple = ()) -> None:
        self.fn, self.closure = fn, closure
        self.bound = bound  # leading arguments already given: a class method's class

    def call(self, replay: Replay, args: list[Any], kwargs: dict[str, Any]) -> Any:
        args = [*self.bound, *args]
        names = [p.arg for p in params_of(self.fn)]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if isinstance(self.fn, ast.Lambda):
            outer = self.closure.values if self.closure else {}
            return replay.eval(self.fn.body, Frame(self.fn, values={**outer, **bound}))
        for name, default in defaults_of(self.fn).items():
            if name not in bound:
                bound[name] = replay.eval(default, replay.module_frame())
        frame = Frame(self.fn, values=bound)
        replay._statements(self.fn.body, frame, None, ())
        return replay.force(frame.values.get("<return>", UNKNOWN))


def _copy(frame: Frame) -> Frame:
    return Frame(frame.fn, dict(frame.values), frame.captured)


def _contains_line(s: ast.stmt, line: int) -> bool:
    return s.lineno <= line <= (s.end_lineno or s.lineno)
