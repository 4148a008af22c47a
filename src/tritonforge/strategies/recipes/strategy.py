"""The recipes as one strategy: each round, every recipe not yet in the best file is tried on
it, one candidate per recipe; the launch-parameter search then tunes whichever wins."""

from __future__ import annotations

import ast
from typing import Any

from tritonforge.analysis.kernel_source import KernelSource
from tritonforge.strategies.base import Candidate, SearchState, Strategy
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.fuse_elementwise import FuseElementwise
from tritonforge.strategies.recipes.hints import Hints
from tritonforge.strategies.recipes.persistent_grid import PersistentGrid
from tritonforge.strategies.recipes.reverse_pass import ReversePass
from tritonforge.strategies.recipes.row_one_pass import RowOnePass
from tritonforge.strategies.recipes.row_online import RowOnline
from tritonforge.strategies.recipes.rows_as_tile import RowsAsTile
from tritonforge.strategies.recipes.rows_per_program import RowsPerProgram
from tritonforge.strategies.recipes.split_k import SplitK
from tritonforge.strategies.recipes.tile_order import GroupedTileOrder
from tritonforge.strategies.recipes.tma import TensorDescriptorLoads
from tritonforge.strategies.recipes.two_stage import CollapseTwoStage

# The order recipes are tried in when no profile says otherwise: those that remove whole
# passes over memory or launches first, hints last (they change the least).
RECIPES: list[type[Recipe]] = [RowOnePass, RowOnline, ReversePass, FuseElementwise, CollapseTwoStage, SplitK,
                               GroupedTileOrder, TensorDescriptorLoads, RowsAsTile, RowsPerProgram, PersistentGrid,
                               Hints]


class RecipeStrategy(Strategy):
    name = "recipes"
    rewrites = True

    def __init__(self, recipes: list[Recipe] | None = None) -> None:
        self.recipes = recipes if recipes is not None else [cls() for cls in RECIPES]
        self._space: dict[str, Any] | None = None
        # applies() and refusals() ask the same question of the same file: each recipe reads
        # a file once.
        self._tried: dict[tuple[str, str, str], Rewrite | str] = {}

    def applies(self, source: str, entry: str) -> bool:
        return any(isinstance(self._try(r, source, entry), Rewrite) for r in self.recipes)

    def refusals(self, source: str, entry: str) -> dict[str, str]:
        return {r.name: why for r in self.recipes if isinstance(why := self._try(r, source, entry), str)}

    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        done = list(state.best.params.get("recipes", [])) if state.best.origin == self.name else []
        out, why_not = [], {}
        order, pointed = by_findings(self.recipes, state.findings)
        unlaunched = _Unlaunched(state)
        for recipe in order:
            if recipe.name in done:
                why_not[recipe.name] = "already in the best file"
                continue
            result = self._try(recipe, state.best.source, state.entry)
            if isinstance(result, Rewrite):
                result = _taken_by_some_case(result, state.captured)
            if isinstance(result, Rewrite):
                result = unlaunched(result)
            if isinstance(result, str):
                why_not[recipe.name] = result
                continue
            out.append(Candidate(result.source, self.name, params={"recipes": [*done, recipe.name]},
                                 parent=state.best.key, description=f"recipe {recipe.name}: {result.note}"))
        alone = {r.name for r in order if r.alone}
        if any(c.params["recipes"][-1] not in alone for c in out):
            for c in [c for c in out if c.params["recipes"][-1] in alone]:
                why_not[c.params["recipes"][-1]] = "waits until no other recipe applies (it changes the least)"
                out.remove(c)
        self._space = {"proposed": [c.params["recipes"][-1] for c in out], "not_applied": why_not,
                       "pointed_to": pointed}
        return out[:limit]

    def describe_space(self) -> dict[str, Any] | None:
        return self._space

    def _try(self, recipe: Recipe, source: str, entry: str) -> Rewrite | str:
        key = (recipe.name, entry, source)
        if key not in self._tried:
            self._tried[key] = _try(recipe, source, entry)
        return self._tried[key]


