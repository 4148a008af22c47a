"""Single tiles: a block that must cover a whole argument of its launch.

`cols = tl.arange(0, BLOCK)` masked by `cols < n_cols`, with no offset added to `cols`, is
one tile over the first `n_cols` elements (a single-pass softmax's row): a block below
`n_cols` skips elements and gives wrong results. Found from the kernel's body alone; the
bound itself comes from what the captured launches received for `n_cols`.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.astfold import last_name
from tritonforge.analysis.launch_sites.syntax import bindings, walk_local


def single_tiles(fn: ast.FunctionDef, constexprs: set[str], params: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(constexpr, parameter) pairs: a `tl.arange(0, C)`, offset by nothing, compared with
    `< p` (or `p >`) where `p` is a kernel parameter the body never rebinds."""
    bound = bindings(walk_local(fn))
    aranges = {name: c for name, binds in bound.items() if len(binds) == 1
               and (c := _arange_of(binds[0].value, constexprs)) is not None and binds[0].exact}
    plain = {p for p in params if p not in constexprs and p not in bound}
    out: dict[tuple[str, str], None] = {}
    for node in walk_local(fn):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, ast.Gt):
            left, right = right, left
        elif not isinstance(op, ast.Lt):
            continue
        c = _pure_arange(left, aranges, constexprs)
        if c is not None and isinstance(right, ast.Name) and right.id in plain:
            out[(c, right.id)] = None
    return tuple(out)


def _arange_of(node: ast.expr | None, constexprs: set[str]) -> str | None:
    """C of `tl.arange(0, C)`."""
    if not (isinstance(node, ast.Call) and last_name(node.func) == "arange" and len(node.args) == 2):
        return None
    start, end = node.args
    if isinstance(start, ast.Constant) and start.value == 0 and isinstance(end, ast.Name) and end.id in constexprs:
        return end.id
    return None


def _pure_arange(node: ast.expr, aranges: dict[str, str], constexprs: set[str]) -> str | None:
    """C where `node` is `tl.arange(0, C)` itself, a name bound once to it, or that name
    broadcast (`cols[None, :]`)."""
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not all(_is_none(p) or (isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None) for p in parts):
            return None
        node = node.value
    if isinstance(node, ast.Name):
        return aranges.get(node.id)
    return _arange_of(node, constexprs)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def host_floors(fn: ast.FunctionDef) -> dict[str, str]:
    """{B: A} for each guard of the launching function that raises unless `B >= A`, both
    names: `if A > B: raise ...` (Triton's layer-norm tutorial: `if N > BLOCK_SIZE: raise
    RuntimeError(...)`), `if B < A: raise`, `assert B >= A`, `assert A <= B`. A move of B
    below A on some case would make the entry raise there."""
    out: dict[str, str] = {}
    for node in walk_local(fn):
        if isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Raise) \
                and not node.orelse:
            pair = _less(node.test, raises=True)
        elif isinstance(node, ast.Assert):
            pair = _less(node.test, raises=False)
        else:
            continue
        if pair is not None:
            out.setdefault(pair[0], pair[1])
    return out


def _less(test: ast.expr, raises: bool) -> tuple[str, str] | None:
    """(B, A), both plain names, where `test` is a guard's raising condition saying B < A
    (`raises`) or an assertion saying B >= A."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Name)):
        return None
    if raises:
        forms = {ast.Lt: (left, right), ast.Gt: (right, left)}
    else:
        forms = {ast.GtE: (left, right), ast.LtE: (right, left)}
    pair = forms.get(type(op))
    return (pair[0].id, pair[1].id) if pair else None


def launch_guards(fn: ast.AST | None, args: dict[str, str]) -> tuple[str, ...]:
    """What the launching function's guards require of the values its launch passes, in the
    kernel's parameter names: `assert BLOCK % CBLOCK == 0` (lightning attention) or `if
    BLOCK % CBLOCK: raise`, where each name the guard reads is passed by that name to a
    parameter. A move that breaks one makes the entry raise, so it is never proposed."""
    passed = {text: param for param, text in args.items() if text.isidentifier()}
    out: list[str] = []
    for node in walk_local(fn) if isinstance(fn, ast.FunctionDef) else ():
        if isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Raise) \
                and not node.orelse:
            test: ast.expr = ast.UnaryOp(ast.Not(), node.test)
        elif isinstance(node, ast.Assert):
            test = node.test
        else:
            continue
        names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        if names and names <= set(passed) and not any(isinstance(n, ast.Call) for n in ast.walk(test)):
            out.append(ast.unparse(_Renamed(passed).visit(test)))
    return tuple(out)


class _Renamed(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self.names.get(node.id, node.id), node.ctx)
