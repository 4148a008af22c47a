"""Assignments of tunable values, and comparing and writing them down."""

from __future__ import annotations

from typing import Any

from tritonforge.analysis.launch_sites import ConfigSpec

Assignment = dict[str, Any]  # tunable id -> value (an int, or a tuple of ConfigSpec)


def numeric(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def numeric_changes(before: Assignment, after: Assignment) -> dict[str, tuple[int, int]]:
    return {k: (before[k], after[k]) for k in before.keys() & after.keys()
            if numeric(before[k]) and numeric(after[k]) and before[k] != after[k]}


def equal(a: Any, b: Any) -> bool:
    return hashable(a) == hashable(b)


def hashable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(hashable(x) for x in v)
    if isinstance(v, ConfigSpec):
        return (tuple(sorted(v.flat().items())), v.extra)
    if isinstance(v, dict):
        return tuple(sorted((k, hashable(x)) for k, x in v.items()))
    return v


def jsonable(values: Assignment) -> dict[str, Any]:
    return {k: [c.flat() for c in v] if isinstance(v, tuple) else v for k, v in values.items()}
