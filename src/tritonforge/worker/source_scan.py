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

MODULES = frozenset({"inspect", "gc", "ctypes", "tritonforge", "importlib", "builtins", "traceback",
                     "_thread"})
NAMES = frozenset({"__import__", "exec", "eval", "globals", "vars", "breakpoint"})
ATTRIBUTES = frozenset({"_getframe", "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame",
                        "__subclasses__", "__globals__", "_current_frames", "settrace", "setprofile",
                        "get_objects", "get_referrers"})


# Torch's ways to replace an operator for the whole process (the reference's included).
TORCH_OVERRIDES = ("torch.library", "torch._C", "torch.ops", "torch.overrides", "torch.utils._python_dispatch",
                   "torch._dynamo", "torch._library")


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _overrides(name: str) -> bool:
    return any(name == t or name.startswith(t + ".") for t in TORCH_OVERRIDES)


def introspection(source: str) -> str | None:
    """What in `source` reaches into the running evaluator, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # reported as a load error elsewhere
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in MODULES or _overrides(alias.name):
                    return f"imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module.split(".")[0] in MODULES or _overrides(node.module)
                or any(_overrides(f"{node.module}.{a.name}") for a in node.names)):
            return f"imports from {node.module}"
        elif isinstance(node, ast.Attribute) and _overrides(_dotted(node)):
            return f"uses {_dotted(node)}"
        elif isinstance(node, ast.Name) and node.id in NAMES:
            return f"calls {node.id}()"
        elif isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
            return f"uses .{node.attr}"
    return None
