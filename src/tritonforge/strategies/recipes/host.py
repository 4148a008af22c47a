"""The host side of a problem file, as recipes see it: the launches of a kernel, the
entry's own launches (for recipes that rewrite more than one kernel at once), the
statement a launch sits in, and names not yet taken.

The entry's launches count where they are statements of the entry: in its body, or in the
body of a block inside it (`with torch.cuda.device(x.device):`, an `if`), so that two
launches can be paired only when they sit in the same list of statements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from tritonforge.analysis.kernel_source import Kernel, KernelSource, entry_function, launched_kernel
from tritonforge.strategies.editing import Edit, Place

R = TypeVar("R")  # what a recipe makes of a kernel or a launch (a Rewrite, edits)
T = TypeVar("T")  # a plan


@dataclass(frozen=True)
class Launch:
    """One `kernel[grid](...)` statement of the entry."""

    index: int  # its position in `block`
    stmt: ast.Expr
    call: ast.Call
    kernel: Kernel
    block: list[ast.stmt] = field(compare=False)  # the statements it is one of


def launches_of(ks: KernelSource, kernel: Kernel) -> list[ast.Call]:
    """Every `kernel[grid](...)` call in the file."""
    return [n for n in ast.walk(ks.tree) if isinstance(n, ast.Call)
            and getattr(launched_kernel(n), "id", None) == kernel.name]


def first_kernel(ks: KernelSource, attempt: Callable[[Kernel], R | str]) -> R | str:
    """What `attempt` makes of the first kernel of the file it applies to, or every kernel's
    reason for refusing, in one line."""
    reasons = []
    for kernel in ks.kernels.values():
        result = attempt(kernel)
        if not isinstance(result, str):
            return result
        reasons.append(f"{kernel.name}: {result}")
    return "; ".join(reasons) or "no Triton kernel in the file"


def each_kernel(ks: KernelSource, attempt: Callable[[Kernel], list[Edit] | str]) -> tuple[list[Edit], list[str]] | str:
    """The edits `attempt` makes of every kernel of the file it applies to, and those kernels'
    names; or, where it applies to none, every kernel's reason for refusing, in one line."""
    edits: list[Edit] = []
    done, reasons = [], []
    for kernel in ks.kernels.values():
        result = attempt(kernel)
        if isinstance(result, str):
            reasons.append(f"{kernel.name}: {result}")
            continue
        edits += result
        done.append(kernel.name)
    return (edits, done) if done else "; ".join(reasons) or "no Triton kernel in the file"


def per_launch(ks: KernelSource, kernel: Kernel, edit: Callable[[ast.Call], R | str]) -> list[R] | str:
    """`edit` of each launch of `kernel`, or the first launch's reason it cannot be edited
    (a kernel the file never launches cannot be rewritten either)."""
    launches = launches_of(ks, kernel)
    if not launches:
        return "no launch of it in this file"
    done = [edit(call) for call in launches]
    return next((d for d in done if isinstance(d, str)), None) or done  # type: ignore[return-value]


def fresh_name(name: str, taken: set[str]) -> str:
    """`name`, with "_" appended until it is not in `taken`; the result is added to `taken`."""
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def insert_before(stmt: ast.stmt, lines: list[str]) -> Edit:
    """`lines` inserted before `stmt`, each at its column (the statement then starts on a line
    of its own after them, at that column as before)."""
    pad = " " * stmt.col_offset
    return Edit(Place.point(stmt.lineno, stmt.col_offset), "".join(f"{line}\n{pad}" for line in lines))


def entry_launches(ks: KernelSource, entry: str) -> tuple[ast.FunctionDef, list[tuple[Launch, Launch]]] | str:
    """The entry function and each pair of consecutive launches in one list of its statements,
    or why there is none."""
    found = entry_function(ks.tree, entry)
    fn = found.fn if found else None
    if fn is None:
        return f"no function '{entry}' at the top level"
    pairs = []
    for block in _blocks(fn):
        named = [(i, s, launched_kernel(s.value)) for i, s in enumerate(block)
                 if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
        launches = [Launch(i, s, s.value, ks.kernels[k.id], block) for i, s, k in named
                    if k is not None and k.id in ks.kernels]
        pairs += list(zip(launches, launches[1:]))
    if not pairs:
        return "no two kernel launches in one block of the entry's statements"
    return fn, pairs



def first_pair(ks: KernelSource, entry: str, plan: Callable[[ast.FunctionDef, Launch, Launch], T | str]
               ) -> tuple[Launch, Launch, T] | str:
    """The first pair of the entry's launches that `plan` accepts, with its plan; otherwise
    every pair's reason (plan returns a string for a pair it refuses)."""
    found = entry_launches(ks, entry)
    if isinstance(found, str):
        return found
    fn, pairs = found
    reasons = []
    for a, b in pairs:
        planned = plan(fn, a, b)
        if not isinstance(planned, str):
            return a, b, planned
        reasons.append(f"{a.kernel.name} then {b.kernel.name}: {planned}")
    return "; ".join(reasons)


def _blocks(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    out = [fn.body]
    for node in ast.walk(fn):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fn:
            continue
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if node is not fn and isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                out.append(value)
    return out


def used_after(fn: ast.FunctionDef, line: int, name: str) -> bool:
    """Whether the entry reads or writes `name` on a line after `line`."""
    return any(isinstance(n, ast.Name) and n.id == name and n.lineno > line for n in ast.walk(fn))


def used_between(first: Launch, second: Launch, names: set[str]) -> bool:
    """Whether a statement between the two launches names any of `names`."""
    return any(isinstance(n, ast.Name) and n.id in names
               for s in first.block[first.index + 1:second.index] for n in ast.walk(s))


def statement_of(tree: ast.AST, call: ast.Call) -> ast.stmt | None:
    """The innermost simple statement (not a block) that holds `call`, where a line can go before it."""
    found = None
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            stmts = getattr(node, name, None)
            for s in stmts if isinstance(stmts, list) else []:
                if isinstance(s, ast.stmt) and not isinstance(s, _BLOCKS) and any(n is call for n in ast.walk(s)):
                    found = s
    return found


_BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
           ast.AsyncWith, ast.Try)
