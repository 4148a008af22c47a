"""The launches reachable from the entry, through helper calls, with the values each
launch's parameters and options come from, and the shape of its grid."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator

from tritonforge.analysis.astfold import bind_call, dotted_name, params_of
from tritonforge.analysis.kernel_source import class_chain, launch_target
from tritonforge.analysis.launch_sites.dispatch import table_launchers
from tritonforge.analysis.launch_sites.library_ops import library_op
from tritonforge.analysis.launch_sites.model import DEFAULT_STAGES, DEFAULT_WARPS, ConfigSpec, KernelFacts, Span
from tritonforge.analysis.launch_sites.resolve import Made, Resolved, Scope, SourceModule, is_static
from tritonforge.analysis.launch_sites.runtime import ReplayedValue, Runtime
from tritonforge.analysis.launch_sites.spreads import data_file, spread_keys
from tritonforge.analysis.launch_sites.syntax import defaults_of, env_default, fold, last_name, span_of, walk_local


@dataclass
class Use:
    """One launch value: which parameter of which launch it sets, and where it comes from."""

    launch: int  # index into the launch list
    kernel: str
    param: str  # constexpr name, "num_warps", "num_stages" or "autotune_configs"
    kind: str
    resolved: Resolved
    span: Span | None = None  # the literal, insertion point or config list
    configs: tuple[ConfigSpec, ...] | None = None
    expr: ast.expr | None = None  # what the launch passes (or the heuristic's body), for replay
    fn: ast.FunctionDef | ast.Lambda | None = None  # where `expr` is evaluated
    replayed: ReplayedValue | None = None  # set when the value is computed and replay reproduces it


@dataclass
class Launch:
    call: ast.Call
    scope: Scope
    facts: KernelFacts
    args: dict[str, str]
    grid: ast.expr
    uses: list[Use] = field(default_factory=list)
    # Literals a grid computed by host code divides a size by, found by replaying it (the
    # `64` of a helper's `return (triton.cdiv(n, 64),), 64, 1`), with their values.
    replayed_divisors: list[tuple[Span, int]] = field(default_factory=list)
    grid_unseen: bool = False  # its grid is made where analysis cannot see it, and not of the meta
    spread: ast.expr | None = None  # a dict spread into the launch whose keys the file does not say


def collect_launches(module: SourceModule, scope: Scope, runtime: Runtime | None = None) -> Iterator[Launch]:
    """`runtime`: launches captured from this very file, whose lines make a launch of a call
    this reading cannot follow (`_seen_launch`)."""
    fn = scope.fn
    assert fn is not None
    calls = sorted((n for n in walk_local(fn) if isinstance(n, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
    for call in calls:
        call = _partial_launch(module, call, scope) or call
        f = call.func
        names = _kernels_launched(module, call, scope)
        if names:  # a table of kernels (`_KERNELS[x.dtype][grid]`) launches any of its kernels
            for name in names:
                yield _launch(module, call, scope, module.kernels[name])
            continue
        callee = _callee(module, f, scope)  # else perhaps a table's launchers (`_LAUNCH[x.dtype](...)`)
        callees = [callee] if callee else [_Callee(fn, label) for fn, label in table_launchers(module, f, scope)]
        seen = _seen_launch(module, call, scope, runtime) if not callees and runtime is not None else None
        if seen is not None:
            yield seen
        for c in callees:
            if c.label not in scope.chain:  # recursion: each helper once per chain
                yield from collect_launches(module, Scope(c.fn, _bound(c, call, scope), scope.chain + (c.label,),
                                                          c.owner, c.instance, c.closure,
                                                          scope.calls + (call.lineno,)), runtime)
        for c in [] if callees or seen else _backwards(module, call, calls):
            if c.label not in scope.chain:  # gradients are tensors of the run: nothing is bound
                yield from collect_launches(module, Scope(c.fn, {}, scope.chain + (c.label,), c.owner,
                                                          calls=scope.calls + (call.lineno,)), runtime)


_GRADIENT_CALLS = ("torch.autograd.backward", "torch.autograd.grad", "autograd.backward", "autograd.grad")


def _backwards(module: SourceModule, call: ast.Call, calls: list[ast.Call]) -> list[_Callee]:
    """`y.backward(dy)` or `torch.autograd.grad(...)` after `Cls.apply(...)` of the file's
    autograd Functions in the same function: the `backward` each runs."""
    f = call.func
    if not ((isinstance(f, ast.Attribute) and f.attr == "backward" and not dotted_name(f).startswith("torch."))
            or dotted_name(f) in _GRADIENT_CALLS):
        return []
    applied = [c.func.value.id for c in calls if (c.lineno, c.col_offset) < (call.lineno, call.col_offset)
               and isinstance(c.func, ast.Attribute) and c.func.attr == "apply" and isinstance(c.func.value, ast.Name)
               and c.func.value.id in module.classes]
    out = []
    for cls in dict.fromkeys(applied):
        fn = module.method(cls, "backward")
        if fn is not None and is_static(fn):
            out.append(_Callee(fn, f"{cls}.backward", 1, cls))
    return out


_UNSEEN_GRID = "<grid made at run time>"


def _seen_launch(module: SourceModule, call: ast.Call, scope: Scope, runtime: Runtime) -> Launch | None:
    """A call the capture saw launch one kernel of this file, in a form the reading above does
    not follow (a `kernel[grid]` a helper returns or caches, `kernel.run(..., grid=grid,
    warmup=False)`): its arguments are the kernel's. Its grid is made elsewhere: where it was
    not a function of the meta-parameters, it may hold its own copy of a block, so the
    launch's blocks are not moved (`grid_unseen`)."""
    made = runtime.made_at(scope.fn.name, call) if scope.fn is not None else {}
    if len(made) != 1 or next(iter(made)) not in module.kernels:
        return None
    (name, follows), = made.items()
    facts = module.kernels[name]
    keywords = [k for k in call.keywords if k.arg not in ("grid", "warmup")]
    if len(call.args) > len(facts.params) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(_kernels_of(module, a, scope) for a in call.args):  # a launcher handed the kernel
        return None
    target = ast.Subscript(ast.Name(name, ast.Load()), ast.Name(_UNSEEN_GRID, ast.Load()), ast.Load())
    launch = _launch(module, ast.copy_location(ast.Call(target, call.args, keywords), call), scope, facts)
    launch.grid_unseen = not follows
    return launch


