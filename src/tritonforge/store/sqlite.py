"""The run store: everything a run learned, in one SQLite file, so a run can resume.

One writer (the search loop) commits each fact in its own transaction the moment it is
known. A killed run therefore loses at most the candidate that was being evaluated, and
`pending()` on reopen lists exactly what still needs evaluating.

Durability: WAL journal with synchronous=FULL. NORMAL would already survive SIGKILL of the
writer (a committed WAL frame is in the OS page cache), but not a host crash or power loss,
and a GPU hang that forces a reboot is a realistic way for a tuning run to end. An fsync per
commit costs far less than the seconds one evaluation takes.
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from tritonforge.domain.verdict import Status
from tritonforge.domain.candidate import Candidate

SCHEMA_VERSION = 1
# Written into the SQLite header so `file`/hexdump and our own open() can tell a TritonForge
# store from any other SQLite database. ASCII "TFrg".
APPLICATION_ID = 0x54467267
DEFAULT_FILENAME = "run.sqlite"  # the conventional name inside a run directory
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE schema_version (
    version INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE run (
    id INTEGER PRIMARY KEY CHECK (id = 1),          -- exactly one run per store
    problem_path TEXT NOT NULL,
    problem_source TEXT NOT NULL,                   -- kept so a resume sees what was tuned
    entry TEXT NOT NULL,
    options TEXT NOT NULL,                          -- json
    environment TEXT NOT NULL,                      -- json, of the machine that started it
    state TEXT NOT NULL CHECK (state IN ('running', 'finished', 'interrupted')),
    best TEXT REFERENCES candidates(key),
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE candidates (
    key TEXT PRIMARY KEY,                           -- Candidate.key: hash of the source
    seq INTEGER NOT NULL UNIQUE,                    -- order of insertion
    source TEXT NOT NULL,
    origin TEXT NOT NULL,
    params TEXT NOT NULL,                           -- json
    -- Not a foreign key: a strategy may derive from a source the loop never stored, and a
    -- provenance detail must not make an insert fail.
    parent TEXT,
    description TEXT NOT NULL,
    round INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE evaluations (
    key TEXT PRIMARY KEY REFERENCES candidates(key), -- one evaluation per candidate
    status TEXT NOT NULL,
    verdict TEXT NOT NULL,                          -- json, Verdict.to_json()
    speedup REAL,
    faster INTEGER NOT NULL CHECK (faster IN (0, 1)),
    environment TEXT NOT NULL,                      -- json: GPU, driver, torch, triton
    started REAL NOT NULL,
    finished REAL NOT NULL,
    wall_s REAL NOT NULL
);
CREATE TABLE profiles (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL REFERENCES candidates(key),
    kind TEXT NOT NULL,                             -- "ncu", "static", ...
    data TEXT NOT NULL,                             -- json
    created REAL NOT NULL
);
CREATE INDEX profiles_key ON profiles(key);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL                              -- json
);
CREATE INDEX events_kind ON events(kind);
-- The log explains the run after the fact; rewriting it would make it lie.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""


class StoreError(Exception):
    """The store file is missing, foreign, damaged, too new, or a write was refused."""


class RunState(str, enum.Enum):
    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"  # stopped by the user or found 'running' on resume


@dataclass
class RunInfo:
    problem_path: str
    problem_source: str
    entry: str
    options: dict[str, Any]
    environment: dict[str, Any]
    state: RunState
    best: str | None  # key of the best candidate, once set
    created: float
    updated: float


# Evaluations, profiles and events come back as plain dicts, like the JSON they mostly hold:
# evaluation {key, round, status, verdict, speedup, faster, environment, started, finished,
# wall_s}; profile {key, kind, data, created}; event {id, time, kind, data}.
Row = dict[str, Any]


class RunStore:
    """One run's store. Make it with `create` or `open`; one process writes at a time."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    # ------------------------------------------------------------------ opening

    @classmethod
    def create(cls, path: str | os.PathLike[str], problem_path: str, problem_source: str,
               entry: str, options: dict[str, Any], *, environment: dict[str, Any] | None = None,
               overwrite: bool = False) -> "RunStore":
        """A new store in the file `path`; an existing file is refused unless `overwrite`.

        The store is made under a temporary name and linked into place whole, so a creator
        killed half-way leaves no `path`: never a half-made file that `open` would refuse
        and `create` would not replace, which would block the run directory for good.
        """
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, not a TritonForge run store")
        if overwrite:
            for p in _store_files(path):
                p.unlink(missing_ok=True)
        if path.exists():
            raise StoreError(f"{path}: already exists; resume it or ask to overwrite")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            for p in _store_files(tmp):  # left by a killed creator that had our pid
                p.unlink(missing_ok=True)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except OSError as e:
            raise StoreError(f"{path}: cannot create: {e.strerror}") from None
        try:
            with cls(path, _connect(tmp)) as store:
                _set_pragmas(path, store._conn)
                store._init(problem_path, problem_source, entry, options, environment or {})
            # Closing the last connection checkpointed the WAL into the file and removed it.
            if Path(f"{tmp}-wal").exists():
                raise StoreError(f"{path}: cannot create: the journal was not checkpointed")
            _publish(tmp, path)
        finally:
            for p in _store_files(tmp):
                p.unlink(missing_ok=True)
        return cls.open(path)

    def _init(self, problem_path: str, problem_source: str, entry: str,
              options: dict[str, Any], environment: dict[str, Any]) -> None:
        now = time.time()
        c = self._conn
        try:
            # Schema, identity and the run row commit together: the file is a whole store
            # or, if the creator dies first, plainly not one.
            c.executescript(f"BEGIN IMMEDIATE; PRAGMA application_id = {APPLICATION_ID};"
                            + _SCHEMA)
            c.execute("INSERT INTO schema_version VALUES (?, ?)", (SCHEMA_VERSION, now))
            c.execute("INSERT INTO run (id, problem_path, problem_source, entry, options,"
                      " environment, state, created, updated) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (problem_path, problem_source, entry, _dumps(options, "options"),
                       _dumps(environment, "environment"), RunState.RUNNING.value, now, now))
            c.execute("COMMIT")
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot create: {e}") from e

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "RunStore":
        """An existing store (for --resume), checked to be sound and of a schema we read."""
        path = Path(path)
        _check_file(path)
        try:
            conn = _connect(path)
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open: {e}") from e
        try:
            _validate(path, conn)
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def close(self) -> None:
        self._conn.close()

    def discard(self) -> None:
        """Close and delete the store: for a new run that never got past an unusable problem."""
        self.close()
        for p in _store_files(self.path):
            p.unlink(missing_ok=True)

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------------- run

    def info(self) -> RunInfo:
        r = self._one("SELECT * FROM run WHERE id = 1")
        return RunInfo(problem_path=r["problem_path"], problem_source=r["problem_source"],
                       entry=r["entry"], options=json.loads(r["options"]),
                       environment=json.loads(r["environment"]), state=RunState(r["state"]),
                       best=r["best"], created=r["created"], updated=r["updated"])

    def set_state(self, state: RunState | str) -> None:
        state = RunState(state)
        with self._write() as c:
            c.execute("UPDATE run SET state = ?", (state.value,))

    # --------------------------------------------------------------- candidates

    def add_candidate(self, c: Candidate, round: int) -> bool:  # noqa: A002 (the brief's name)
        """Store `c`; False when the same source is already stored (it is evaluated once)."""
        return self.add_candidates([c], round)[0]

    def add_candidates(self, cs: list[Candidate], round: int) -> list[bool]:  # noqa: A002
        """Store a round's candidates in one transaction: a kill leaves all of them or none,
        so a resumed run judges the whole round it had proposed. True for each one added."""
        added = []
        with self._write() as conn:
            for c in cs:
                old = conn.execute("SELECT source FROM candidates WHERE key = ?", (c.key,)).fetchone()
                if old is not None:
                    if old["source"] != c.source:  # 64-bit key: unlikely, but never silently merge
                        raise StoreError(f"{self.path}: key collision on {c.key} between two sources")
                    added.append(False)
                    continue
                conn.execute(
                    "INSERT INTO candidates (key, seq, source, origin, params, parent, description,"
                    " round, created) VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM candidates),"
                    " ?, ?, ?, ?, ?, ?, ?)",
                    (c.key, c.source, c.origin, _dumps(c.params, "params"), c.parent, c.description,
                     round, time.time()))
                added.append(True)
        return added

    def candidate(self, key: str) -> Candidate | None:
        r = self._one("SELECT * FROM candidates WHERE key = ?", key)
        return _candidate(r) if r is not None else None

    def pending(self) -> list[Candidate]:
        """Candidates added but not judged, in insertion order: what a resume evaluates."""
        rows = self._all("SELECT c.* FROM candidates c LEFT JOIN evaluations e USING (key)"
                         " WHERE e.key IS NULL ORDER BY c.seq")
        return [_candidate(r) for r in rows]

    def last_round(self) -> int | None:
        """The highest round any candidate was added in; None for an empty store."""
        return self._one("SELECT max(round) AS r FROM candidates")["r"]

    # -------------------------------------------------------------- evaluations

    def record_evaluation(self, key: str, verdict_json: dict[str, Any], *, speedup: float | None,
                          faster: bool, environment: dict[str, Any], started: float,
                          finished: float, make_best: bool = False) -> None:
        """Judge candidate `key`, once. `make_best` moves the best in the same transaction,
        so a kill cannot leave a recorded winner that the store does not call best."""
        status = _status(verdict_json)
        with self._write() as c:
            if c.execute("SELECT 1 FROM candidates WHERE key = ?", (key,)).fetchone() is None:
                raise StoreError(f"{self.path}: no candidate {key} to record an evaluation for")
            if c.execute("SELECT 1 FROM evaluations WHERE key = ?", (key,)).fetchone():
                raise StoreError(f"{self.path}: candidate {key} is already evaluated")
            c.execute("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (key, status, _dumps(verdict_json, "verdict"), speedup, int(bool(faster)),
                       _dumps(environment, "environment"), started, finished, finished - started))
            if make_best:
                self._set_best_in(c, key)

    def evaluation(self, key: str) -> Row | None:
        r = self._one(f"SELECT c.key, c.round, {_EVAL_COLUMNS} FROM evaluations e"
                      " JOIN candidates c USING (key) WHERE key = ?", key)
        return _evaluation(r) if r is not None else None

    def judged(self) -> list[tuple[Candidate, Row]]:
        """Every evaluated candidate with its evaluation, in insertion order."""
        rows = self._all(f"SELECT c.*, {_EVAL_COLUMNS}"
                         " FROM candidates c JOIN evaluations e USING (key) ORDER BY c.seq")
        return [(_candidate(r), _evaluation(r)) for r in rows]

    # --------------------------------------------------------------------- best

    def set_best(self, key: str) -> None:
        """Only a candidate judged correct can be best; the loop decides which one."""
        with self._write() as c:
            self._set_best_in(c, key)

    def _set_best_in(self, c: sqlite3.Connection, key: str) -> None:
        r = c.execute("SELECT status FROM evaluations WHERE key = ?", (key,)).fetchone()
        if r is None or r["status"] != Status.CORRECT.value:
            got = "not evaluated" if r is None else r["status"]
            raise StoreError(f"{self.path}: {key} cannot be best: {got}, not correct")
        c.execute("UPDATE run SET best = ?", (key,))

    def best(self) -> str | None:
        """Key of the best candidate, None until one is set."""
        return self._one("SELECT best FROM run WHERE id = 1")["best"]

    # ----------------------------------------------------------------- profiles

    def add_profile(self, key: str, kind: str, data: dict[str, Any]) -> None:
        with self._write() as c:
            c.execute("INSERT INTO profiles (key, kind, data, created) VALUES (?, ?, ?, ?)",
                      (key, kind, _dumps(data, "profile"), time.time()))

    def profiles(self, key: str, kind: str | None = None) -> list[Row]:
        """Profiles of `key`, oldest first (several of one kind are all kept)."""
        sql, args = "SELECT * FROM profiles WHERE key = ?", [key]
        if kind is not None:
            sql, args = sql + " AND kind = ?", args + [kind]
        return [{"key": r["key"], "kind": r["kind"], "data": json.loads(r["data"]),
                 "created": r["created"]} for r in self._all(sql + " ORDER BY id", *args)]

    # ------------------------------------------------------------------- events

    def log_event(self, kind: str, data: Any = None) -> int:
        """Append to the run's log; returns the event's id."""
        with self._write() as c:
            cur = c.execute("INSERT INTO events (time, kind, data) VALUES (?, ?, ?)",
                            (time.time(), kind, _dumps(data, "event")))
            return int(cur.lastrowid)

    def events(self, kind: str | None = None) -> list[Row]:
        """The log, oldest first; `id` increases in logging order."""
        sql, args = "SELECT * FROM events", []
        if kind is not None:
            sql, args = sql + " WHERE kind = ?", [kind]
        return [{"id": r["id"], "time": r["time"], "kind": r["kind"], "data": json.loads(r["data"])}
                for r in self._all(sql + " ORDER BY id", *args)]

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; every public write is exactly one of these."""
        c = self._conn
        try:
            # IMMEDIATE takes the write lock up front, so a check made inside holds at COMMIT.
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
                c.execute("UPDATE run SET updated = ?", (time.time(),))
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:  # SQLite rolls back by itself on some errors
                    c.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: {e}") from e

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        try:
            return self._conn.execute(sql, args).fetchone()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: {e}") from e

    def _all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: {e}") from e


# ---------------------------------------------------------------------- helpers


def _store_files(path: Path) -> list[Path]:
    return [path, Path(f"{path}-wal"), Path(f"{path}-shm")]


def _publish(tmp: Path, path: Path) -> None:
    """Give the finished store its name; never replace a file that appeared meanwhile."""
    try:
        os.link(tmp, path)  # atomic, and refused when `path` exists: of two creators, one wins
    except FileExistsError:
        raise StoreError(f"{path}: already exists; resume it or ask to overwrite") from None
    except OSError:  # a file system without hard links
        if path.exists():
            raise StoreError(f"{path}: already exists; resume it or ask to overwrite") from None
        os.rename(tmp, path)
    try:  # the new name must survive a power loss as the store's contents do
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the contents are synced anyway


def _connect(path: Path) -> sqlite3.Connection:
    # mode=rw: open() must never conjure an empty database out of a mistyped path.
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True,
                           isolation_level=None, timeout=10.0)
    conn.row_factory = sqlite3.Row
    return conn


def _set_pragmas(path: Path, conn: sqlite3.Connection) -> None:
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode != "wal":  # e.g. a file system without shared memory; durability claims need WAL
        raise StoreError(f"{path}: cannot use a WAL journal here (got {mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")


def _check_file(path: Path) -> None:
    """Cheap refusals with plain messages, before SQLite sees the file."""
    if path.is_dir():
        raise StoreError(f"{path}: is a directory, not a TritonForge run store")
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        raise StoreError(f"{path}: no such run store") from None
    except OSError as e:
        raise StoreError(f"{path}: cannot read: {e.strerror}") from None
    # An empty main file with a WAL beside it can be a store whose pages were never
    # checkpointed; let SQLite recover it. Without a WAL it is simply empty.
    if not head and not Path(f"{path}-wal").exists():
        raise StoreError(f"{path}: empty file, not a TritonForge run store")
    if head and head != _SQLITE_MAGIC:
        raise StoreError(f"{path}: not a TritonForge run store (not an SQLite database)")


def _validate(path: Path, conn: sqlite3.Connection) -> None:
    try:
        problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: corrupted run store ({e})") from e
    if problems != ["ok"]:
        first = " ".join(str(problems[0]).split())[:160]  # one line, readable length
        raise StoreError(f"{path}: corrupted run store ({len(problems)} problems; {first})")
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    has_version = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                               " AND name = 'schema_version'").fetchone()
    if app_id != APPLICATION_ID or not has_version:
        raise StoreError(f"{path}: not a TritonForge run store (an SQLite file of another kind)")
    version = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    if version is None or conn.execute("SELECT count(*) FROM run").fetchone()[0] != 1:
        raise StoreError(f"{path}: incomplete run store (no schema version or run row)")
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path}: written by a newer TritonForge (store schema {version},"
                         f" this version reads up to {SCHEMA_VERSION}); upgrade to resume it")
    if version < SCHEMA_VERSION:  # no older schema exists yet; a migration would go here
        raise StoreError(f"{path}: store schema {version} is older than {SCHEMA_VERSION}"
                         " and has no migration")
    _set_pragmas(path, conn)


def _dumps(obj: Any, what: str) -> str:
    try:
        return json.dumps(obj)
    except (TypeError, ValueError) as e:
        raise StoreError(f"{what} is not JSON-serialisable: {e}") from None


def _status(verdict_json: dict[str, Any]) -> str:
    try:
        return Status(verdict_json["status"]).value
    except (KeyError, TypeError, ValueError):
        raise StoreError("verdict has no valid 'status' (expected Verdict.to_json())") from None


def _candidate(r: sqlite3.Row) -> Candidate:
    return Candidate(source=r["source"], origin=r["origin"], params=json.loads(r["params"]),
                     parent=r["parent"], description=r["description"])


_EVAL_COLUMNS = ("e.status, e.verdict, e.speedup, e.faster, e.environment, e.started,"
                 " e.finished, e.wall_s")


def _evaluation(r: sqlite3.Row) -> Row:
    return {"key": r["key"], "round": r["round"], "status": r["status"], "verdict": json.loads(r["verdict"]),
            "speedup": r["speedup"], "faster": bool(r["faster"]),
            "environment": json.loads(r["environment"]), "started": r["started"],
            "finished": r["finished"], "wall_s": r["wall_s"]}
