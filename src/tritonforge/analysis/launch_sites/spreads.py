"""The keys of a dict spread into a launch (`**meta`), as the file writes them, and the data
file a spread is read from when the file does not say them."""

from __future__ import annotations

import ast

from tritonforge.analysis.astfold import params_of
from tritonforge.analysis.launch_sites.resolve import Scope, SourceModule, config_holder, config_keys
from tritonforge.analysis.launch_sites.syntax import dict_setdefault, dict_update, keyword_dict, last_name, walk_local


_READS = ("open", "load", "loads", "safe_load", "read_text", "read_bytes")  # json.load, Path.read_text, ...
_DATA = (".json", ".yaml", ".yml", ".toml", ".csv", ".txt", ".pt")


def data_file(module: SourceModule, expr: ast.expr, scope: Scope) -> str | None:
    """Where a value the file does not write comes from, when the helpers that make it read a
    file (a tuned-config JSON beside the module): the file's name as written, or "a file"."""
    fns: list[ast.FunctionDef] = []
    todo: list[ast.expr] = [expr]
    while todo and len(fns) < 8:
        node = todo.pop()
        if isinstance(node, ast.Name):
            bind, _, _ = module.definition(node.id, scope)
            todo += [bind.value] if bind is not None and bind.value is not None else []
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            fn = module.functions.get(call.func.id)
            if fn is not None and fn not in fns and call.func.id not in module.kernels:
                fns.append(fn)
                todo += [n for n in walk_local(fn) if isinstance(n, ast.Call)]
    if not any(last_name(n.func) in _READS for fn in fns for n in walk_local(fn) if isinstance(n, ast.Call)):
        return None
    names = [n.value for fn in fns for n in walk_local(fn) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and n.value.lower().endswith(_DATA)]
    return names[0] if names else "a file"


def spread_keys(module: SourceModule, expr: ast.expr, scope: Scope, depth: int = 0) -> list[str] | None:
    """The string keys a dict spread into a launch (`**meta`) has, where the file says: a dict
    literal (its own `**` spreads included) or `dict(...)` call, a record's
    `dataclasses.asdict(...)`, a table's `.get(key, {})`, a name bound to one (in each of its
    bindings), or a helper of this file whose every `return` gives one (the keys of all its
    returns). None where unknown."""
    if depth > 6:
        return None
    made = module.config_made(config_holder(expr), scope)  # `**cfg.all_kwargs()` of a triton.Config
    if made is not None:
        return config_keys(made[0], isinstance(expr, ast.Call))
    if isinstance(expr, ast.Call) and (last_name(expr.func) == "asdict" and len(expr.args) == 1 or
                                       isinstance(expr.func, ast.Attribute) and expr.func.attr == "_asdict"
                                       and not expr.args and not expr.keywords):
        # `**dataclasses.asdict(cfg)`, a NamedTuple's `**cfg._asdict()`: the record's fields
        record = module.instance_of(expr.args[0] if expr.args else expr.func.value, scope)  # type: ignore[attr-defined]
        fields = module.record_fields(record.cls) if record is not None else None
        return [name for name, _ in fields] if fields else None
    if isinstance(expr, ast.Call) and last_name(expr.func) == "MappingProxyType" and len(expr.args) == 1:
        return spread_keys(module, expr.args[0], scope, depth + 1)  # a read-only view of a dict
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args:
        expr = keyword_dict(expr)  # `dict(**_BASE, BLOCK=64)`: a dict display by another name
    if isinstance(expr, ast.Dict):  # `{**_BASE, **_OVERRIDES.get(dtype, {}), "BLOCK": 64}`
        parts = [spread_keys(module, v, scope, depth + 1) if k is None else
                 [k.value] if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                 for k, v in zip(expr.keys, expr.values)]
        return None if any(p is None for p in parts) else _union(parts)  # type: ignore[arg-type]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" \
            and len(expr.args) == 2 and isinstance(expr.func.value, ast.Name):
        return _table_get_keys(module, expr, scope, depth)
    if isinstance(expr, ast.Name):
        return _name_keys(module, expr.id, scope, depth)
    held = module.member(expr, scope)  # `**self.launch_kwargs`, set once in the class
    if held is not None:
        return spread_keys(module, held[0], held[1], depth + 1)
    if isinstance(expr, ast.Attribute):  # `**self.cfg.launch`: a dict field of a record instance
        holder = module.member(expr.value, scope) or (expr.value, scope)
        made = module.instance_of(*holder)
        found = module.field_value(made.cls, expr.attr, made) if made is not None else ""
        return spread_keys(module, found[0], found[1], depth + 1) if isinstance(found, tuple) else None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in module.functions:
        helper = module.functions[expr.func.id]
        inner = Scope(helper, {}, scope.chain + (helper.name,))
        returns = [n.value for n in walk_local(helper) if isinstance(n, ast.Return)]
        keys = [spread_keys(module, r, inner, depth + 1) if r is not None else None for r in returns]
        return None if not keys or any(k is None for k in keys) else _union(keys)  # type: ignore[arg-type]
    return None


