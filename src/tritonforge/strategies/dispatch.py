"""One file that calls, for each range of input sizes, the version of the code measured
fastest there: the best file kept as it is, then a copy of only what another version changes
(renamed with a suffix), and the entry redefined to choose by size.

The versions are the same problem file with different launch values, so most top-level
definitions are shared; a definition is copied when its text differs from the best's, or
when it refers to a definition that is copied (the entry that reads a changed module
constant, say).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonforge.analysis.kernel_source import entry_function
from tritonforge.problem.custom_ops import RenameOps, defined_ops

# What the problem format reads from a file: it stays the best file's own.
PROBLEM_NAMES = frozenset({"ENTRY", "make_inputs", "reference", "SHAPES", "TEST_SHAPES", "OUTPUTS", "BYTES",
                           "FLOPS", "TOLERANCE"})


@dataclass(frozen=True)
class Variant:
    """Another version of the file, called when `condition` (an expression of the entry's
    parameters, e.g. "x.numel() <= 1048576") holds; "" (last only): whenever none before held."""

    source: str | None  # None: the best file itself
    condition: str
    note: str = ""  # what it changes, for the comment above its copy


def dispatch_source(best: str, entry: str, variants: list[Variant]) -> str:
    """The best file with each variant's changed definitions appended under suffixed names
    and `entry` redefined to call the first variant whose condition holds, else the best."""
    if any(not v.condition for v in variants[:-1]):
        raise ValueError("only the last version may go without a condition")
    best_tree = ast.parse(best)
    found = entry_function(best_tree, entry)
    if found is None:
        raise ValueError(f"entry {entry!r} is not a top-level function of the best file")
    entry_def = found.signature(entry)
    fallback = f"_{entry}_best"
    lines = [best.rstrip("\n"), "", "",
             "# --- Per-shape dispatch (TritonForge): the cases were measured fastest with different",
             "# launch values; each size range below calls the version that won it.",
             f"{fallback} = {entry}"]
    calls = []
    k = 0
    for variant in variants:
        if variant.source is None:
            calls.append((variant.condition, fallback))
            continue
        k += 1
        suffix = f"_v{k}"
        tree = ast.parse(variant.source)
        copied = _copied_names(best_tree, tree, entry)
        lines += ["", ""] + ([f"# version {k}: {variant.note}"] if variant.note else [])
        lines.append(_renamed_code(tree, copied, suffix))
        calls.append((variant.condition, f"{entry}{suffix}" if entry in copied else fallback))
    lines += ["", "", _dispatcher(entry_def, calls, fallback)]
    return "\n".join(lines) + "\n"


def _top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        for name in _defined(stmt):
            out[name] = stmt
    return out


def _defined(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else (
        [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else [])
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _copied_names(best: ast.Module, variant: ast.Module, entry: str) -> set[str]:
    """Top-level names whose definition differs from the best's, closed over references."""
    mine, theirs = _top_level(variant), _top_level(best)
    names = {n for n in mine if n not in PROBLEM_NAMES}
    copied = {n for n in names if n not in theirs or ast.dump(mine[n]) != ast.dump(theirs[n])}
    changed = True
    while changed:
        changed = False
        for n in names - copied:
            if _free_names(mine[n]) & copied:
                copied.add(n)
                changed = True
    if copied:
        copied.add(entry)  # the dispatcher calls the variant's own entry
    return copied


def _free_names(node: ast.AST) -> set[str]:
    """Names `node` reads from the module: a function's parameters and locals excluded."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        outside = [*node.decorator_list] if not isinstance(node, ast.Lambda) else []
        outside += [d for d in [*a.defaults, *a.kw_defaults] if d is not None]
        body = node.body if isinstance(node.body, list) else [node.body]
        inner = set().union(*(_free_names(s) for s in body)) - _local_names(a, body)
        return inner | set().union(*(_free_names(d) for d in outside))
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    return set().union(*(_free_names(c) for c in ast.iter_child_nodes(node)))


def _local_names(args: ast.arguments, body: list[ast.stmt]) -> set[str]:
    """A function's parameters and the names it assigns, less those it declares global."""
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    declared = {n for stmt in body for g in ast.walk(stmt) if isinstance(g, ast.Global) for n in g.names}
    stored = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return (params | stored) - declared


def _renamed_code(variant: ast.Module, copied: set[str], suffix: str) -> str:
    """The copied statements of `variant`, in file order, with the copied names suffixed."""
    stmts = [s for s in variant.body if set(_defined(s)) & copied]
    renamer = _Renamer(copied, suffix)
    # A PyTorch operator the copy defines again gets its own name, or it would replace the best's.
    ops = RenameOps({op: op + suffix for s in stmts for op in defined_ops(s)})
    return "\n\n".join(ast.unparse(ops.visit(renamer.visit(s))) for s in stmts)


class _Renamer(ast.NodeTransformer):
    """Renames module-level names; a function's own parameters and locals are left alone."""

    def __init__(self, names: set[str], suffix: str) -> None:
        self.names, self.suffix = names, suffix
        self.shadowed: list[set[str]] = []

    def _new(self, name: str) -> str:
        hidden = any(name in s for s in self.shadowed)
        return name + self.suffix if name in self.names and not hidden else name

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._new(node.id)
        return node

    def visit_Global(self, node: ast.Global) -> ast.Global:
        node.names = [self._new(n) for n in node.names]
        return node

    def _scoped(self, node: ast.AST, args: ast.arguments, body: list[ast.AST]) -> ast.AST:
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                self.visit(default)  # defaults are evaluated outside the function's scope
        self.shadowed.append(_local_names(args, body))
        for i, stmt in enumerate(body):
            body[i] = self.visit(stmt)
        self.shadowed.pop()
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        if not self.shadowed:
            node.name = self._new(node.name)
        return self._scoped(node, node.args, node.body)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        for field in ("decorator_list", "bases", "keywords"):
            setattr(node, field, [self.visit(x) for x in getattr(node, field)])
        if not self.shadowed:
            node.name = self._new(node.name)
        # Its methods and attributes are not module names: never renamed.
        self.shadowed.append({n for s in node.body for n in _defined(s)})
        node.body = [self.visit(s) for s in node.body]
        self.shadowed.pop()
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        body = [node.body]
        self._scoped(node, node.args, body)
        node.body = body[0]
        return node


def _dispatcher(entry_def: ast.FunctionDef, calls: list[tuple[str, str]], fallback: str) -> str:
    args = entry_def.args
    forward = [a.arg for a in [*args.posonlyargs, *args.args]]
    forward += [f"*{args.vararg.arg}"] if args.vararg else []
    forward += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    forward += [f"**{args.kwarg.arg}"] if args.kwarg else []
    call = ", ".join(forward)
    body = [f"    if {cond}:\n        return {fn}({call})" if cond else f"    return {fn}({call})" for cond, fn in calls]
    if not calls or calls[-1][0]:
        body.append(f"    return {fallback}({call})")
    returns = f" -> {ast.unparse(entry_def.returns)}" if entry_def.returns else ""
    return "\n".join([f"def {entry_def.name}({ast.unparse(args)}){returns}:",
                      '    """Calls the version measured fastest for inputs of this size."""',
                      *body])
