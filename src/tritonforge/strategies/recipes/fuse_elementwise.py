"""Fusion: two elementwise launches of the entry, joined through a temporary, become one kernel.

The first kernel stores a value to a temporary at some index of its program's elements, the
second loads it back at the same index; fused, the value stays in registers: one launch, one
write and one read of the temporary fewer. The new kernel runs the first kernel's body, then
the second's (its names suffixed), with the store kept only if the entry still uses the
temporary afterwards and the load replaced by the value, cast to the temporary's element type
as the store and load did.

Applies only where that is the same computation: both kernels straight-line (no loops, no
reductions, atomics, dots, only `program_id(0)`), the same grid and block at both launches,
the temporary stored once and loaded at the same index under the same mask, nothing between
the launches touching it, and neither kernel writing what the other reads.
"""

from __future__ import annotations

import ast
import copy

from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments
from tritonforge.strategies.editing import Edit, Place, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.exprs import Expand, single_assignments
from tritonforge.strategies.recipes.host import Launch, first_pair, fresh_name, used_after, used_between

_NOT_ELEMENTWISE = ("sum", "max", "min", "reduce", "cumsum", "cumprod", "dot", "argmax", "argmin", "num_programs",
                    "associative_scan", "histogram", "sort", "debug_barrier")


class FuseElementwise(Recipe):
    name = "fuse_elementwise"
    points_to = frozenset({"memory_bound_near_peak", "redundant_traffic", "at_roofline_floor"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        found = first_pair(ks, entry, lambda fn, a, b: _pair(ks, fn, a, b))
        if isinstance(found, str):
            return found
        a, b, plan = found
        sa, sb, ka, kb = a.stmt, b.stmt, a.kernel, b.kernel
        fused_name = _free_name(ks, f"{ka.name}__{kb.name.lstrip('_')}")
        kernel_text = _fused_kernel(ks, ka, kb, plan, fused_name)
        launch_text = _fused_launch(ks, a.call, b.call, ka, kb, plan, fused_name)
        edits = [Edit(Place(sa.lineno, 0, sb.lineno, 0), ""),  # the first launch goes
                 Edit(Place.of(sb), launch_text),
                 Edit(Place.point(kb.fn.end_lineno, kb.fn.end_col_offset), "\n\n\n" + kernel_text)]
        if sb.lineno != sa.end_lineno + 1:  # statements between stay: delete only the first launch's lines
            edits[0] = Edit(Place(sa.lineno, 0, sa.end_lineno + 1, 0), "")
        return Rewrite(apply_edits(source, edits),
                       f"{ka.name} and {kb.name}: one launch, the temporary '{plan.tmp}' kept in registers"
                       + ("" if plan.keep_store else " and no longer written"))


class _Pair:
    def __init__(self, tmp: str, store_param: str, load_param: str, rename: dict[str, str], extra: list[str],
                 keep_store: bool):
        self.tmp = tmp  # the entry's name of the temporary
        self.store_param, self.load_param = store_param, load_param  # its parameter in the first, the second
        self.rename = rename  # the second kernel's names -> the fused kernel's
        self.extra = extra  # the second kernel's parameters the fused kernel takes (original names)
        self.keep_store = keep_store


def _accesses(ks: KernelSource, kernel: Kernel) -> dict[str, dict[str, list[ast.Call]]] | str:
    """{pointer parameter: {"load": [...], "store": [...]}} of a straight-line elementwise kernel."""
    if kernel.autotuned or kernel.heuristics:
        return "autotuned or with heuristics"
    fn = kernel.fn
    if fn.args.defaults or fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
        return "parameters with defaults or * / **"
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Return)):
            return "not straight-line code (a loop, a branch or a return)"
        if isinstance(node, ast.Call):
            op = ks.tl_op(node.func) or ""
            if op in _NOT_ELEMENTWISE or op.startswith("atomic"):
                return f"not elementwise (tl.{op})"
            if op == "program_id" and ast.unparse(node) not in (f"{ast.unparse(node.func)}(0)",
                                                              f"{ast.unparse(node.func)}(axis=0)"):
                return "reads a program id other than 0"
    out: dict[str, dict[str, list[ast.Call]]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and ks.tl_op(node.func) in ("load", "store"):
            ptr = node.args[0] if node.args else None
            base = _base(ptr)
            if base is None or base not in kernel.params:
                return "a load or store whose address is not a parameter plus an index"
            out.setdefault(base, {"load": [], "store": []})[ks.tl_op(node.func)].append(node)
    return out


def _base(ptr: ast.AST | None) -> str | None:
    if isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) and isinstance(ptr.left, ast.Name):
        return ptr.left.id
    return None


