"""Expressions of kernel code compared by what they compute: local names expanded into the
expressions they were set to, so that `mask=mask` and `mask=offs < n` read the same."""

from __future__ import annotations

import ast
import copy


class Expand(ast.NodeTransformer):
    """An expression with the names of `env` replaced (recursively) by what they were set to."""

    def __init__(self, env: dict[str, ast.expr]):
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.env:
            return self.visit(copy.deepcopy(self.env[node.id]))
        return node


def single_assignments(stmts: list[ast.stmt]) -> dict[str, ast.expr]:
    """{name: value} for each name set exactly once in `stmts`, by a plain `name = value`."""
    counts: dict[str, int] = {}
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                counts[n.id] = counts.get(n.id, 0) + 1
    return {s.targets[0].id: s.value for s in stmts
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and counts.get(s.targets[0].id) == 1}