def _partial_launch(module: SourceModule, call: ast.Call, scope: Scope) -> ast.Call | None:
    """`launch(x, out, n)` where `launch = functools.partial(kernel[grid], BLOCK=256)`: the
    launch it makes, its arguments and the partial's merged, placed at the partial; where
    `launch = kernel[grid]`, the call itself as that launch."""
    if not isinstance(call.func, ast.Name):
        return None
    made = module.exact_value(call.func.id, scope)
    if isinstance(made, ast.Subscript) and _kernels_of(module, made.value, scope):
        # `launch = kernel[grid]`, then `launch(x, out, n, BLOCK=256)`: the launch is the call.
        return ast.copy_location(ast.Call(made, call.args, call.keywords), call)
    if not (isinstance(made, ast.Call) and last_name(made.func) == "partial" and made.args
            and isinstance(made.args[0], ast.Subscript)):
        return None
    merged = ast.Call(made.args[0], [*made.args[1:], *call.args], [*made.keywords, *call.keywords])
    return ast.copy_location(merged, made)


def _kernels_launched(module: SourceModule, call: ast.Call, scope: Scope) -> list[str]:
    """The kernels of this file a launch `X[grid](...)` may launch."""
    target = launch_target(call)
    if isinstance(target, ast.Attribute):
        name = _class_kernel(module, target, scope)
        return [name] if name else []
    return _kernels_of(module, target, scope) if target is not None else []


