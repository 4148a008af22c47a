"""A tripwire, not a sandbox: refuse candidate source that reaches into the evaluator.

Candidates run in the judging worker's process, so Python could walk its frames (to read
the seeds), patch it through ctypes, import it, or replace a torch operator for the whole
process (torch.library, modes). None of that is needed to write a kernel; a candidate
whose source names these things is refused before it is imported. Code that hides the
names (strings built at run time) is not caught here; the other checks (the reference and
the comparison in the referee's process, fresh inputs, verified timed outputs, watched
attributes and code) still apply.
"""

from __future__ import annotations

import ast

from tritonforge.analysis.astfold import dotted_name
from tritonforge.problem.custom_ops import defined_ops, library_calls, library_namespaces, operator_calls

MODULES = frozenset({"inspect", "gc", "ctypes", "tritonforge", "importlib", "builtins", "traceback",
                     "_thread"})
NAMES = frozenset({"__import__", "exec", "eval", "globals", "vars", "breakpoint"})
ATTRIBUTES = frozenset({"_getframe", "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame",
                        "__subclasses__", "__globals__", "_current_frames", "settrace", "setprofile",
                        "get_objects", "get_referrers"})


# Torch's ways to replace an operator for the whole process (the reference's included).
TORCH_OVERRIDES = ("torch.library", "torch._C", "torch.ops", "torch.overrides", "torch.utils._python_dispatch",
                   "torch._dynamo", "torch._library")


# What kernel files use torch.library for, which overrides nothing: defining an operator of
# their own (PyTorch refuses the aten, prim and torch namespaces) and wrapping a launch so
# torch.compile can trace it. Each import of a file gets its own operator names
# (`problem.custom_ops`), so a candidate's cannot take the baseline's place.
RESERVED_NAMESPACES = frozenset({"aten", "prim", "prims", "torch", "c10", "c10d", "_c10d_functional", "quantized",
                                 "_quantized", "inductor", "higher_order"})
ALLOWED = frozenset({"torch.library.triton_op", "torch.library.wrap_triton", "torch.library.capture_triton",
                     "torch.library.custom_op", "torch.library.register_fake", "torch.library.infer_schema"})
# vLLM's way: `Library("ns", "FRAGMENT")`, then `define` and `impl` on it. Allowed where every
# Library of the file defines its own namespace (PyTorch refuses an `impl` of another
# namespace's operator on such a library); an "IMPL" library could replace aten's kernels.
LIBRARY = "torch.library.Library"


def _inner(node: ast.Attribute) -> list[ast.AST]:
    """The shorter names inside `a.b.c`: `a.b` and `a`."""
    out: list[ast.AST] = []
    while isinstance(node, ast.Attribute):
        node = node.value
        out.append(node)
    return out


def _own_op(dotted: str, own: set[tuple[str, ...]], spaces: frozenset[str] = frozenset()) -> bool:
    """`torch.ops.<ns>.<name>` or one of its overloads, for an operator the file defines (or
    any of a namespace its own libraries define)."""
    parts = dotted.split(".")
    return len(parts) in (4, 5) and parts[:2] == ["torch", "ops"] and (tuple(parts[2:4]) in own or parts[2] in spaces)


def _own_libraries(tree: ast.AST) -> frozenset[str] | None:
    """The namespaces of the file's `Library(...)` calls when each defines its own namespace,
    outside torch's; None when one does not (or the file makes no library)."""
    calls = library_calls(tree)
    spaces = library_namespaces(tree)
    if not calls or len(spaces) != len(calls) or set(spaces.values()) & RESERVED_NAMESPACES:
        return None
    return frozenset(spaces.values())


def _operator_misuse(tree: ast.AST) -> str | None:
    """An operator defined in torch's own namespaces, or a fake kernel registered for an
    operator the file does not define."""
    own = defined_ops(tree)
    for fn, op in operator_calls(tree):
        if fn in ("triton_op", "custom_op") and op.split("::")[0] in RESERVED_NAMESPACES:
            return f"defines {op} in torch's own namespace"
        if fn == "register_fake" and op.split(".")[0] not in own:
            return f"registers a fake kernel for {op}, an operator it does not define"
    return None


def _named_global_reads(tree: ast.AST) -> set[int]:
    """`globals()` in `globals().get("BLOCK", 128)` or `globals()["BLOCK"]`: a read of one of the
    module's own names, written as a constant (not a dunder), which is no more than naming it."""
    def named(key: ast.expr) -> bool:
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.startswith("__")

    def own(call: ast.expr) -> bool:
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "globals" \
            and not call.args and not call.keywords

    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and own(n.value) and named(n.slice):
            out.add(id(n.value.func))  # type: ignore[attr-defined]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                and own(n.func.value) and n.args and named(n.args[0]):
            out.add(id(n.func.value.func))  # type: ignore[attr-defined]
    return out


def _only_allowed(node: ast.ImportFrom, allowed: frozenset[str]) -> bool:
    return all(f"{node.module}.{a.name}" in allowed for a in node.names)


def _overrides(name: str) -> bool:
    return any(name == t or name.startswith(t + ".") for t in TORCH_OVERRIDES)


def introspection(source: str) -> str | None:
    """What in `source` reaches into the running evaluator, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # reported as a load error elsewhere
    misuse = _operator_misuse(tree)
    if misuse:
        return misuse
    own = {tuple(op.split("::")) for op in defined_ops(tree)}  # torch.ops.<ns>.<name> of its own operators
    libraries = _own_libraries(tree)
    names = ALLOWED | {LIBRARY} if libraries else ALLOWED
    spaces = libraries or frozenset()
    allowed = {id(inner) for n in ast.walk(tree) if isinstance(n, ast.Attribute)
               and (dotted_name(n) in names or _own_op(dotted_name(n), own, spaces)) for inner in _inner(n)}
    allowed |= _named_global_reads(tree)
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue  # `torch.library` inside `torch.library.triton_op`
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in MODULES or _overrides(alias.name):
                    return f"imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module and not _only_allowed(node, names) and (
                node.module.split(".")[0] in MODULES or _overrides(node.module)
                or any(_overrides(f"{node.module}.{a.name}") for a in node.names)):
            return f"imports from {node.module}"
        elif isinstance(node, ast.Attribute) and _overrides(dotted_name(node)) and dotted_name(node) not in names \
                and not _own_op(dotted_name(node), own, spaces):
            return f"uses {dotted_name(node)}"
        elif isinstance(node, ast.Name) and node.id in NAMES:
            return f"calls {node.id}()"
        elif isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
            return f"uses .{node.attr}"
    return None
