"""Strategies by name: `register(name, cls)` adds one, `create(names)` builds them for a run.

Built-in strategies are imported only when asked for, so importing this module is cheap.
"""

from __future__ import annotations

import importlib
from typing import Callable

from tritonforge.strategies.base import Strategy

__all__ = ["available", "create", "register", "unregister"]

StrategyFactory = Callable[[], Strategy]  # a Strategy subclass, or anything that builds one

# In the order a default run asks them each round: the few recipe rewrites first, so that a
# round of launch moves cannot crowd them out.
_BUILT_IN = {"recipes": ("tritonforge.strategies.recipes", "RecipeStrategy"),
             "launch_params": ("tritonforge.strategies.launch", "LaunchParamStrategy"),
             "per_shape": ("tritonforge.strategies.per_shape", "PerShapeStrategy")}
_registered: dict[str, StrategyFactory] = {}


def register(name: str, cls: StrategyFactory) -> None:
    """Make `cls` available as `name`. Registering the same class again is a no-op; another
    class under a taken name is a ValueError."""
    taken = _registered.get(name) or (name in _BUILT_IN and _built_in(name))
    if taken and taken is not cls:
        raise ValueError(f"a strategy is already registered as {name!r}")
    _registered[name] = cls


def unregister(name: str) -> None:
    """Forget a strategy added with `register` (built-ins stay)."""
    _registered.pop(name, None)


def available() -> list[str]:
    """The names `create` accepts, sorted."""
    return sorted(set(_BUILT_IN) | set(_registered))


def create(names: list[str] | None = None) -> list[Strategy]:
    """A fresh instance of each named strategy, in the order given; None: every one
    registered. Raises ValueError for an unknown name."""
    names = [*_BUILT_IN, *sorted(_registered.keys() - _BUILT_IN.keys())] if names is None else list(names)
    unknown = [n for n in names if n not in _BUILT_IN and n not in _registered]
    if unknown:
        raise ValueError(f"unknown strategy {', '.join(map(repr, unknown))}; known: {', '.join(available())}")
    return [(_registered.get(n) or _built_in(n))() for n in names]


def _built_in(name: str) -> StrategyFactory:
    module, attr = _BUILT_IN[name]
    return getattr(importlib.import_module(module), attr)