def _kernels_of(module: SourceModule, node: ast.expr, scope: Scope, depth: int = 0,
                part: int | None = None) -> list[str]:
    """The kernels of this file an expression stands for: the kernel itself, a name bound to
    one, a parameter of a generic launcher (`def launch(kernel, ...): kernel[grid](...)`) bound
    to one by its caller, a factory's call, or an item of a dict, list or tuple of kernels (each
    of them; with `part`, the part-th element of each item, a table of `(kernel, block)`)."""
    if depth > 8:
        return []
    if isinstance(node, ast.Name):
        shadowed = scope.fn is not None and (node.id in module.local(scope.fn)
                                             or node.id in {p.arg for p in params_of(scope.fn)})
        if node.id in module.kernels and not shadowed:
            return [node.id]
        if node.id in module.jit_alias and not shadowed:
            return [module.jit_alias[node.id]]
        bind, where, _ = module.definition(node.id, scope)
        if bind is not None and bind.exact and bind.value is not None:
            return _kernels_of(module, bind.value, where, depth + 1)
        if bind is not None and bind.part is not None and isinstance(bind.value, ast.Subscript):
            return _kernels_of(module, bind.value, where, depth + 1, bind.part)  # `kernel, block = _OPS[act]`
        return []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in module.factory:
        return [module.factory[node.func.id]]  # `make_kernel(...)`: the one kernel it makes
    if not isinstance(node, ast.Subscript):
        return []
    table: ast.expr | None = node.value
    if isinstance(table, ast.Name):
        bind, scope, _ = module.definition(table.id, scope)
        table = bind.value if bind is not None and bind.exact else None
    items = table.values if isinstance(table, ast.Dict) else \
        table.elts if isinstance(table, (ast.List, ast.Tuple)) else []
    if part is not None:
        items = [v.elts[part] if isinstance(v, ast.Tuple) and part < len(v.elts) else None for v in items]
        if any(v is None for v in items):
            return []
    names = [_kernels_of(module, v, scope, depth + 1) for v in items if v is not None]
    if not names or any(len(n) != 1 for n in names):
        return []
    return list(dict.fromkeys(n[0] for n in names))


def _class_kernel(module: SourceModule, target: ast.Attribute, scope: Scope) -> str | None:
    """The kernel of a class body a launch `self._kernel[grid](...)`, `Cls._kernel[grid](...)`
    or `obj._kernel[grid](...)` names."""
    if not isinstance(target.value, ast.Name):
        return None
    base, attr = target.value.id, target.attr
    if base == scope.self_name:
        owner = scope.owner
    elif base in module.classes:
        owner = base
    else:
        made = module.instance_of(target.value, scope)
        owner = made.cls if made else None
    return attr if owner is not None and module.kernel_class.get(attr) == owner else None


@dataclass
class _Callee:
    fn: ast.FunctionDef
    label: str  # "helper" or "Cls.method"
    skip: int = 0  # leading parameters the call does not pass (self, ctx)
    owner: str | None = None
    instance: Made | None = None
    partial: tuple[ast.Call, Scope] | None = None  # `functools.partial(fn, ...)` the call goes through
    closure: Scope | None = None  # the enclosing function's scope, for a def a factory returns


def _bound(callee: _Callee, call: ast.Call, scope: Scope) -> dict[str, tuple[ast.expr, Scope]]:
    """Each parameter of the callee and the argument it receives, in the scope it is read in;
    a partial's own arguments come first, read where the partial was made."""
    if callee.partial is None:
        return {k: (v, scope) for k, v in bind_call(callee.fn, call, callee.skip).items()}
    made, where = callee.partial
    merged = ast.Call(call.func, [*made.args[1:], *call.args], [*made.keywords, *call.keywords])
    own = {id(n) for n in made.args[1:]} | {id(k.value) for k in made.keywords}
    return {k: (v, where if id(v) in own else scope) for k, v in bind_call(callee.fn, merged, callee.skip).items()}


def _callee(module: SourceModule, f: ast.expr, scope: Scope) -> _Callee | None:
    """The function of this file a call reaches: a top-level helper, an autograd Function's
    `forward` through `Cls.apply(...)`, an instance's `forward` (an nn.Module called: `op(x)`,
    `Cls(...)(x)`) or method, a method called on `self`, or `Cls.method(...)`."""
    if isinstance(f, ast.Name) and f.id in module.functions and f.id not in module.kernels:
        return _Callee(module.functions[f.id], f.id)
    op = library_op(module, f)
    if op is not None:
        return _Callee(module.functions[op], op)
    partial = _partial_of(module, f, scope) or _closure_of(module, f, scope)
    if partial is not None:
        return partial
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) and last_name(f.value.func) == "super" \
            and scope.owner and scope.fn is not None:  # `super().__call__(x)`: the next class's method
        chain = class_chain(module.classes, scope.owner)
        here = next((i for i, c in enumerate(chain) if scope.fn in c.body), len(chain))
        found = next(((c, n) for c in chain[here + 1:] for n in c.body
                      if isinstance(n, ast.FunctionDef) and n.name == f.attr), None)
        return _Callee(found[1], f"{found[0].name}.{f.attr}", 1, scope.owner, scope.instance) if found else None
    if isinstance(f, (ast.Name, ast.Call)):  # obj(...): the instance's forward (nn.Module) or __call__
        made = module.instance_of(f, scope)
        return _method(module, made, ("forward", "__call__")) if made else None
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
        return None
    base, attr = f.value.id, f.attr
    if base == scope.self_name and scope.owner:
        return _method(module, scope.instance or scope.owner, (attr,))
    if base in module.classes:
        if attr == "apply":  # torch.autograd.Function: apply(*args) calls forward(ctx, *args)
            fn = module.method(base, "forward")
            return _Callee(fn, f"{base}.forward", 1, base) if fn and is_static(fn) else None
        fn = module.method(base, attr)
        return _Callee(fn, f"{base}.{attr}", 0, base) if fn else None
    made = module.instance_of(f.value, scope)
    return _method(module, made, (attr,)) if made else None


