"""Operator names of one imported file, kept its own.

Kernel files often register their entry as a PyTorch operator (`@torch.library.triton_op(
"mylib::add", ...)` or `custom_op`) so that torch.compile can trace it. The registry is global
to the process: when the baseline and a candidate that both define "mylib::add" are imported
into one worker, the later registration replaces the earlier, and the baseline's entry then
runs the candidate's kernel (its timing, a fair comparison, lost). So each import gets its own
names: every operator the file defines is renamed with a suffix unique to the import, in the
strings that name it and in `torch.ops.<namespace>.<name>` lookups. Positions are kept, so
Triton, which reads kernel source back from the file, sees the same lines.
"""

from __future__ import annotations

import ast

_DEFINERS = frozenset({"triton_op", "custom_op"})
# `torch.library.Library(ns, kind)` kinds that define operators in `ns` (an "IMPL" library
# adds kernels to operators defined elsewhere: aten's included).
DEFINING_KINDS = frozenset({"DEF", "FRAGMENT"})


def defined_ops(tree: ast.AST) -> set[str]:
    """"namespace::name" of each operator `tree` defines with triton_op or custom_op."""
    return {op for fn, op in operator_calls(tree) if fn in _DEFINERS and op.count("::") == 1}


def library_namespaces(tree: ast.AST) -> dict[int, str]:
    """The namespace of each `Library("ns", "FRAGMENT")` (or "DEF") call, by the id of its
    first argument: every operator such a library defines or implements is in it (vLLM's
    `direct_register_custom_op` builds the names at run time)."""
    out = {}
    for node in library_calls(tree):
        if len(node.args) < 2:
            continue
        ns, kind = node.args[:2]
        if isinstance(ns, ast.Constant) and isinstance(ns.value, str) and isinstance(kind, ast.Constant) \
                and kind.value in DEFINING_KINDS:
            out[id(ns)] = ns.value
    return out


def library_calls(tree: ast.AST) -> list[ast.Call]:
    """Every `Library(...)` or `torch.library.Library(...)` call of `tree`."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _last(n.func) == "Library"]


def _last(f: ast.expr) -> str:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def operator_calls(tree: ast.AST) -> list[tuple[str, str]]:
    """(function, operator name) for each call like `triton_op("ns::name", ...)` or
    `register_fake("ns::name")` whose first argument is a string."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _last(node.func)
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            out.append((name, first.value))
    return out


class RenameOps(ast.NodeTransformer):
    """Renames operators: `mapping` from "ns::name" to "ns::new_name"; and whole namespaces of
    the file's own libraries: `spaces` from "ns" to "new_ns" (for the constants `library`,
    the ids of `Library(...)` first arguments, and "ns::..." strings and `torch.ops.ns`)."""

    def __init__(self, mapping: dict[str, str], spaces: dict[str, str] | None = None,
                 library: set[int] | None = None) -> None:
        self.mapping = mapping
        self.attrs = {tuple(old.split("::")): new.split("::")[1] for old, new in mapping.items()}
        self.spaces = spaces or {}
        self.library = library or set()

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            op, sep, overload = node.value.partition(".")  # "ns::name.default" names an overload
            if op in self.mapping:
                return ast.copy_location(ast.Constant(self.mapping[op] + sep + overload), node)
            ns, colons, rest = node.value.partition("::")
            if id(node) in self.library and node.value in self.spaces:
                return ast.copy_location(ast.Constant(self.spaces[node.value]), node)
            if colons and ns in self.spaces:
                return ast.copy_location(ast.Constant(self.spaces[ns] + colons + rest), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        ns = node.value
        if isinstance(ns, ast.Attribute) and (ns.attr, node.attr) in self.attrs and _is_torch_ops(ns.value):
            node.attr = self.attrs[(ns.attr, node.attr)]
        elif node.attr in self.spaces and _is_torch_ops(ns):
            node.attr = self.spaces[node.attr]
        return node


def _is_torch_ops(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "ops" and isinstance(node.value, ast.Name) \
        and node.value.id == "torch"


def own_operator_names(source: str, suffix: str) -> ast.Module | None:
    """The file's syntax tree with each operator it defines renamed to "<name>_<suffix>", or
    None when it defines none (or does not parse: the import reports that)."""
    if "triton_op" not in source and "custom_op" not in source and "Library" not in source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    ops, libraries = defined_ops(tree), library_namespaces(tree)
    if not ops and not libraries:
        return None
    mapping = {op: f"{op}_{suffix}" for op in ops}
    spaces = {ns: f"{ns}_{suffix}" for ns in libraries.values()}
    return ast.fix_missing_locations(RenameOps(mapping, spaces, set(libraries)).visit(tree))