def _index(call: ast.Call, env: dict[str, ast.expr], rename: dict[str, str] | None = None) -> str:
    """The index and mask of a load or store, with locals expanded (and names renamed), as text."""
    mask = next((k.value for k in call.keywords if k.arg == "mask"), None)
    parts = [call.args[0].right, mask]
    out = []
    for node in parts:
        if node is None:
            out.append("-")
            continue
        expanded = Expand(env).visit(copy.deepcopy(node))
        if rename:
            for n in ast.walk(expanded):
                if isinstance(n, ast.Name) and n.id in rename:
                    n.id = rename[n.id]
        out.append(ast.dump(expanded))
    return "|".join(out)


def _pair(ks: KernelSource, fn: ast.FunctionDef, first: Launch, second: Launch) -> _Pair | str:
    ca, ka, cb, kb = first.call, first.kernel, second.call, second.kernel
    acc_a, acc_b = _accesses(ks, ka), _accesses(ks, kb)
    if isinstance(acc_a, str) or isinstance(acc_b, str):
        return f"{ka.name if isinstance(acc_a, str) else kb.name} is {acc_a if isinstance(acc_a, str) else acc_b}"
    if ks.text(ca.func.slice) != ks.text(cb.func.slice):
        return "the two launches use different grids"
    if any(isinstance(a, ast.Starred) for a in [*ca.args, *cb.args]) or \
            any(k.arg is None for k in [*ca.keywords, *cb.keywords]):
        return "a launch passes arguments with * or **"
    args_a = {k: ks.text(v) for k, v in call_arguments(ca, ka.params).items()}
    args_b = {k: ks.text(v) for k, v in call_arguments(cb, kb.params).items()}
    if set(ka.params) - set(args_a) or set(kb.params) - set(args_b):
        return "a launch leaves a kernel parameter out"
    stored_a = {p for p, a in acc_a.items() if a["store"]}
    loaded_b = {p for p, a in acc_b.items() if a["load"]}
    tmp = next(((pa, pb) for pa in stored_a for pb in loaded_b
                if args_a[pa] == args_b[pb] and args_a[pa].isidentifier()
                and not acc_a[pa]["load"] and len(acc_a[pa]["store"]) == 1 and not acc_b[pb]["store"]), None)
    if tmp is None:
        return "the second does not load what the first stores (through a temporary named in the entry)"
    pa, pb = tmp
    name = args_a[pa]
    if used_between(first, second, {name}):
        return f"'{name}' is used between the two launches"
    for p in {p for p, a in acc_b.items() if a["store"]}:
        if args_b[p] in args_a.values():
            return f"the second writes '{args_b[p]}', which the first reads"
    for p in stored_a - {pa}:
        if args_a[p] in args_b.values():
            return f"the first writes '{args_a[p]}', which the second reads"
    by_text = {v: k for k, v in args_a.items()}
    rename: dict[str, str] = {}
    extra: list[str] = []
    taken = set(ka.params) | _stored(ka.fn)
    for p in kb.params:
        if p != pb and args_b[p] in by_text and (p in kb.constexprs) == (by_text[args_b[p]] in ka.constexprs):
            rename[p] = by_text[args_b[p]]
        elif p != pb:
            rename[p] = _suffix(p, taken)
            extra.append(p)
    for local in _stored(kb.fn):
        rename.setdefault(local, _suffix(local, taken))
    env_a, env_b = single_assignments(ka.fn.body), single_assignments(kb.fn.body)
    store_at = _index(acc_a[pa]["store"][0], env_a)
    _same_block(acc_a[pa]["store"][0], env_a, acc_b[pb]["load"], env_b, ka, kb, rename, extra)
    if any(_index(load, env_b, rename) != store_at for load in acc_b[pb]["load"]):
        return "the second loads the temporary at another index or under another mask than the first stored it"
    # Lanes outside that mask now hold the first kernel's value, not the load's fill: the
    # second kernel may write only where the mask holds.
    mask = store_at.split("|")[1]
    if any(_index(st, env_b, rename).split("|")[1] != mask for a in acc_b.values() for st in a["store"]):
        return "the second stores under another mask than it loads the temporary"
    return _Pair(name, pa, pb, rename, extra, used_after(fn, second.stmt.end_lineno, name))