def _closure_of(module: SourceModule, f: ast.expr, scope: Scope) -> _Callee | None:
    """`_run(x, out)` where `_run = _make_launcher(block=256)` and the factory returns a def of
    its own body: that def, its free names read in the factory as that call made it."""
    if not isinstance(f, ast.Name):
        return None
    bind, where, _ = module.definition(f.id, scope)
    made = bind.value if bind is not None and bind.exact else None
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and made.func.id in module.functions
            and made.func.id not in module.kernels and not any(isinstance(a, ast.Starred) for a in made.args)):
        return None
    factory = module.functions[made.func.id]
    returns = {r.value.id for r in walk_local(factory) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)}
    inner = [n for n in factory.body if isinstance(n, ast.FunctionDef) and n.name in returns]
    if len(inner) != 1 or len(returns) != 1 or any(isinstance(r, ast.Return) and not isinstance(r.value, ast.Name)
                                                   for r in walk_local(factory)):
        return None
    outer = Scope(factory, {k: (v, where) for k, v in bind_call(factory, made).items()},
                  where.chain + (factory.name,))
    return _Callee(inner[0], f"{factory.name}.{inner[0].name}", closure=outer)


def _partial_of(module: SourceModule, f: ast.expr, scope: Scope) -> _Callee | None:
    """A helper of this file reached through `functools.partial(helper, ...)`, or a name bound to one."""
    where = scope
    if isinstance(f, ast.Name):
        bind, where, _ = module.definition(f.id, scope)
        f = bind.value if bind is not None and bind.exact and bind.value is not None else f
    if not (isinstance(f, ast.Call) and last_name(f.func) == "partial" and f.args and isinstance(f.args[0], ast.Name)):
        return None
    name = f.args[0].id
    if name not in module.functions or name in module.kernels or any(isinstance(a, ast.Starred) for a in f.args):
        return None
    return _Callee(module.functions[name], name, partial=(f, where))


def _method(module: SourceModule, made: Made | str, names: tuple[str, ...]) -> _Callee | None:
    """The first of `names` the class defines, called on an instance (`made`, or one of the
    class whose making is not known)."""
    cls, instance = (made, None) if isinstance(made, str) else (made.cls, made)
    for name in names:
        fn = module.method(cls, name)
        if fn is not None:
            return _Callee(fn, f"{cls}.{name}", 0 if is_static(fn) else 1, cls, instance)
    return None


def _launch(module: SourceModule, call: ast.Call, scope: Scope, facts: KernelFacts) -> Launch:
    grid = call.func.slice  # type: ignore[attr-defined]
    bound: dict[str, ast.expr] = {}
    for name, arg in zip(facts.params, _positional(module, call, scope)):
        bound[name] = arg
    options: dict[str, ast.expr] = {}
    opaque, spread = "", None  # a dict spread into the launch whose keys the file does not say
    for kw in call.keywords:
        if kw.arg is None:  # **meta: each key the dict is known to have, as `meta["KEY"]`
            keys = spread_keys(module, kw.value, scope)
            if keys is None and not opaque:
                data = data_file(module, kw.value, scope)
                opaque = f"**{module.text(kw.value)}" + (f", read at run time from {data}" if data else "")
                spread = kw.value
            for key in keys or []:
                item = ast.Subscript(kw.value, ast.Constant(key), ast.Load())  # no position: text is unparsed
                (bound if key in facts.params else options).setdefault(key, item)
        elif kw.arg in facts.params and kw.arg not in ("num_warps", "num_stages"):
            bound[kw.arg] = kw.value
        else:  # a parameter named `num_stages` takes the launch option's value too: one value, the option's
            options[kw.arg] = kw.value
    launch = Launch(call, scope, facts, {k: module.text(v) for k, v in {**bound, **options}.items()}, grid,
                    spread=spread)
    _add_uses(module, launch, bound, options, opaque)
    return launch


