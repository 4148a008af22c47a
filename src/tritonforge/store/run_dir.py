"""A run directory: refused before any work when it cannot be used, one optimize at a time,
and its store created whole or reopened only for the very same problem file."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from tritonforge.store.sqlite import DEFAULT_FILENAME, RunStore, StoreError


class RunError(Exception):
    """Unusable input for a run (problem, run directory or store): one line, exit 2."""


def prepare_run_dir(out: Path, resume: bool) -> Path:
    """Refuse a run directory that cannot be used, before any work is spent."""
    out = Path(out)
    store = out / DEFAULT_FILENAME
    if resume and not store.exists():
        raise RunError(f"{out}: no run to resume (no {DEFAULT_FILENAME} there)")
    if not resume and store.exists():
        raise RunError(f"{out}: already holds a run; pass --resume to continue it or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunError(f"{out}: cannot write the run directory ({e.strerror or e})") from None
    return out


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """One optimize per run directory: a second one would judge the same candidates again.

    An advisory lock on the directory itself (no lock file to leave behind), which the
    kernel drops when its process dies, so a killed run never leaves its directory locked.
    """
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunError(f"{run_dir}: another optimize is using this run; wait for it to end "
                           "or choose another --out") from None
        yield
    finally:
        os.close(fd)


def create_store(run_dir: Path, problem_path: Path, source: str, entry: str, options: dict[str, Any]) -> RunStore:
    try:
        return RunStore.create(run_dir / DEFAULT_FILENAME, str(problem_path.resolve()), source, entry, options)
    except StoreError as e:
        raise RunError(str(e)) from None


def resume_store(run_dir: Path, problem_path: Path, source: str) -> RunStore:
    """The store in `run_dir`, sound and of a run of this very problem file."""
    path = run_dir / DEFAULT_FILENAME
    try:
        store = RunStore.open(path)
        info = store.info()
    except StoreError as e:
        raise RunError(str(e)) from None
    if info.problem_source != source:
        store.close()
        if Path(info.problem_path) != problem_path.resolve():
            raise RunError(f"{path}: holds a run of {info.problem_path}, not of {problem_path}; choose another --out")
        raise RunError(f"{problem_path}: changed since the run in {run_dir} started; resume needs the same file")
    return store


def check_same_run(store: RunStore, run_dir: Path, entry: str, specs: list[str]) -> None:
    """Candidates judged against another entry or other inputs would not compare."""
    info = store.info()
    if info.entry != entry:
        raise RunError(f"{run_dir}: its run optimizes '{info.entry}', not '{entry}'; "
                       "resume needs the same --entry")
    if info.options.get("specs", []) != specs:
        raise RunError(f"{run_dir}: its run used other --inputs; resume needs the same ones")
