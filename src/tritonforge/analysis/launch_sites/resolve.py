"""A problem file as launch discovery sees it: its functions and kernels, and where the
value of a name comes from (a literal to rewrite, a runtime value, or unknown)."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tritonforge.analysis.astfold import bind_call, params_of
from tritonforge.analysis.kernel_source import Kernel, KernelSource, class_chain, is_static
from tritonforge.analysis.launch_sites.coverage import single_tiles
from tritonforge.analysis.launch_sites.model import CONFIG_OPTIONS, ConfigSpec, KernelFacts
from tritonforge.analysis.launch_sites.shapes import ShapeWalker, pipelined_loop
from tritonforge.analysis.launch_sites.syntax import (Binding, bindings, config_table, defaults_of, fold, last_name,
                                                     record_fields, returned_list, walk_local)

_CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook", "ir_override")


@dataclass
class Scope:
    fn: ast.FunctionDef | None  # None: module level
    args: dict[str, tuple[ast.expr, "Scope"]]  # helper parameters bound at the call, in the caller's scope
    chain: tuple[str, ...]  # functions from the entry down to this one ("Cls.forward" for a method)
    owner: str | None = None  # the class whose method `fn` is
    instance: "Made | None" = None  # the `Cls(...)` call that made `self`, if known
    closure: "Scope | None" = None  # a nested def's enclosing call (`_run = _make_launcher(256)`)
    calls: tuple[int, ...] = ()  # the lines of the calls from the entry down to this function

    @property
    def is_entry(self) -> bool:
        return self.fn is not None and len(self.chain) == 1

    @property
    def self_name(self) -> str | None:
        """The name of `self` in a method that has one (not a staticmethod, not module level)."""
        if self.owner is None or self.fn is None or is_static(self.fn):
            return None
        params = params_of(self.fn)
        return params[0].arg if params else None


@dataclass
class Made:
    """An instance of a class of the file: the `Cls(...)` call and the scope its arguments are read in."""

    cls: str
    call: ast.Call
    scope: Scope


@dataclass
class Resolved:
    kind: str  # "literal" | "derived" | "unknown" | "replayed" | "option" (num_ctas, maxnreg: not moved) | ...
    text: str  # the expression, as written
    where: str  # how we got there, for reports
    node: ast.expr | None = None  # the literal to rewrite
    value: Any = None


class SourceModule:
    """The file's top-level functions, its kernels (as `KernelSource` reads them) and bindings."""

    def __init__(self, source: str):
        self.reader = reader = KernelSource(source)
        self.source, self.tree = source, reader.tree
        self.functions = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.top = bindings(walk_local(self.tree))
        self._local: dict[int, dict[str, list[Binding]]] = {}
        self._configs: dict[str, tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]] = {}
        self._constants: dict[tuple[int, int, int, int], ast.Constant] | None = None
        self._parents: dict[int, ast.AST] | None = None
        self._records: dict[str, list[tuple[str, ast.expr | None]] | None] = {}
        # Launches name kernels at module level: a kernel nested in a function is not one of them.
        self._triton = {n: k for n, k in reader.kernels.items() if self.functions.get(n) is k.fn}
        # A kernel in a class body (`@staticmethod @triton.jit def _kernel`), launched as
        # `self._kernel[grid]` or `Cls._kernel[grid]`, keyed by its name as the launch capture
        # is: only where no other kernel or top-level function of the file has that name (a
        # method may: trident names its kernels `forward` beside autograd Functions' `forward`).
        self.kernel_class: dict[str, str] = {}
        # `_kernel = triton.jit(_body)`: the bound name -> the kernel, named `_body` as it runs.
        called = reader.jit_calls()
        self.jit_alias = {alias: k.name for alias, k in called.items()} | reader.wrapped
        self._triton.update({k.name: k for k in called.values()})
        defs = Counter(n.name for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef))
        kernel_defs = Counter(n.name for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)
                              and any(reader.decorator_name(d) == "triton.jit" for d in n.decorator_list))
        top = set(self.functions)
        for cls in self.classes.values():
            for n in cls.body:
                k = reader.kernels.get(n.name) if isinstance(n, ast.FunctionDef) else None
                if k is not None and k.fn is n and kernel_defs[n.name] == 1 and n.name not in top:
                    self.kernel_class[n.name] = cls.name
                    self.functions[n.name] = n
                    self._triton[n.name] = k
        # A factory (`def make_kernel(...)` defining one kernel and returning it): the launch
        # `make_kernel(...)[grid](...)` launches that kernel, whatever the factory's arguments.
        self.factory = _factories(self.functions, reader.kernels, defs)
        for k in self.factory.values():
            self.functions[k], self._triton[k] = reader.kernels[k].fn, reader.kernels[k]
        self.kernels = {n: _kernel_facts(self, k) for n, k in self._triton.items()}

    def text(self, node: ast.AST) -> str:
        return self.reader.text(node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node `node` is a child of."""
        if self._parents is None:
            self._parents = {id(c): n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}
        return self._parents.get(id(node))

    def local(self, fn: ast.FunctionDef) -> dict[str, list[Binding]]:
        if id(fn) not in self._local:
            self._local[id(fn)] = bindings(walk_local(fn))
        return self._local[id(fn)]

    def module_scope(self) -> Scope:
        return Scope(None, {}, ())

    def method(self, cls: str, name: str) -> ast.FunctionDef | None:
        """`name` defined in the body of the file's class `cls`, or of a class of the file it inherits from."""
        return next((n for c in class_chain(self.classes, cls) for n in c.body
                     if isinstance(n, ast.FunctionDef) and n.name == name), None)

    def instance_of(self, expr: ast.expr, scope: Scope) -> Made | None:
        """The instance `expr` is: `Cls(...)` itself, or a name bound once to it (a local or a
        module-level `op = Cls(...)`), or the last operand of an `or` whose others are None."""
        where = scope
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or) and all(
                self._is_none(v, scope) for v in expr.values[:-1]):
            expr = expr.values[-1]  # `self.cfg = cfg or OpConfig()`, where no caller passes cfg
        if isinstance(expr, ast.Name):
            bind, where, _ = self.definition(expr.id, scope)
            expr = bind.value if bind is not None and bind.exact and bind.value is not None else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
                and (expr.func.id in self.classes or self.record_fields(expr.func.id) is not None):
            return Made(expr.func.id, expr, where)
        return None

    def _is_none(self, expr: ast.expr, scope: Scope) -> bool:
        """`expr` is None here: the constant, or a parameter bound to it (its default)."""
        if isinstance(expr, ast.Name):
            bind, _, _ = self.definition(expr.id, scope)
            expr = bind.value if bind is not None and bind.exact and bind.value is not None else expr
        return isinstance(expr, ast.Constant) and expr.value is None

    def definition(self, name: str, scope: Scope) -> tuple[Binding | None, Scope, str]:
        """The single binding of `name` seen from `scope`, the scope to read it in, and a note."""
        if scope.fn is not None:
            binds = self.local(scope.fn).get(name)
            if binds:
                if len(binds) > 1:
                    return None, scope, f"{name} is assigned {len(binds)} times in {scope.fn.name}"
                return binds[0], scope, ""
            if name in {p.arg for p in params_of(scope.fn)} or name == getattr(scope.fn.args.kwarg, "arg", None):
                return self._parameter(name, scope)
            if scope.closure is not None:  # a free name of a nested def: its enclosing function's
                return self.definition(name, scope.closure)
        binds = self.top.get(name)
        if not binds:
            return None, scope, f"{name} is not defined in this file"
        if len(binds) > 1:
            return None, scope, f"{name} is assigned {len(binds)} times at module level"
        return binds[0], self.module_scope(), ""

    def exact_value(self, name: str, scope: Scope) -> ast.expr | None:
        """The expression `name` is bound to, once and exactly, seen from `scope`; else None."""
        bind, _, _ = self.definition(name, scope)
        return bind.value if bind is not None and bind.exact else None

    def _parameter(self, name: str, scope: Scope) -> tuple[Binding | None, Scope, str]:
        fn = scope.fn
        assert fn is not None
        if name in scope.args:
            expr, caller = scope.args[name]
            return Binding(expr, True), caller, ""
        if scope.is_entry:
            # The entry's parameters, defaults included, are its signature: never rewritten.
            return None, scope, f"argument {name!r} of the entry {fn.name}()"
        default = defaults_of(fn).get(name)
        if default is not None:
            return Binding(default, True), self.module_scope(), ""
        return None, scope, f"parameter {name!r} of {fn.name}() is not bound here"

    def resolve(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Resolved:
        value = fold(expr)
        if value is not None:
            return Resolved("literal", self.text(expr), f"{self.text(expr)} (line {expr.lineno})", expr, value)
        if isinstance(expr, ast.Constant):
            text = self.text(expr)
            return Resolved("derived", text, f"constant {text} is not an integer", expr, expr.value)
        if isinstance(expr, ast.Attribute) and depth <= 12:
            found = self._attribute(expr, scope, depth)
            if found is not None:
                return found
        if isinstance(expr, ast.Subscript) and depth <= 12:
            found = self._item(expr, scope, depth)
            if found is not None:
                return found
        if not isinstance(expr, ast.Name) or depth > 12:
            return Resolved("derived", self.text(expr), f"derived from runtime values: {self.text(expr)}")
        bind, where, note = self.definition(expr.id, scope)
        if bind is None or bind.value is None:
            kind = "derived" if note.startswith("argument") else "unknown"
            return Resolved(kind, expr.id, note or f"{expr.id} is bound by a loop, import or +=")
        if not bind.exact:
            text = self.text(bind.value)
            return Resolved("derived", text, f"derived from runtime values: {expr.id} from {text}")
        found = self.resolve(bind.value, where, depth + 1)
        if found.kind == "literal":
            # `block = DEFAULT_BLOCK`, `DEFAULT_BLOCK = 256`: the literal's own line, by its name.
            via = f"{bind.value.id} = " if isinstance(bind.value, ast.Name) else ""
            line = found.node.lineno if found.node is not None else bind.value.lineno
            found.where = f"{expr.id} = {via}{found.text} (line {line})"
        return found

    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> Resolved | None:
        """`self.X` in a method, set once in `__init__` (`self.X = ...`) or in the class body,
        or `Cls.X` for a class attribute: resolved where it is set."""
        base = expr.value
        if isinstance(base, ast.Attribute):  # `self.cfg.block`: a field of the record `self.cfg` holds
            held = self.member(base, scope)
            made = self.instance_of(held[0], held[1]) if held else None
            if made is None or self.record_fields(made.cls) is None:
                return None
            return self._field(made.cls, expr.attr, made, self.text(expr), depth)
        if not isinstance(base, ast.Name):
            return None
        config = self.config_made(base, scope)
        if config is not None and expr.attr in CONFIG_OPTIONS:  # `cfg.num_warps`
            value = config_entry(config[0], expr.attr)
            if value is None:
                return Resolved("derived", self.text(expr), f"{self.text(expr)}: triton.Config's default, not written")
            return self._named(self.text(expr), value, config[1], depth)
        made = scope.instance if base.id == scope.self_name else None
        owner = scope.owner if base.id == scope.self_name else base.id if base.id in self.classes else None
        if owner is None:
            made = self.instance_of(base, scope)
            owner = made.cls if made is not None and self.record_fields(made.cls) is not None else None
        if owner is None:
            return None
        text = self.text(expr)
        if self.record_fields(owner) is not None and base.id not in self.classes:
            return self._field(owner, expr.attr, made, text, depth)
        set_once = self._set_once(owner, expr.attr, scope, owner == scope.owner or base.id == scope.self_name)
        if isinstance(set_once, str):
            return Resolved("derived", text, f"{text} {set_once}")
        return self._named(text, *set_once, depth)

    def member(self, expr: ast.expr, scope: Scope) -> tuple[ast.expr, Scope] | None:
        """What `self.X` (in a method) is set to once in its class, and the scope to read it in."""
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and scope.owner
                and expr.value.id == scope.self_name):
            return None
        set_once = self._set_once(scope.owner, expr.attr, scope, True)
        return None if isinstance(set_once, str) else set_once

    def _set_once(self, owner: str, attr: str, scope: Scope, mine: bool) -> tuple[ast.expr, Scope] | str:
        """The one plain assignment of `attr` in class `owner` (the class body, or a method such as
        `__init__`, read as the call that made the instance passes its arguments), or why not."""
        sets = self._attribute_sets(owner, attr)
        prop = self._property(owner, attr) if not sets else None
        if prop is not None:  # `@property def block(self): return 128 if self.wide else 32`
            return prop[0], Scope(prop[1], {}, scope.chain + (f"{owner}.{attr}",), owner, scope.instance)
        if len(sets) != 1:
            return "is never set in its class" if not sets else f"is set {len(sets)} times in its class"
        value, where = sets[0]
        if value is None:
            return "is not set by a plain assignment"
        if where is None:  # the class body: its names are read at module level
            return value, self.module_scope()
        if not mine:
            return "is set per instance"
        return value, Scope(where, self._init_args(where, scope), scope.chain + (f"{owner}.{where.name}",), owner,
                            scope.instance)

    def _property(self, owner: str, attr: str) -> tuple[ast.expr, ast.FunctionDef] | None:
        """The one returned expression of a `@property` of class `owner`, and the property."""
        fn = self.method(owner, attr)
        if fn is None or not any(last_name(d) in ("property", "cached_property") for d in fn.decorator_list):
            return None
        body = [n for n in fn.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        return body[0].value, fn

    def _named(self, text: str, value: ast.expr, scope: Scope, depth: int) -> Resolved:
        """`value` resolved in `scope`, a literal said to be where `text` (how the launch reads
        it: `self.block`, `CFG.block_m`, `kw["BLOCK"]`) gets it."""
        found = self.resolve(value, scope, depth + 1)
        if found.kind == "literal":
            found.where = f"{text} = {found.text} (line {found.node.lineno if found.node else value.lineno})"
        return found

    def _item(self, expr: ast.Subscript, scope: Scope, depth: int) -> Resolved | None:
        """`d["KEY"]` of a name bound once to a dict literal (a `**kw` parameter included):
        resolved where the entry's value is written."""
        key = expr.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        made = self.config_made(config_holder(expr.value), scope)  # `cfg.kwargs["BLOCK"]`
        if made is not None:
            value = config_entry(made[0], key.value)
            if value is None:
                why = "triton.Config's default, not written" if key.value in CONFIG_OPTIONS else "not in the config"
                return Resolved("derived", self.text(expr), f"{self.text(expr)}: {why}")
            return self._named(self.text(expr), value, made[1], depth)
        held = self.member(expr.value, scope)  # `self.launch_kwargs["BLOCK"]`
        if held is not None:
            table, where = held
        elif isinstance(expr.value, ast.Name):
            bind, where, _ = self.definition(expr.value.id, scope)
            table = bind.value if bind is not None and bind.exact else None
        else:
            return None
        if not isinstance(table, ast.Dict) or any(k is None for k in table.keys):
            return None
        values = [v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant) and k.value == key.value]
        if len(values) != 1:
            return None
        return self._named(self.text(expr), values[0], where, depth)

    def config_made(self, expr: ast.expr | None, scope: Scope) -> tuple[ast.Call, Scope] | None:
        """The `triton.Config(...)` a name is bound to once (a config made by hand, launched
        with `**cfg.all_kwargs()`), and the scope its arguments are read in."""
        if isinstance(expr, ast.Name):
            bind, scope, _ = self.definition(expr.id, scope)
            expr = bind.value if bind is not None and bind.exact else None
        if isinstance(expr, ast.Call) and last_name(expr.func) == "Config" and not (
                isinstance(expr.func, ast.Name) and expr.func.id in self.classes) and \
                (self.reader.qualify(expr.func) or "triton").startswith("triton"):  # not a class of the file
            return expr, scope
        return None

    def record_fields(self, name: str) -> list[tuple[str, ast.expr | None]] | None:
        """The fields, in order, with their defaults, of a record type of the file: a
        `@dataclass` or `typing.NamedTuple` class, or a `collections.namedtuple(...)`; None for
        anything else."""
        if name not in self._records:
            self._records[name] = self._read_record(name)
        return self._records[name]

    def _read_record(self, name: str) -> list[tuple[str, ast.expr | None]] | None:
        cls = self.classes.get(name)
        if cls is not None:
            return record_fields(cls)
        binds = self.top.get(name, [])
        call = binds[0].value if len(binds) == 1 and binds[0].exact else None
        if not (isinstance(call, ast.Call) and last_name(call.func) == "namedtuple" and len(call.args) == 2):
            return None
        spec = call.args[1]
        if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
            names = spec.value.replace(",", " ").split()  # namedtuple("Cfg", "block warps")
        elif isinstance(spec, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in spec.elts):
            names = [e.value for e in spec.elts]  # type: ignore[attr-defined]
        else:
            return None
        given = next((k.value for k in call.keywords if k.arg == "defaults"), None)
        defaults = list(given.elts) if isinstance(given, (ast.Tuple, ast.List)) else []
        lead = len(names) - len(defaults)
        return [(f, defaults[i - lead] if i >= lead else None) for i, f in enumerate(names)]

    def _field(self, cls: str, attr: str, made: Made | None, text: str, depth: int) -> Resolved:
        """A field of a record instance (`CFG.block_m`, `self.block_m`; see `record_fields`): what
        the call that made it passes for the field, else the field's default."""
        found = self.field_value(cls, attr, made)
        if isinstance(found, str):
            return Resolved("derived", text, f"{text}{found}")
        return self._named(text, found[0], found[1], depth)

    def field_value(self, cls: str, attr: str, made: Made | None) -> tuple[ast.expr, Scope] | str:
        """What the call that made a record instance passes for field `attr`, else the field's
        default, and the scope to read it in; or why neither is known."""
        fields = self.record_fields(cls) or []
        names = [f for f, _ in fields]
        if attr not in names or made is None:
            return " is no field of its record type" if attr not in names else " is set per instance"
        index = names.index(attr)
        value, where = fields[index][1], self.module_scope()
        given = {k.arg: k.value for k in made.call.keywords if k.arg}
        positional = [a for a in made.call.args if not isinstance(a, ast.Starred)]
        if len(positional) < len(made.call.args) or any(k.arg is None for k in made.call.keywords):
            return ": the record is made with * or ** arguments"
        if attr in given or index < len(positional):
            value, where = given[attr] if attr in given else positional[index], made.scope
        return (value, where) if value is not None else " has no value the file says"

    def _attribute_sets(self, owner: str, attr: str) -> list[tuple[ast.expr | None, ast.FunctionDef | None]]:
        """Where the class sets `attr`: (value, method) for `self.attr = value` in a method, (value,
        None) for `attr = value` in the class body; `self.attr += ...` and the like count as sets
        whose value is unknown. Classes of the file it inherits from count: their methods' sets
        (an instance's own attribute), and the class body nearest the instance's class that sets
        it (a subclass overriding a class attribute)."""
        chain = class_chain(self.classes, owner)
        out: list[tuple[ast.expr | None, ast.FunctionDef | None]] = []
        for node in chain:
            body = bindings(n for n in node.body if not isinstance(n, ast.FunctionDef))
            out += [(b.value if b.exact else None, None) for b in body.get(attr, [])]
            if out:
                break
        for fn in (n for node in chain for n in node.body if isinstance(n, ast.FunctionDef)):
            params = params_of(fn)
            me = params[0].arg if params and not is_static(fn) else None
            for n in walk_local(fn):
                targets = n.targets if isinstance(n, ast.Assign) else \
                    [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    for a in ast.walk(t):
                        if isinstance(a, ast.Attribute) and a.attr == attr and isinstance(a.value, ast.Name) \
                                and a.value.id == me:
                            plain = isinstance(n, ast.Assign) and t is a
                            out.append((n.value if plain else None, fn))
        return out

    def _init_args(self, init: ast.FunctionDef, scope: Scope) -> dict[str, tuple[ast.expr, Scope]]:
        """`__init__`'s parameters as the call that made the instance passes them."""
        made = scope.instance
        if made is None or init.name != "__init__":
            return {}
        return {k: (v, made.scope) for k, v in bind_call(init, made.call, skip=1).items()}

    def constexpr_global(self, name: str) -> ast.Call | None:
        """The `tl.constexpr(...)` a module-level `name` is bound to once (Triton lets a kernel read
        a global only in that form), or None."""
        binds = self.top.get(name, [])
        value = binds[0].value if len(binds) == 1 and binds[0].exact else None
        if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords \
                and (self.reader.qualify(value.func) or "").endswith("language.constexpr"):
            return value
        return None

    def globals_read(self, fn: ast.FunctionDef) -> tuple[str, ...]:
        """The `tl.constexpr` globals a kernel's body reads, in first-read order."""
        own = {p.arg for p in params_of(fn)} | set(bindings(ast.walk(fn)))
        loads = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                       key=lambda n: (n.lineno, n.col_offset))
        names = (n.id for n in loads)
        return tuple(dict.fromkeys(n for n in names if n not in own and self.constexpr_global(n) is not None))

    def heuristic(self, kernel: str, param: str) -> ast.expr | None:
        return self._triton[kernel].heuristic(param)

    def constant_at(self, span_key: tuple[int, int, int, int]) -> ast.Constant | None:
        """The integer literal written at a span (as `span_of` gives it)."""
        if self._constants is None:
            self._constants = {(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset): n
                               for n in ast.walk(self.tree) if isinstance(n, ast.Constant)}
        return self._constants.get(span_key)

    def autotune_configs(self, fn: ast.FunctionDef) -> tuple[ConfigSpec, ...] | None:
        return self.autotune_list(fn)[1]

    def autotune_list(self, fn: ast.FunctionDef) -> tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]:
        """(the list expression to rewrite, its configs, why not) for an autotuned kernel."""
        if fn.name not in self._configs:
            self._configs[fn.name] = self._parse_autotune(fn)
        return self._configs[fn.name]

    def autotune_written(self, fn: ast.FunctionDef) -> ast.expr | None:
        """The `configs=` argument of the kernel's `@triton.autotune`, as written."""
        call = self._triton[fn.name].autotune
        if call is None:
            return None
        return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "configs"), None)

    def _parse_autotune(self, fn: ast.FunctionDef) -> tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]:
        call = self._triton[fn.name].autotune
        assert call is not None
        node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "configs"), None)
        if isinstance(node, ast.Name):
            bind, _, note = self.definition(node.id, self.module_scope())
            node = bind.value if bind and bind.exact else None
            if node is None:
                return None, None, note or "configs are not a literal list"
        if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Name):
            node = returned_list(self.functions.get(node.func.id)) or node  # `configs=get_configs()`
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None, None, "configs are built by code, not written as a list"
        configs = [self._config(e) for e in node.elts]
        if not configs or any(c is None for c in configs):
            return None, None, "a config is not a plain triton.Config(...) of literals"
        return node, tuple(configs), ""  # type: ignore[arg-type]

    def _config(self, node: ast.expr) -> ConfigSpec | None:
        if not (isinstance(node, ast.Call) and last_name(node.func) == "Config"):
            return None
        named = dict(zip(_CONFIG_POSITIONAL, node.args))
        named.update({k.arg: k.value for k in node.keywords if k.arg})
        kwargs = named.pop("kwargs", None)
        if not isinstance(kwargs, ast.Dict) or any(k is None for k in kwargs.keys):
            return None
        items = []
        for k, v in zip(kwargs.keys, kwargs.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)):
                return None
            items.append((k.value, v.value))
        warps = named.pop("num_warps", None)
        stages = named.pop("num_stages", None)
        w = fold(warps) if warps is not None else None
        s = fold(stages) if stages is not None else None
        if (warps is not None and w is None) or (stages is not None and s is None):
            return None
        extra = tuple(f"{k}={self.text(v)}" for k, v in named.items())
        return ConfigSpec(tuple(items), w, s, extra, self.text(node))


