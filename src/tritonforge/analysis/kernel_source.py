"""One reading of Triton kernel source: which functions are kernels, and how they are declared.

Both the static features (`analysis.features`) and the launch sites (`analysis.launch_sites`)
read kernels through this, so they agree on what a kernel is: a function whose decorator is
Triton's `jit`, however it was imported (`import triton`, `import triton as tr`,
`from triton import jit`, `from triton.runtime import jit`), bare or called, alone or under
`@triton.autotune(...)` and `@triton.heuristics(...)`. A decorator that is merely named
`jit` (numba's, a local one) does not make a kernel.
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from dataclasses import dataclass

from tritonforge.analysis.astfold import bind_call, last_name

TL = "triton.language"
# Where Triton's decorators live; each also answers under its short triton.* name.
_DECORATOR_HOMES = frozenset({"triton", "triton.runtime", "triton.runtime.jit", "triton.runtime.autotuner"})
_DECORATORS = frozenset({"jit", "autotune", "heuristics"})


# PyTorch's wrappers that make a launch traceable by torch.compile: `wrap_triton(k)[grid](...)`.
_LAUNCH_WRAPPERS = frozenset({"wrap_triton", "capture_triton"})


def launch_target(call: ast.Call) -> ast.expr | None:
    """What a launch `X[grid](...)` or `wrap_triton(X)[grid](...)` launches (X), else None."""
    f = call.func
    if not isinstance(f, ast.Subscript):
        return None
    target = f.value
    if isinstance(target, ast.Call) and len(target.args) == 1 and not target.keywords:
        wrapper = target.func.attr if isinstance(target.func, ast.Attribute) else \
            target.func.id if isinstance(target.func, ast.Name) else ""
        target = target.args[0] if wrapper in _LAUNCH_WRAPPERS else target
    return target


def launched_kernel(call: ast.Call) -> ast.Name | None:
    """The kernel's name in a launch `k[grid](...)` or `wrap_triton(k)[grid](...)`, else None."""
    target = launch_target(call)
    return target if isinstance(target, ast.Name) else None


@dataclass(frozen=True)
class EntryFunction:
    """The function an entry name runs: a top-level def, or what a module-level alias names
    (`layer_norm = LayerNorm.apply`, as Triton's layer-norm tutorial writes it: the autograd
    Function's `forward`, whose `ctx` the caller does not pass)."""

    fn: ast.FunctionDef
    skip: int = 0  # leading parameters the caller does not pass
    owner: str | None = None  # the class whose method `fn` is
    instance: str | None = None  # the module-level instance of `owner` a bound method is taken from
    # `gelu_tanh = functools.partial(_pointwise, approximate="tanh")`: the partial, whose
    # positional arguments are the `skip` leading parameters and whose keywords bind others.
    partial: ast.Call | None = None

    def signature(self, name: str) -> ast.FunctionDef:
        """A def of `name` with the parameters a caller passes (for code that wraps the entry)."""
        if self.partial is not None:
            return self._partial_signature(name)
        args = copy.deepcopy(self.fn.args)
        positional = [*args.posonlyargs, *args.args][self.skip:]
        n_defaults = len(args.defaults)
        args.posonlyargs, args.args = [], positional
        args.defaults = args.defaults[max(0, n_defaults - len(positional)):] if n_defaults else []
        return ast.FunctionDef(name, args, [ast.Pass()], [], self.fn.returns, None, lineno=self.fn.lineno,
                               col_offset=0)

    def _partial_signature(self, name: str) -> ast.FunctionDef:
        """`def name(x, *_args, **_kwargs)`: the positional parameters before the first one the
        partial binds by keyword, then everything else passed on as the partial takes it (a
        wrapper that passed a later parameter by position would clash with the keyword)."""
        args = copy.deepcopy(self.fn.args)
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(args.defaults):], args.defaults))
        bound = {k.arg for k in self.partial.keywords if k.arg}  # type: ignore[union-attr]
        kept = []
        for p in positional[self.skip:]:
            if p.arg in bound:
                break
            kept.append(p)
        tail = [defaults[p.arg] for p in kept if p.arg in defaults]  # a suffix of kept, as of the def
        wrapped = ast.arguments(posonlyargs=[], args=kept, vararg=ast.arg("_args"), kwonlyargs=[], kw_defaults=[],
                                kwarg=ast.arg("_kwargs"), defaults=tail)
        return ast.FunctionDef(name, wrapped, [ast.Pass()], [], None, None, lineno=self.fn.lineno, col_offset=0)


