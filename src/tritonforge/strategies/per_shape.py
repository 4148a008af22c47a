"""Per-shape results: when the search measured some cases fastest with another candidate than
the best overall (small and large shapes often want different tiles), one file that keeps
each case at its own winner, chosen by a size of the entry's arguments.

Nothing is proposed during the search; once it stops, `finish` proposes the dispatching file,
which is judged like any candidate (correct on every case, faster beyond noise than the best
head to head, slower than the baseline on none) in the budget slot the loop keeps for it.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Callable

from tritonforge.analysis.kernel_source import entry_function
from tritonforge.strategies.base import Candidate, SearchState, Strategy, source_key
from tritonforge.strategies.dispatch import Variant, dispatch_source

MARGIN = 0.05  # a case's winner must beat the best there by this much, and beyond both intervals
MOST_VERSIONS = 3  # versions besides the best in one file

Speedups = dict[str, tuple[float, float, float]]  # case -> (speedup, ci low, ci high)


@dataclass(frozen=True)
class Contender:
    key: str
    source: str
    description: str
    cases: Speedups


@dataclass(frozen=True)
class Plan:
    """Runs of cases, ascending by `expression`: each with its winner and the smallest and
    largest value the expression takes on them."""

    expression: str  # e.g. "x.numel()"
    runs: list[tuple[Contender, float, float]]


class PerShapeStrategy(Strategy):
    name = "per_shape"

    def propose(self, state: SearchState, limit: int) -> list[Candidate]:
        return []

    def finish(self, state: SearchState) -> list[Candidate]:
        plan = plan_dispatch(state)
        if plan is None:
            return []
        best_key = state.best.key
        variants, conditions = [], []
        for i, (who, _, top) in enumerate(plan.runs):
            last = i == len(plan.runs) - 1
            cond = "" if last else f"{plan.expression} <= {_threshold(top, plan.runs[i + 1][1])}"
            mine = who.key == best_key
            variants.append(Variant(None if mine else who.source, cond, who.description))
            conditions.append(f"{cond or 'otherwise'}: {'the best' if mine else who.description}")
        try:
            source = dispatch_source(state.best.source, state.entry, variants)
        except (ValueError, SyntaxError):  # an entry that is not a plain function: nothing to redefine
            return []
        others = [who.key for who, _, _ in plan.runs if who.key != best_key]
        return [Candidate(source, self.name, params={"by": plan.expression, "versions": others}, parent=best_key,
                          description="per shape: " + "; ".join(conditions))]


def plan_dispatch(state: SearchState) -> Plan | None:
    """The size-keyed plan when some case has a clear winner other than the best; None when
    the best wins every case or no size of the arguments separates the winners."""
    labels = list(state.case_shapes)
    if len(labels) < 2:
        return None
    pool = _contenders(state, labels)
    best = next((c for c in pool if c.key == state.best.key), None)
    if best is None:
        return None
    winners = {case: _winner(case, pool, best) for case in labels}
    if all(w is best for w in winners.values()) or len({w.key for w in winners.values()}) > MOST_VERSIONS + 1:
        return None
    params = _positional_params(state.best.source, state.entry)
    for expression, value in _size_keys(state.case_shapes[labels[0]], params):
        runs = _runs(labels, winners, lambda case: value(state.case_shapes[case]))
        if runs is not None:
            return Plan(expression, runs)
    return None


def _contenders(state: SearchState, labels: list[str]) -> list[Contender]:
    out = [Contender(source_key(state.baseline_source), state.baseline_source, "the problem as given",
                     {case: (1.0, 1.0, 1.0) for case in labels})]
    for o in state.history:
        if o.status == "correct" and all(case in o.cases for case in labels):
            out.append(Contender(o.candidate.key, o.candidate.source, o.candidate.description or o.candidate.key,
                                 o.cases))
    return out


def _winner(case: str, pool: list[Contender], best: Contender) -> Contender:
    top = max(pool, key=lambda c: c.cases[case][0])
    up, low, _ = top.cases[case]
    b_up, _, b_high = best.cases[case]
    return top if up > b_up * (1 + MARGIN) and low > b_high else best


def _positional_params(source: str, entry: str) -> list[str]:
    found = entry_function(ast.parse(source), entry)
    if found is None:
        return []
    args = found.signature(entry).args
    return [a.arg for a in [*args.posonlyargs, *args.args]]


def _size_keys(shapes: list[list[int] | None], params: list[str]
               ) -> list[tuple[str, Callable[[list[list[int] | None]], float]]]:
    """Sizes of the tensor arguments to choose by: each one's element count, then each dimension."""
    keys = []
    for i, shape in enumerate(shapes[:len(params)]):
        if shape is not None:
            keys.append((f"{params[i]}.numel()", lambda s, i=i: float(math.prod(s[i]))))
    for i, shape in enumerate(shapes[:len(params)]):
        for d in range(len(shape or [])):
            keys.append((f"{params[i]}.shape[{d}]", lambda s, i=i, d=d: float(s[i][d])))
    return keys


def _runs(labels: list[str], winners: dict[str, Contender], value: Callable[[str], float]
          ) -> list[tuple[Contender, float, float]] | None:
    """Winners as contiguous runs of ascending values, each with its largest value; None if a
    winner's cases are not one run or two runs share a value."""
    ordered = sorted(labels, key=value)
    runs: list[tuple[Contender, float, float]] = []  # (winner, smallest, largest value)
    for case in ordered:
        v, w = value(case), winners[case]
        if runs and runs[-1][0].key == w.key:
            runs[-1] = (w, runs[-1][1], v)
            continue
        if runs and (v <= runs[-1][2] or any(r[0].key == w.key for r in runs)):
            return None
        runs.append((w, v, v))
    return runs if len(runs) > 1 else None


def _threshold(top: float, next_smallest: float) -> int:
    """Between this run's largest value and the next run's smallest, geometrically: sizes in
    between were not measured, and a geometric mean splits them evenly on a log scale."""
    return int(math.sqrt(top * next_smallest))