def _same_block(store: ast.Call, env_a: dict, loads: list[ast.Call], env_b: dict, ka: Kernel, kb: Kernel,
                rename: dict[str, str], extra: list[str]) -> None:
    """When the launches pass different block sizes (a launch move changed one), the fused
    kernel runs the second kernel's body with the first one's block: both are elementwise over
    the same index, so the second covers exactly the elements the first stored."""
    def blocks(call: ast.Call, env: dict, constexprs: tuple[str, ...]) -> set[str]:
        index = Expand(env).visit(copy.deepcopy(call.args[0].right))
        return {n.id for n in ast.walk(index) if isinstance(n, ast.Name) and n.id in constexprs}

    mine = blocks(store, env_a, ka.constexprs)
    theirs = set().union(*(blocks(load, env_b, kb.constexprs) for load in loads))
    if len(mine) == 1 and len(theirs) == 1:
        b = next(iter(theirs))
        if b in extra:
            extra.remove(b)
            rename[b] = next(iter(mine))


def _stored(fn: ast.FunctionDef) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _suffix(name: str, taken: set[str]) -> str:
    new = f"{name}_2"
    while new in taken:
        new += "_"
    taken.add(new)
    return new


def _free_name(ks: KernelSource, name: str) -> str:
    return fresh_name(name, {n.name for n in ast.walk(ks.tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))})


class _Rename(ast.NodeTransformer):
    def __init__(self, rename: dict[str, str]):
        self.rename = rename

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.rename:
            return ast.copy_location(ast.Name(self.rename[node.id], node.ctx), node)
        return node


def _fused_kernel(ks: KernelSource, ka: Kernel, kb: Kernel, plan: _Pair, name: str) -> str:
    value = "_fused_" + plan.tmp
    body_a = []
    for stmt in ka.fn.body:
        stmt = copy.deepcopy(stmt)
        store = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and ks.tl_op(n.func) == "store"
                      and _base(n.args[0]) == plan.store_param), None)
        if store is None:
            body_a.append(stmt)
            continue
        stored = store.args[1] if len(store.args) > 1 else next(k.value for k in store.keywords if k.arg == "value")
        cast = ast.parse(f"({ast.unparse(stored)}).to({plan.store_param}.dtype.element_ty)", mode="eval").body
        body_a.append(ast.Assign([ast.Name(value, ast.Store())], cast, lineno=0))
        if plan.keep_store:
            body_a.append(stmt)
    body_b = []
    for stmt in kb.fn.body:
        stmt = copy.deepcopy(stmt)
        for n in ast.walk(stmt):
            for field, child in ast.iter_fields(n):
                if isinstance(child, ast.Call) and ks.tl_op(child.func) == "load" and \
                        _base(child.args[0]) == plan.load_param:
                    setattr(n, field, ast.Name(value, ast.Load()))
        body_b.append(_Rename(plan.rename).visit(stmt))
    params = [ast.unparse(a) for a in ka.fn.args.args]
    params += [ast.unparse(_Rename(plan.rename).visit(copy.deepcopy(a)))
               .replace(a.arg, plan.rename[a.arg], 1) for a in kb.fn.args.args if a.arg in plan.extra]
    jit = ks.text(ka.jit)
    lines = [f"@{jit}", f"def {name}({', '.join(params)}):",
             f"    # {ka.name}, then {kb.name}, with '{plan.tmp}' kept in registers (fuse_elementwise)"]
    lines += [_indent(ast.unparse(ast.fix_missing_locations(s))) for s in body_a]
    lines += [_indent(ast.unparse(ast.fix_missing_locations(s))) for s in body_b]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())


def _fused_launch(ks: KernelSource, ca: ast.Call, cb: ast.Call, ka: Kernel, kb: Kernel, plan: _Pair,
                  name: str) -> str:
    args_a = call_arguments(ca, ka.params)
    args_b = call_arguments(cb, kb.params)
    pairs = [f"{p}={ks.text(args_a[p])}" for p in ka.params]
    pairs += [f"{plan.rename[p]}={ks.text(args_b[p])}" for p in plan.extra]
    pairs += [f"{k.arg}={ks.text(k.value)}" for k in ca.keywords if k.arg not in ka.params]
    return f"{name}[{ks.text(ca.func.slice)}]({', '.join(pairs)})"