def _positional(module: SourceModule, call: ast.Call, scope: Scope) -> list[ast.expr]:
    """A launch's positional arguments, a `*cfg` spread of a tuple the file writes (`cfg =
    (256,)`) read item by item; they end at a spread of anything else."""
    out: list[ast.expr] = []
    for arg in call.args:
        if not isinstance(arg, ast.Starred):
            out.append(arg)
            continue
        items = arg.value
        if isinstance(items, ast.Name):
            items = module.exact_value(items.id, scope) or items
        if not isinstance(items, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in items.elts):
            break
        out += items.elts
    return out


def _add_uses(module: SourceModule, launch: Launch, bound: dict[str, ast.expr], options: dict[str, ast.expr],
              opaque: str = "") -> None:
    # A key of an opaque spread is looked up by replay (`**TILING.meta()`, a method's dict
    # literal), where the launches were captured: `spread["BLOCK"]`, unknown until then.
    def opaque_use(key: str) -> tuple[Resolved, ast.expr | None]:
        spread = launch.spread
        expr = ast.Subscript(spread, ast.Constant(key), ast.Load()) if spread is not None else None
        return Resolved("unknown", ast.unparse(expr) if expr else "",
                        f"{key} may come from {opaque}, whose keys the file does not say"), expr

    facts = launch.facts
    fn = module.functions[facts.name]
    defaults = defaults_of(fn)
    for c in facts.constexprs:
        if c in options and c in ("num_warps", "num_stages"):
            continue  # passed by keyword, it is the launch option's value too: one use, the option's (below)
        if c in facts.autotune_keys or facts.autotuned and c not in bound and c not in defaults \
                and c not in facts.heuristics and not opaque:
            continue  # set by the decorator's configs (configs built by code say so only when they run)
        if c in facts.heuristics and c not in bound:
            launch.uses.append(_heuristic_use(module, facts.name, c))
            continue
        expr, where_fn = bound.get(c), launch.scope.fn
        if c in bound:
            r = _resolve_arg(module, c, bound[c], launch.scope)
        elif c in defaults:
            r = module.resolve(defaults[c], module.module_scope())
            r.where = f"default of {facts.name}: {r.where}"
            expr, where_fn = defaults[c], None
        elif opaque:
            r, expr = opaque_use(c)
        else:
            r = Resolved("unknown", "", f"{c} is not passed at the launch")
        launch.uses.append(Use(-1, facts.name, c, "constexpr", r, expr=expr, fn=where_fn))
    for g in facts.globals:
        launch.uses.append(Use(-1, facts.name, g, "constexpr", _global_value(module, facts.name, g)))
    if facts.autotuned:
        node, configs, why = module.autotune_list(fn)
        text = module.text(node) if node else ""
        r = Resolved("configs" if configs else "unknown", text, why or "configs of @triton.autotune")
        span = span_of(node) if node else None
        launch.uses.append(Use(-1, facts.name, "autotune_configs", "autotune_configs", r, span, configs))
        return
    for opt in ("num_ctas", "maxnreg"):  # shown where written; the search leaves them as they are
        if opt in options:
            node = options[opt]
            text, line = module.text(node), getattr(node, "lineno", None)  # a spread dict's key has no line
            where = f"{opt}={text}" + (f" (line {line})" if line else "")
            launch.uses.append(Use(-1, facts.name, opt, opt, Resolved(
                "option", text, f"{where}: a launch option the search leaves as written", None,
                node.value if isinstance(node, ast.Constant) else None)))
    for opt, default in (("num_warps", DEFAULT_WARPS), ("num_stages", DEFAULT_STAGES)):
        if opt in facts.heuristics:  # `"num_warps": lambda args: ...`: Heuristics.run sets it over the launch's
            launch.uses.append(_heuristic_use(module, facts.name, opt, opt))
        elif opt in bound:  # a kernel parameter of that name passed by position: a keyword would clash
            continue
        elif opt in options:
            r = _resolve_arg(module, opt, options[opt], launch.scope)
            launch.uses.append(Use(-1, facts.name, opt, opt, r, expr=options[opt], fn=launch.scope.fn))
        elif opaque:  # inserting it could clash with the spread dict's own
            r, expr = opaque_use(opt)
            launch.uses.append(Use(-1, facts.name, opt, opt, r, expr=expr, fn=launch.scope.fn))
        else:
            r = Resolved("insert", str(default), f"not passed: Triton's default {default}", None, default)
            launch.uses.append(Use(-1, facts.name, opt, opt, r, insertion_point(launch.call, opt)))


