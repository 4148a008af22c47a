"""A strategy in one file: doubles the first block-size constant the entry function sets.

Shows what a plug-in needs: a `Strategy` subclass, `editing` to rewrite the source, and
one `register` line.
"""

from __future__ import annotations

import ast

from tritonforge.strategies.base import Candidate, SearchState, Strategy
from tritonforge.strategies.editing import apply_edits, replace_node
from tritonforge.strategies.registry import register


class ToyStrategy(Strategy):
    name = "toy"

    def applies(self, source: str, entry: str) -> bool:
        return _block_constant(source, entry) is not None

    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        found = _block_constant(state.baseline_source, state.entry)
        if found is None or limit <= 0:
            return []
        name, node = found
        source = apply_edits(state.baseline_source, [replace_node(node, str(node.value * 2))])
        c = Candidate(source=source, origin=self.name, params={name: node.value * 2},
                      description=f"{name} {node.value}->{node.value * 2}")
        return [] if state.tried(c.key) else [c]


def _block_constant(source: str, entry: str) -> tuple[str, ast.Constant] | None:
    """`BLOCK = 64` in the entry function: the name and the constant."""
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    for node in ast.walk(fn) if fn else ():
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and "BLOCK" in node.targets[0].id and isinstance(node.value, ast.Constant)
                and type(node.value.value) is int):
            return node.targets[0].id, node.value
    return None


register("toy", ToyStrategy)