def is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def is_classmethod(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def entry_function(tree: ast.Module, entry: str) -> EntryFunction | None:
    """What `entry` runs, for a top-level def or an alias of a def, of `Cls.apply`, or of a
    method of a module-level instance (`op = Op(); my_op = op.forward`), or for such an
    instance itself (`my_op = Op()`: its `__call__`, or an `nn.Module`'s `forward`)."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    found = defs.get(entry)
    if isinstance(found, ast.FunctionDef):
        return EntryFunction(found)
    value = _assigned_once(tree, entry)
    if found is not None or value is None:
        return None
    if isinstance(value, ast.Name) and isinstance(defs.get(value.id), ast.FunctionDef):
        return EntryFunction(defs[value.id])  # type: ignore[arg-type]
    if isinstance(value, ast.Attribute) and value.attr == "apply" and isinstance(value.value, ast.Name):
        cls = defs.get(value.value.id)
        forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None) \
            if isinstance(cls, ast.ClassDef) else None
        return EntryFunction(forward, 1, cls.name) if forward and is_static(forward) else None  # type: ignore[union-attr]
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
            and isinstance(defs.get(value.value.id), ast.ClassDef):
        return _class_method(defs, value.value.id, value.attr)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return _bound_method(tree, defs, value.value.id, value.attr)
    if isinstance(value, ast.Call) and last_name(value.func) == "partial" and value.args \
            and isinstance(value.args[0], ast.Name) and isinstance(defs.get(value.args[0].id), ast.FunctionDef) \
            and not any(isinstance(a, ast.Starred) for a in value.args) and all(k.arg for k in value.keywords):
        return EntryFunction(defs[value.args[0].id], len(value.args) - 1, partial=value)  # type: ignore[arg-type]
    if isinstance(value, ast.Call):  # the instance itself is the entry: its __call__, or a Module's forward
        return _bound_method(tree, defs, entry, "__call__") or _bound_method(tree, defs, entry, "forward")
    return None


def _assigned_once(tree: ast.Module, name: str) -> ast.expr | None:
    """The value of the one module-level `name = ...`, if there is exactly one."""
    binds = [n.value for n in tree.body if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    return binds[0] if len(binds) == 1 else None


def _bound_method(tree: ast.Module, defs: dict[str, ast.stmt], instance: str, name: str) -> EntryFunction | None:
    call = _assigned_once(tree, instance)
    cls = defs.get(call.func.id) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
    if not isinstance(cls, ast.ClassDef):
        return None
    method = _method_of(defs, cls.name, name)
    if method is None:
        return None
    return EntryFunction(method, 0 if is_static(method) else 1, cls.name, instance)


def _class_method(defs: dict[str, ast.stmt], cls: str, name: str) -> EntryFunction | None:
    """`swish = SwishOps.forward`: a staticmethod (or classmethod, whose `cls` the caller does
    not pass) taken from the class itself, an ops namespace's way of exporting its functions."""
    method = _method_of(defs, cls, name)
    if method is None or not (is_static(method) or is_classmethod(method)):
        return None
    return EntryFunction(method, 1 if is_classmethod(method) else 0, cls)


def _returned(tree: ast.Module, call: ast.Call) -> ast.expr | None:
    """What a call of a helper of the file, or of a method of a module-level instance, returns
    where its body is one `return`: its parameters (and the instance's attributes `__init__`
    sets from its own) replaced by what the calls pass (`get_config("max")` ->
    `CONFIGS["max"]`). Parts with nothing to replace are the file's own nodes."""
    defs: dict[str, ast.stmt] = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    f, fn, skip, owner = call.func, None, 0, None
    if isinstance(f, ast.Name) and isinstance(defs.get(f.id), ast.FunctionDef):
        fn = defs[f.id]
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        method = _bound_method(tree, defs, f.value.id, f.attr)  # `runtime.get_heuristic_config("max")`
        held = _assigned_once(tree, f.value.id)
        if method is not None:
            fn, skip, owner = method.fn, method.skip, held
        elif isinstance(held, ast.Call) and last_name(held.func) == "SimpleNamespace":
            kept = next((k.value for k in held.keywords if k.arg == f.attr), None)  # trident's `util.autotune`
            fn = defs.get(kept.id) if isinstance(kept, ast.Name) else None
    if not isinstance(fn, ast.FunctionDef):
        return None
    returned = _one_return(fn)
    own = bind_call(fn, call, skip)
    init = _method_of(defs, owner.func.id, "__init__") if isinstance(owner, ast.Call) else None  # type: ignore[attr-defined]
    if init is not None:
        given = bind_call(init, owner, skip=1)  # `self.heuristics = heuristics` of `_Runtime(HEURISTICS)`
        own.update({f"self.{t.attr}": _replaced(n.value, given) for n in init.body if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                    and t.value.id == "self"})
    return _replaced(returned, own) if returned is not None else None


def _one_return(fn: ast.FunctionDef) -> ast.expr | None:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def _replaced(node: ast.expr | None, names: dict[str, ast.expr]) -> ast.expr | None:
    """`node` with the names (and `self.X`) of `names` replaced, through subscripts."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in names:
        return names[f"{node.value.id}.{node.attr}"]
    if isinstance(node, ast.Subscript):
        value, key = _replaced(node.value, names), _replaced(node.slice, names)
        if value is not node.value or key is not node.slice:
            return ast.Subscript(value, key, ast.Load())
    if isinstance(node, ast.Call):  # `return triton.autotune(configs=configs, key=key, **kwargs)`
        args = [_replaced(a, names) for a in node.args]
        keywords = []
        for k in node.keywords:
            spread = names.get(k.value.id) if k.arg is None and isinstance(k.value, ast.Name) else None
            keywords += [ast.keyword(key.value, v) for key, v in zip(spread.keys, spread.values)] \
                if isinstance(spread, ast.Dict) else [ast.keyword(k.arg, _replaced(k.value, names))]
        if any(a is not b for a, b in zip(args, node.args)) or any(
                a.value is not b.value for a, b in zip(keywords, node.keywords)) or len(keywords) != len(node.keywords):
            return ast.copy_location(ast.Call(node.func, args, keywords), node)  # type: ignore[arg-type]
    return node


def _method_of(defs: dict[str, ast.stmt], cls: str, name: str) -> ast.FunctionDef | None:
    """`name` defined in class `cls` of the file or in a class of the file it inherits from."""
    classes = {n: c for n, c in defs.items() if isinstance(c, ast.ClassDef)}
    return next((n for c in class_chain(classes, cls) for n in c.body
                 if isinstance(n, ast.FunctionDef) and n.name == name), None)


def class_chain(classes: dict[str, ast.ClassDef], name: str) -> list[ast.ClassDef]:
    """Class `name` and the classes of the file it inherits from, in the order Python looks
    names up for single inheritance (depth first, left to right for several bases)."""
    out: list[ast.ClassDef] = []
    todo = [name]
    while todo:
        cls = classes.get(todo.pop(0))
        if cls is None or cls in out:
            continue
        out.append(cls)
        todo[0:0] = [b.id for b in cls.bases if isinstance(b, ast.Name)]
    return out


@dataclass(frozen=True)
class Kernel:
    """One `@triton.jit` function and the Triton decorators stacked on it."""

    fn: ast.FunctionDef
    jit: ast.expr  # the jit decorator: an ast.Call when it has arguments
    autotune: ast.Call | None
    heuristics: tuple[ast.Call, ...]
    params: tuple[str, ...]
    constexprs: tuple[str, ...]  # parameters annotated tl.constexpr
    # The dict each @triton.heuristics gives, written in the decorator or a module-level
    # registry it names (`@triton.heuristics(HEURISTICS["softmax"])`, FlagGems' style).
    heuristic_dicts: tuple[ast.Dict, ...] = ()

    @property
    def name(self) -> str:
        return self.fn.name

    @property
    def autotuned(self) -> bool:
        return self.autotune is not None

    def heuristic(self, name: str) -> ast.expr | None:
        """The function @triton.heuristics gives for parameter `name` (usually a lambda)."""
        for values in self.heuristic_dicts:
            for k, v in zip(values.keys, values.values):
                if isinstance(k, ast.Constant) and k.value == name:
                    return v
        return None

    def heuristic_names(self) -> list[str]:
        """Parameters set by @triton.heuristics({...}), in the order written."""
        names: list[str] = []
        for values in self.heuristic_dicts:
            names += [k.value for k in values.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        return names


class KernelSource:
    """A parsed source file: its triton imports, kernels and module-level integer constants."""

    def __init__(self, source: str):
        self.source = source
        self.tree = ast.parse(source)
        self.aliases = _import_aliases(self.tree)
        self._bound_aliases()
        self.constants = _module_constants(self.tree)
        self.kernels: dict[str, Kernel] = {}
        twice: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef):
                kernel = self._kernel(node)
                if kernel is not None:
                    if node.name in self.kernels:
                        twice.add(node.name)
                    self.kernels[node.name] = kernel
        # Two kernels of one name (a factory's branches): which one runs is not the file's to say,
        # so neither is read, rather than rewriting one that may never run.
        for name in twice:
            del self.kernels[name]
        # `_tuned = triton.autotune(...)(triton.heuristics({...})(_kernel))` at module level
        # (xformers' way): the bound name -> the kernel's name; its record holds the decorators.
        self.wrapped: dict[str, str] = {}
        for alias, kernel in self._decorator_calls().items():
            self.kernels[kernel.name] = kernel
            if alias.isidentifier():
                self.wrapped[alias] = kernel.name

    def _bound_aliases(self) -> None:
        """`jit = triton.jit`, `_jit = functools.partial(triton.jit, do_not_specialize=[...])` at
        module level: a triton name (a decorator) under another name."""
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                if isinstance(value, ast.Call) and ast.unparse(value.func) in ("functools.partial", "partial") \
                        and value.args:
                    value = value.args[0]
                named = self.qualify(value)
                if named and node.targets[0].id not in self.aliases:
                    self.aliases[node.targets[0].id] = named

    def alias(self, home: str) -> str | None:
        """The name this file imports `home` under ("triton.language" -> "tl"), or None."""
        return next((name for name, h in self.aliases.items() if h == home), None)

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def qualify(self, node: ast.AST) -> str | None:
        """Dotted triton name of `node` (e.g. tl.load -> "triton.language.load"), or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def tl_op(self, node: ast.AST) -> str | None:
        """Short name of a triton.language function (tl.math.exp -> "exp"), or None."""
        name = self.qualify(node)
        if not name or not name.startswith(TL + "."):
            return None
        parts = name[len(TL) + 1:].split(".")
        return f"libdevice.{parts[-1]}" if "libdevice" in parts[:-1] else parts[-1]

    def decorator_name(self, dec: ast.AST) -> str | None:
        """"triton.jit", "triton.autotune", "triton.heuristics", another triton name, or None."""
        name = self.qualify(dec.func if isinstance(dec, ast.Call) else dec)
        if name is None:
            return None
        home, _, last = name.rpartition(".")
        return f"triton.{last}" if home in _DECORATOR_HOMES and last in _DECORATORS else name

    def is_constexpr(self, annotation: ast.AST | None) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            return annotation.value.split(".")[-1] == "constexpr"
        return (self.qualify(annotation) or "").endswith(".constexpr")

    def _kernel(self, fn: ast.FunctionDef) -> Kernel | None:
        by_kind: dict[str, list[ast.expr]] = {}
        for dec in fn.decorator_list:
            made = _returned(self.tree, dec) if isinstance(dec, ast.Call) and not self.decorator_name(dec) else None
            if isinstance(made, ast.Call) and self.decorator_name(made) == "triton.autotune":
                dec = made  # `@_autotune(configs, key)` of a helper returning `triton.autotune(configs, key)`
            by_kind.setdefault(self.decorator_name(dec) or "", []).append(dec)
        if "triton.jit" not in by_kind:
            return None
        calls = {k: [d for d in v if isinstance(d, ast.Call)] for k, v in by_kind.items()}
        return self._made(fn, by_kind["triton.jit"][0], next(iter(calls.get("triton.autotune", [])), None),
                          tuple(calls.get("triton.heuristics", [])))

    def _made(self, fn: ast.FunctionDef, jit: ast.expr, autotune: ast.Call | None,
              heuristics: tuple[ast.Call, ...]) -> Kernel:
        params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        dicts = [self._heuristic_dict(call) for call in heuristics]
        return Kernel(fn=fn, jit=jit, autotune=autotune, heuristics=heuristics, params=tuple(p.arg for p in params),
                      constexprs=tuple(p.arg for p in params if self.is_constexpr(p.annotation)),
                      heuristic_dicts=tuple(d for d in dicts if d is not None))

    def _heuristic_dict(self, call: ast.Call) -> ast.Dict | None:
        """The dict literal a @triton.heuristics(...) call gives."""
        values = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "values"), None)
        return self._dict_literal(values, 0) if values is not None else None

    def _dict_literal(self, node: ast.expr | None, depth: int) -> ast.Dict | None:
        """`node` as a dict literal: written there, a module-level name bound once to one, or a
        string-keyed entry of one (`HEURISTICS["softmax"]`)."""
        if isinstance(node, ast.Dict):
            return node
        if node is None or depth > 4:
            return None
        if isinstance(node, ast.Name):
            return self._dict_literal(_assigned_once(self.tree, node.id), depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            table = self._dict_literal(node.value, depth + 1)
            entry = next((v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant)
                          and k.value == node.slice.value), None) if table is not None else None
            return self._dict_literal(entry, depth + 1)
        if isinstance(node, ast.Call):  # FlagGems' `runtime.get_heuristic_config("max")`
            return self._dict_literal(_returned(self.tree, node), depth + 1)
        return None

    def _decorator_calls(self) -> dict[str, Kernel]:
        """Kernels of the file wrapped by calling `triton.autotune(...)` or `triton.heuristics(...)`
        on them, by the module-level name the wrapper is bound to ("" where the wrapper is made
        inside a function, as a cached helper does, and kept wherever); each kernel once (a
        kernel wrapped twice is launched with either, and neither is read as the kernel's own)."""
        bound = {id(n.value): n.targets[0].id for n in self.tree.body
                 if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
        found: list[tuple[str, Kernel]] = []
        inner: set[int] = set()  # calls of a chain already read from its outermost call
        for node in ast.walk(self.tree):  # breadth first: a chain's outer call comes first
            if not isinstance(node, ast.Call) or id(node) in inner:
                continue
            value, autotune, heuristics = node, None, []
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and len(value.args) == 1 \
                    and not value.keywords:
                kind = self.decorator_name(value.func)
                if kind == "triton.autotune" and autotune is None:
                    autotune = value.func
                elif kind == "triton.heuristics":
                    heuristics.append(value.func)
                else:
                    break
                inner.add(id(value))
                value = value.args[0]
            kernel = self.kernels.get(value.id) if isinstance(value, ast.Name) else None
            if kernel is None or (autotune is None and not heuristics) or kernel.autotuned or kernel.heuristics:
                continue
            found.append((bound.get(id(node), ""), self._made(kernel.fn, kernel.jit, autotune, tuple(heuristics))))
        seen = Counter(k.name for _, k in found)
        return {alias or f"<{k.name} wrapped at run time>": k for alias, k in found if seen[k.name] == 1}

    def jit_calls(self) -> dict[str, Kernel]:
        """Kernels made by calling jit on a top-level function (`_kernel = triton.jit(_body)`),
        by the name they are bound to; the kernel's own name is the function's."""
        defs = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        out = {}
        for node in self.tree.body:
            value = node.value if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if (isinstance(value, ast.Call) and self.decorator_name(value.func) == "triton.jit" and value.args
                    and isinstance(value.args[0], ast.Name) and value.args[0].id in defs
                    and isinstance(node.targets[0], ast.Name) and value.args[0].id not in self.kernels):
                out[node.targets[0].id] = self._made(defs[value.args[0].id], value, None, ())
        return out


def program_axis(call: ast.Call) -> int | None:
    """The constant axis of `tl.program_id(...)` / `tl.num_programs(...)`, or None."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, int) else None


def call_arguments(call: ast.Call, names: tuple[str, ...], skip: int = 0) -> dict[str, ast.AST]:
    """Map a call's arguments onto parameter names (skip: leading params bound elsewhere, e.g. self)."""
    bound = {names[i + skip]: a for i, a in enumerate(call.args) if i + skip < len(names)}
    bound.update({k.arg: k.value for k in call.keywords if k.arg})
    return bound


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified triton name, for every import of triton in the file."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "triton":
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases["triton"] = "triton"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "triton":
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _module_constants(tree: ast.Module) -> dict[str, int]:
    """Module-level integer constants (Triton treats globals as constexpr)."""
    consts = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = _literal_int(node.value) if node.value is not None else None
            if value is not None:
                for t in targets:
                    if isinstance(t, ast.Name):
                        consts[t.id] = value
    return consts


def _literal_int(node: ast.AST) -> int | None:
    """An int literal, also when wrapped in tl.constexpr(...)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
