"""Every launch reachable from a problem's entry, gathered into one search space."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from tritonforge.analysis.launch_sites.launches import collect_launches
from tritonforge.analysis.launch_sites.model import LaunchSite, Tunable
from tritonforge.analysis.launch_sites.resolve import Scope, SourceModule
from tritonforge.analysis.launch_sites.tunables import build_sites


@dataclass
class SearchSpace:
    """The tunables of all launch sites, each once, in first-use order."""

    sites: list[LaunchSite]
    source: str = ""
    by_id: dict[str, Tunable] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {}
        for site in self.sites:
            for t in site.tunables:
                self.by_id.setdefault(t.id, t)

    @property
    def tunables(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if t.free]

    @property
    def fixed(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if not t.free]

    @property
    def current(self) -> dict[str, Any]:
        return {t.id: t.current for t in self.tunables}

    def get(self, tid: str) -> Tunable:
        return self.by_id[tid]

    def label(self, tid: str) -> str:
        """Short name for descriptions: the parameter name unless two tunables share it."""
        t = self.by_id[tid]
        same = [u for u in self.tunables if u.name == t.name]
        return t.name if len(same) <= 1 else tid

    @staticmethod
    def from_source(source: str, entry: str) -> "SearchSpace":
        return SearchSpace(find_launch_sites(source, entry), source)


def find_launch_sites(source: str, entry: str) -> list[LaunchSite]:
    """Every Triton launch reachable from `entry`, with the values that shape it.

    Raises SyntaxError for a file that does not parse, ValueError when `entry` is not a
    top-level function of it.
    """
    module = SourceModule(source)
    fn = module.functions.get(entry)
    if fn is None or entry in module.kernels:
        raise ValueError(f"no plain top-level function named {entry!r}")
    scope = Scope(fn, {}, (entry,))
    launches = list(collect_launches(module, scope))
    return build_sites(module, launches)


def entry_of(source: str) -> str | None:
    """The module-level `ENTRY = "name"` of a problem file, if it has one."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRY" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None
