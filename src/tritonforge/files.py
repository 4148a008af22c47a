"""Writing files that a killed run must never leave half-written."""

from __future__ import annotations

from pathlib import Path


def write_whole(path: Path, data: str | bytes) -> None:
    """Write through a temporary file and rename it into place: readers (and a resumed
    run) see the old file or the new one, never part of it. Text is written as UTF-8."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data.encode() if isinstance(data, str) else data)
    tmp.replace(path)