def _kernel_facts(module: SourceModule, kernel: Kernel) -> KernelFacts:
    fn = kernel.fn
    read = module.globals_read(fn)
    walker = ShapeWalker(fn, set(kernel.constexprs) | set(read))
    walker.run()
    keys: set[str] = set()
    if kernel.autotuned:
        for c in module.autotune_configs(fn) or ():
            keys.update(k for k, _ in c.kwargs)
    return KernelFacts(
        name=fn.name,
        line=fn.lineno,
        params=kernel.params,
        constexprs=kernel.constexprs,
        globals=read,
        roles={c: frozenset(r) for c, r in walker.roles.items()},
        tiles=tuple(walker.tiles),
        arange_ends=tuple(walker.arange_ends),
        dots=tuple(walker.dots),
        autotune_keys=tuple(sorted(keys)),
        heuristics=tuple(sorted(set(kernel.heuristic_names()))),
        autotuned=kernel.autotuned,
        autotune_pruned=kernel.autotune is not None and any(
            k.arg == "prune_configs_by" and not (isinstance(k.value, ast.Constant) and k.value.value is None)
            for k in kernel.autotune.keywords),
        has_loop=any(pipelined_loop(n) for n in ast.walk(fn)),
        single_tiles=single_tiles(fn, set(kernel.constexprs), kernel.params),
    )