def _global_value(module: SourceModule, kernel: str, name: str) -> Resolved:
    """A module-level `NAME = tl.constexpr(<int>)` the kernel reads: its literal is the tunable,
    and host code that reads `NAME` (the grid's `NAME.value`) follows the same edit."""
    call = module.constexpr_global(name)
    assert call is not None
    default = env_default(call.args[0])  # `tl.constexpr(int(os.getenv("B", "64")))`: the "64"
    arg = default or call.args[0]
    value = int(default.value) if default is not None else fold(arg)
    if value is None or not isinstance(arg, ast.Constant):
        return Resolved("derived", module.text(arg), f"{name} = {module.text(call)} at module level, read inside "
                                                     f"{kernel}: not an integer literal")
    return Resolved("literal", module.text(arg), f"{name} = {module.text(call)} at module level (line {call.lineno}), "
                                                 f"read inside {kernel}", arg, value)


def _heuristic_use(module: SourceModule, kernel: str, param: str, kind: str = "constexpr") -> Use:
    fn = module.heuristic(kernel, param)
    body = fn.body if isinstance(fn, ast.Lambda) else None
    if isinstance(fn, ast.Name) and fn.id in module.functions:  # a named function of the file
        fn = module.functions[fn.id]
        code = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        body = code[0].value if len(code) == 1 and isinstance(code[0], ast.Return) else None
    if body is None:
        why = "a function whose body is one return" if isinstance(fn, ast.FunctionDef) else "a lambda"
        return Use(-1, kernel, param, kind, Resolved(
            "unknown", "", f"{param} is set by @triton.heuristics, by something other than {why}"))
    text = module.text(body)
    r = Resolved("heuristic", text, f"@triton.heuristics: {param} = {text} (line {body.lineno})")
    return Use(-1, kernel, param, kind, r, expr=body, fn=fn)  # type: ignore[arg-type]


def _resolve_arg(module: SourceModule, name: str, expr: ast.expr, scope: Scope) -> Resolved:
    r = module.resolve(expr, scope)
    if r.node is expr:  # written at the launch itself
        r.where = f"{name}={r.text} (line {expr.lineno})"
    return r


def insertion_point(call: ast.Call, name: str) -> Span:
    parts: list[Any] = [*call.args, *call.keywords]
    if not parts:
        # Just inside the closing parenthesis, which ends the call.
        line, col = call.end_lineno or call.lineno, (call.end_col_offset or 1) - 1
        return Span(line, col, line, col, 0, name, False)
    last = max(parts, key=lambda n: (n.end_lineno, n.end_col_offset))
    return Span(last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset, 0, name, True)


def grid_expr(module: SourceModule, launch: Launch) -> tuple[ast.AST, str]:
    """The grid a launch passes, a name resolved to what it stands for (an exact assignment,
    or a `def grid(META)`), and that expression's text where a name was resolved to one."""
    expr = launch.grid
    if isinstance(expr, ast.Name):
        bind, _, _ = module.definition(expr.id, launch.scope)
        if bind is not None and bind.value is not None and bind.exact:
            return bind.value, module.text(bind.value)
        if (fn := _grid_def(module, launch, expr.id)) is not None:
            return fn, ""
    return expr, ""


def grid_form(module: SourceModule, launch: Launch) -> tuple[str, str, tuple[str, ...]]:
    """(kind, the expression a grid name stands for, meta keys a lambda or a `def grid(META)` reads)."""
    expr, resolved = grid_expr(module, launch)
    if isinstance(expr, (ast.Lambda, ast.FunctionDef)):
        meta = params_of(expr)[0].arg if params_of(expr) else None
        keys = [n.slice.value for n in ast.walk(expr) if isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Name) and n.value.id == meta
                and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)]
        return "lambda" if isinstance(expr, ast.Lambda) else "def", resolved, tuple(dict.fromkeys(keys))
    if isinstance(expr, (ast.Tuple, ast.List)):
        return "tuple", resolved, ()
    if isinstance(expr, ast.Call):
        return "call", resolved, ()
    return "other", resolved, ()