def _name_keys(module: SourceModule, name: str, scope: Scope, depth: int) -> list[str] | None:
    """The keys of a dict a name holds: every binding's (`extra = {}`, then `extra =
    {"waves_per_eu": 2}` on one platform), and the items the code adds to it."""
    bind, where, _ = module.definition(name, scope)
    binds = [bind] if bind is not None else []
    if bind is None and scope.fn is not None and module.local(scope.fn).get(name):
        binds = module.local(scope.fn)[name]
    elif bind is None and (scope.fn is None or name not in {p.arg for p in params_of(scope.fn)}):
        binds, where = module.top.get(name, []), module.module_scope()
    if not binds or any(not (b.exact and b.value) for b in binds):
        return None
    keys = [spread_keys(module, b.value, where, depth + 1) for b in binds]
    if any(k is None for k in keys):
        return None
    # Items are added where the name lives: `**kwargs` of a launcher is filled in the launcher,
    # though its value was made by the caller.
    own = scope.fn is not None and (name in module.local(scope.fn) or name in {p.arg for p in params_of(scope.fn)}
                                    or name == getattr(scope.fn.args.kwarg, "arg", None))
    return _union([*keys, _added_keys(name, scope.fn if own else where.fn or module.tree)])  # type: ignore[list-item]


def _table_get_keys(module: SourceModule, call: ast.Call, scope: Scope, depth: int) -> list[str] | None:
    """`_OVERRIDES.get(x.dtype, {})`, a table of dicts: the keys of any of its entries."""
    bind, where, _ = module.definition(call.func.value.id, scope)  # type: ignore[attr-defined]
    if not (bind and bind.exact and isinstance(bind.value, ast.Dict)) or None in bind.value.keys:
        return None
    keys = [spread_keys(module, v, where, depth + 1) for v in [*bind.value.values, call.args[1]]]
    return None if any(k is None for k in keys) else _union(keys)  # type: ignore[arg-type]


def _union(keys: list[list[str]]) -> list[str]:
    return list(dict.fromkeys(k for ks in keys for k in ks))


def _added_keys(name: str, body: ast.AST) -> list[str]:
    """The string keys a dict bound to `name` gains where it is made: `name["BLOCK"] = 64`,
    `name.update(num_warps=2)`, `name.setdefault("num_warps", 4)`."""
    keys: list[str] = []
    for node in walk_local(body):
        if isinstance(node, ast.Assign):
            keys += [t.slice.value for t in node.targets if isinstance(t, ast.Subscript)
                     and isinstance(t.value, ast.Name) and t.value.id == name
                     and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)]
        elif isinstance(node, ast.Expr) and (update := dict_update(node)) is not None and update[0] == name:
            keys += [k.value for k, _ in update[1] if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.Expr) and (default := dict_setdefault(node)) is not None and default[0] == name \
                and isinstance(default[1], ast.Constant) and isinstance(default[1].value, str):
            keys.append(default[1].value)
    return keys
