"""What a rewrite recipe is: a named source transformation that keeps the entry's name and
signature, and says in words why it does not apply where it does not."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Rewrite:
    source: str  # the whole file, rewritten
    note: str  # what changed, for the candidate's description
    # A rewrite that adds a path beside the original, taken only while a kernel parameter is
    # at most a value: (kernel, parameter, most). Where no case's launch takes it, the
    # candidate would time the original code again, so it is not proposed.
    runs_if: tuple[str, str, int] | None = None


class Recipe(ABC):
    name: ClassVar[str]  # recorded in the candidates it makes (params["recipes"])
    # How the rewrite can change results beyond the original's rounding ("" when it cannot):
    # named in the summary and the report; the result is judged against the tolerance anyway.
    rounding: ClassVar[str] = ""
    # The diagnosis findings (rule ids, diagnosis/rules.py) whose evidence this recipe answers:
    # when the best was profiled, recipes pointed to by its findings are tried first.
    points_to: ClassVar[frozenset[str]] = frozenset()
    # A recipe that changes little and can stand in the way of larger rewrites (hints puts a
    # launch's block in a local of its own, and two launches then no longer fuse): proposed
    # only in a round where no other recipe applies to the best file.
    alone: ClassVar[bool] = False

    @abstractmethod
    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        """The file rewritten, or one line saying why this recipe does not apply to it."""