def _grid_def(module: SourceModule, launch: Launch, name: str) -> ast.FunctionDef | None:
    """`def grid(META): return (...)`, defined in the launching function or at module level."""
    inner = [n for n in walk_local(launch.scope.fn) if isinstance(n, ast.FunctionDef) and n.name == name] \
        if launch.scope.fn is not None else []
    return inner[0] if len(inner) == 1 else module.functions.get(name)


def grid_literals(module: SourceModule, launch: Launch) -> list[tuple[Span, int]]:
    """Integer literals the grid divides a size by (and the `255` of `(n + 255) // 256`, delta -1).

    A literal dividing a count of blocks (`triton.cdiv(n, BLOCK) // 8`: eight blocks a split)
    groups blocks, so it is no copy of a block size, whatever its value."""
    out: list[tuple[Span, int]] = []
    seen: set[tuple[int, str]] = set()

    def lit(node: ast.expr, scope: Scope, delta: int) -> None:
        r = module.resolve(node, scope)
        if r.kind == "literal" and r.node is not None:
            out.append((span_of(r.node, delta), r.value - delta))

    def walk(node: ast.expr, scope: Scope, depth: int) -> None:
        lambda_args = {p.arg for n in ast.walk(node) if isinstance(n, ast.Lambda) for p in params_of(n)}
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and last_name(n.func).endswith("cdiv") and len(n.args) >= 2:
                if not _is_count(module, n.args[0], scope, 0):
                    lit(n.args[1], scope, 0)
            elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Div)):
                if _is_count(module, n.left, scope, 0):
                    continue
                lit(n.right, scope, 0)
                if isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Add):
                    lit(n.left.right, scope, -1)
            elif isinstance(n, ast.Name) and n.id not in lambda_args and depth < 6:
                key = (id(scope.fn), n.id)
                bind, where, _ = module.definition(n.id, scope)
                if key not in seen and bind is not None and bind.value is not None and fold(bind.value) is None:
                    seen.add(key)
                    walk(bind.value, where, depth + 1)

    walk(launch.grid, launch.scope, 0)
    return out


def divisor_literals(module: SourceModule, launch: Launch, knobs: tuple[ast.Constant, ...]) -> list[tuple[Span, int]]:
    """Of the literals replaying a grid read, those it divides a size by (as `grid_literals`
    finds them in a grid written out, without following names: the helper's scope is not known)."""
    out = []
    for k in knobs:
        up = module.parent(k)
        if isinstance(up, ast.Call) and last_name(up.func).endswith("cdiv") and len(up.args) >= 2 and up.args[1] is k:
            dividend = up.args[0]
        elif isinstance(up, ast.BinOp) and isinstance(up.op, (ast.FloorDiv, ast.Div)) and up.right is k:
            dividend = up.left
        else:
            continue
        if not _is_count(module, dividend, launch.scope, _FOLLOW_NAMES):
            out.append((span_of(k), k.value))
    return out


_FOLLOW_NAMES = 4  # the depth at which _is_count stops following names


def _is_count(module: SourceModule, node: ast.expr, scope: Scope, depth: int) -> bool:
    """Whether `node` is a number of blocks: a `cdiv`, a ceiling division `(n + 255) // 256`, a
    floor division of either, give or take a constant, directly or through the name it is
    bound to. `n // 2` of a size stays a size."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and fold(node.right) is not None:
        node = node.left
    if isinstance(node, ast.Call) and last_name(node.func).endswith("cdiv"):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        ceiling = isinstance(node.left, ast.BinOp) and isinstance(node.left.op, (ast.Add, ast.Sub))
        return ceiling or _is_count(module, node.left, scope, depth)
    if isinstance(node, ast.Name) and depth < _FOLLOW_NAMES:
        bind, where, _ = module.definition(node.id, scope)
        if bind is not None and bind.value is not None and bind.exact:
            return _is_count(module, bind.value, where, depth + 1)
    return False
