"""A candidate: a whole drop-in replacement of the problem file, and where it came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

# The origin of the problem file itself, judged first and kept as the best until beaten.
BASELINE = "baseline"


def source_key(source: str) -> str:
    """Identity of a candidate: identical sources are evaluated once."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


@dataclass
class Candidate:
    source: str  # a whole drop-in replacement of the problem file
    origin: str  # name of the strategy that proposed it
    params: dict[str, Any] = field(default_factory=dict)  # what it changed, e.g. {"BLOCK": 1024}
    parent: str | None = None  # key of the candidate it was derived from
    description: str = ""

    @property
    def key(self) -> str:
        return source_key(self.source)