def by_findings(recipes: list[Recipe], findings: list[Any]) -> tuple[list[Recipe], dict[str, list[str]]]:
    """The recipes in the order to try them: those the best's diagnosis points to first (by
    the score of the strongest finding that points to each), then the rest in their own order,
    since a profile can miss what the source shows. Without a profile (no Nsight Compute) each
    recipe's own reading of the source decides where it applies. Also: recipe -> finding kinds."""
    score: dict[str, float] = {}
    pointed: dict[str, list[str]] = {}
    for f in findings:
        for r in recipes:
            if f.kind in r.points_to:
                score[r.name] = max(score.get(r.name, 0.0), float(f.score))
                pointed.setdefault(r.name, []).append(f.kind)
    order = sorted(recipes, key=lambda r: -score.get(r.name, -1.0))  # stable: ties keep their order
    return order, pointed


def _launched(state: SearchState) -> set[str]:
    """The kernels the baseline's and the best's captured launches name."""
    captures = [state.captured, state.captured_rewrites.get(state.best.key, {})]
    return {launch.get("kernel_name") for c in captures for launches in c.values() for launch in launches}


def _taken_by_some_case(result: Rewrite, captured: dict[str, list[dict[str, Any]]]) -> Rewrite | str:
    """`result`, or why none of the baseline's captured launches would take its new path."""
    if result.runs_if is None:
        return result
    kernel, param, most = result.runs_if
    values = [a.get("value") for launches in captured.values() for launch in launches
              if launch.get("kernel_name") == kernel for a in launch.get("args", []) if a.get("name") == param]
    if values and all(isinstance(v, int) and v > most for v in values):
        return (f"its new path runs only while {param} <= {most}, and every case launches {kernel} with more "
                f"({', '.join(str(v) for v in sorted(set(values)))})")
    return result


class _Unlaunched:
    """Why a rewrite would time the same code again: every kernel it edits is one of the
    problem's own that no case launches (a long-row path beside the one the shapes take). A
    rewrite that adds a kernel is kept: the host edits that launch it are not read here. The
    best file and the baseline are parsed once per round, not once per recipe."""

    def __init__(self, state: SearchState) -> None:
        self.launched = _launched(state)
        if self.launched:
            self.old = KernelSource(state.best.source).kernels
            self.own = set(KernelSource(state.baseline_source).kernels)

    def __call__(self, result: Rewrite) -> Rewrite | str:
        if not self.launched:
            return result
        new = KernelSource(result.source).kernels
        if set(new) - set(self.old):
            return result
        edited = [name for name in self.old if name in new and ast.dump(self.old[name].fn) != ast.dump(new[name].fn)]
        if edited and set(edited) <= self.own and not self.launched & set(edited):
            return f"it edits only {', '.join(edited)}, which no case launches"
        return result


def _try(recipe: Recipe, source: str, entry: str) -> Rewrite | str:
    """A recipe that fails on a file it did not expect costs the run that recipe, not the run;
    the failure stays in the round's record (describe_space)."""
    try:
        return recipe.rewrite(source, entry)
    except Exception as e:  # noqa: BLE001
        return f"the recipe failed on this file: {type(e).__name__}: {e}"


def recipes_in(best: Candidate, judged: list[Candidate]) -> dict[str, str]:
    """The recipes that made `best`, through its ancestors among `judged` (a launch-value move
    on a rewritten file keeps the rewrite; a per-shape file holds the recipes of each version
    it dispatches to), each with how it can change rounding ("" if not)."""
    by_key = {c.key: c for c in judged}
    names: list[str] = []
    seen: set[str] = set()
    todo: list[Candidate] = [best]
    while todo:
        node = todo.pop()
        if node.key in seen:
            continue
        seen.add(node.key)
        if node.origin == RecipeStrategy.name:
            names += [n for n in node.params.get("recipes", []) if n not in names]
        linked = [node.parent, *node.params.get("versions", [])] if isinstance(node.params, dict) else [node.parent]
        todo += [by_key[k] for k in linked if k in by_key]
    order = [cls.name for cls in RECIPES]
    names.sort(key=lambda n: order.index(n) if n in order else len(order))
    notes = {cls.name: cls.rounding for cls in RECIPES}
    return {n: notes.get(n, "") for n in names}