def _factories(functions: dict[str, ast.FunctionDef], kernels: dict[str, Kernel],
               defs: Counter) -> dict[str, str]:
    """Top-level functions that define one kernel and return it, and that kernel's name."""
    out = {}
    for name, fn in functions.items():
        if name in kernels:
            continue
        made = {n.name for n in walk_local(fn) if isinstance(n, ast.FunctionDef) and n.name in kernels
                and kernels[n.name].fn is n and defs[n.name] == 1}
        returned = {r.value.id for r in walk_local(fn) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)}
        if len(made) == 1 and returned == made:
            out[name] = made.pop()
    return out


def config_holder(expr: ast.expr) -> ast.expr | None:
    """`cfg` of `cfg.kwargs` or `cfg.all_kwargs()`, the dicts a `triton.Config` gives."""
    if isinstance(expr, ast.Attribute) and expr.attr == "kwargs":
        return expr.value
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "all_kwargs" \
            and not expr.args:
        return expr.func.value
    return None


def config_entry(call: ast.Call, key: str) -> ast.expr | None:
    """What a `triton.Config(...)` call writes for `key`: its kwargs dict's entry, or the option."""
    table = config_table(call)
    if isinstance(table, ast.Dict):
        for k, v in zip(table.keys, table.values):
            if isinstance(k, ast.Constant) and k.value == key:
                return v
    return next((k.value for k in call.keywords if k.arg == key), None) if key in CONFIG_OPTIONS else None


def config_keys(call: ast.Call, all_kwargs: bool) -> list[str]:
    """The keys of `cfg.kwargs` (or of `cfg.all_kwargs()`, which adds the options Triton fills)."""
    table = config_table(call)
    if not isinstance(table, ast.Dict) or any(not (isinstance(k, ast.Constant) and isinstance(k.value, str))
                                             for k in table.keys):
        return []
    keys = [k.value for k in table.keys]  # type: ignore[union-attr]
    if all_kwargs:
        given = {k.arg for k in call.keywords}
        keys += ["num_warps", "num_ctas", "num_stages"] + (["maxnreg"] if "maxnreg" in given else [])
    return keys
