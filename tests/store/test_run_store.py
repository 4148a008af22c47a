"""RunStore: round-trips, identity of sources, pending vs judged, and refusing bad files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tritonforge.domain.verdict import CaseVerdict, Speedup, Status, Timing, Verdict
from tritonforge.store import RunState, RunStore, StoreError
from tritonforge.strategies.base import Candidate

ENV = {"gpu": "H200", "driver": "560.35", "torch": "2.5.1", "triton": "3.3.0"}


def verdict(status: Status = Status.CORRECT, up: float = 1.5) -> Verdict:
    t = Timing(median_ms=1.0, p20_ms=0.9, p80_ms=1.1, n=50)
    case = CaseVerdict("n=1024", status, max_abs_err=1e-6, draws=3, baseline=t, candidate=t,
                       speedup=Speedup(up, up - 0.1, up + 0.1))
    return Verdict("cand.py", status, cases=[case], environment=ENV)


def cand(n: int, **kw) -> Candidate:
    return Candidate(source=f"BLOCK = {n}\n", origin="params", params={"BLOCK": n}, **kw)


def record(store: RunStore, c: Candidate, v: Verdict | None = None, **kw) -> None:
    v = v or verdict()
    up = v.speedup.value if v.speedup else None
    store.record_evaluation(c.key, v.to_json(), speedup=up, faster=v.faster, environment=ENV,
                            started=100.0, finished=102.5, **kw)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "run.sqlite"


@pytest.fixture
def store(path: Path):
    with RunStore.create(path, "problems/add.py", "def add(): ...\n", "add", {"rounds": 3},
                         environment=ENV) as s:
        yield s


def test_create_open_round_trip(store: RunStore, path: Path) -> None:
    base, child = cand(256), cand(1024, parent=cand(256).key, description="bigger block")
    v = verdict(up=1.8)
    assert store.add_candidate(base, round=0) and store.add_candidate(child, round=1)
    record(store, base, verdict(up=1.0))
    record(store, child, v, make_best=True)
    store.add_profile(child.key, "static", {"regs": 32})
    store.add_profile(child.key, "ncu", {"dram_pct": 71.5})
    store.log_event("round", {"n": 1})
    store.log_event("pruned", {"move": "BLOCK=4096", "why": "smem"})
    store.set_state("finished")
    store.close()

    with RunStore.open(path) as s:
        info = s.info()
        assert (info.problem_path, info.problem_source, info.entry) == \
            ("problems/add.py", "def add(): ...\n", "add")
        assert info.options == {"rounds": 3} and info.environment == ENV
        assert info.state is RunState.FINISHED and info.updated >= info.created
        assert s.candidate(child.key) == child and s.last_round() == 1
        ev = s.evaluation(child.key)
        assert Verdict.from_json(ev["verdict"]) == Verdict.from_json(v.to_json())
        assert ev["status"] == "correct" and ev["speedup"] == pytest.approx(1.8)
        assert ev["faster"] is True and ev["environment"] == ENV and ev["wall_s"] == 2.5
        assert ev["round"] == 1 and s.best() == child.key and info.best == child.key
        assert [p["kind"] for p in s.profiles(child.key)] == ["static", "ncu"]
        assert s.profiles(child.key, "ncu")[0]["data"] == {"dram_pct": 71.5}
        assert [e["kind"] for e in s.events()] == ["round", "pruned"]
        assert s.events("pruned")[0]["data"] == {"move": "BLOCK=4096", "why": "smem"}


def test_identical_sources_are_stored_once(store: RunStore) -> None:
    assert store.add_candidate(cand(128), round=0) is True
    # Same source from another strategy: same key, not added, first provenance kept.
    again = Candidate(source=cand(128).source, origin="llm", description="rewritten")
    assert store.add_candidate(again, round=2) is False
    assert store.pending() == [cand(128)]
    record(store, cand(128))
    assert store.add_candidate(again, round=3) is False
    assert store.pending() == [] and len(store.judged()) == 1


def test_a_round_is_stored_whole_or_not_at_all(store: RunStore) -> None:
    store.add_candidate(cand(1), round=0)
    bad = Candidate(source="BLOCK = 3\n", origin="params", params={"obj": object()})
    with pytest.raises(StoreError, match="JSON"):
        store.add_candidates([cand(2), bad, cand(4)], round=1)
    assert [c.key for c in store.pending()] == [cand(1).key]  # cand(2) was rolled back with the rest
    assert store.add_candidates([cand(1), cand(2)], round=1) == [False, True]
    assert store.last_round() == 1


def test_pending_and_judged_in_insertion_order(store: RunStore) -> None:
    cs = [cand(n) for n in (512, 64, 2048, 128, 32)]  # keys not sorted like insertion
    for c in cs:
        store.add_candidate(c, round=0)
    record(store, cs[3])
    record(store, cs[0], verdict(Status.WRONG))
    assert store.pending() == [cs[1], cs[2], cs[4]]
    judged = store.judged()
    assert [c for c, _ in judged] == [cs[0], cs[3]]
    assert [e["status"] for _, e in judged] == ["wrong", "correct"]
    assert store.evaluation(cs[1].key) is None


def test_an_evaluation_is_recorded_once_and_only_for_a_candidate(store: RunStore) -> None:
    c = cand(64)
    with pytest.raises(StoreError, match="no candidate"):
        record(store, c)
    store.add_candidate(c, round=0)
    record(store, c)
    with pytest.raises(StoreError, match="already evaluated"):
        record(store, c, verdict(up=9.0))
    assert store.evaluation(c.key)["speedup"] == pytest.approx(1.5)  # first one kept


def test_only_a_correct_candidate_can_be_best(store: RunStore) -> None:
    good, bad, unjudged = cand(1), cand(2), cand(3)
    for c in (good, bad, unjudged):
        store.add_candidate(c, round=0)
    record(store, good)
    assert store.best() is None
    with pytest.raises(StoreError, match="not evaluated"):
        store.set_best(unjudged.key)
    with pytest.raises(StoreError, match="wrong"):
        record(store, bad, verdict(Status.WRONG), make_best=True)
    # The refused make_best rolled the whole evaluation back: one transaction.
    assert store.evaluation(bad.key) is None
    store.set_best(good.key)
    assert store.best() == good.key


def test_events_are_append_only(store: RunStore, path: Path) -> None:
    store.log_event("round", {"n": 0})
    raw = sqlite3.connect(path)  # the schema itself refuses, whoever writes
    try:
        for sql in ("DELETE FROM events", "UPDATE events SET kind = 'x'"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                raw.execute(sql)
    finally:
        raw.close()
    assert [e["kind"] for e in store.events()] == ["round"]


def test_create_refuses_an_existing_file_unless_asked(store: RunStore, path: Path) -> None:
    store.add_candidate(cand(1), round=0)
    with pytest.raises(StoreError, match="already exists"):
        RunStore.create(path, "p.py", "", "f", {})
    store.close()
    with RunStore.create(path, "q.py", "", "g", {}, overwrite=True) as s:
        assert s.info().entry == "g" and s.pending() == []


def test_unserialisable_data_is_refused_without_writing(store: RunStore) -> None:
    with pytest.raises(StoreError, match="JSON"):
        store.log_event("x", {"obj": object()})
    assert store.events() == []


# ------------------------------------------------------------------ refusals on open


def filled_store(path: Path) -> int:
    """A closed store spanning many pages; returns its size."""
    with RunStore.create(path, "p.py", "src", "f", {}) as s:
        for n in range(150):
            c = Candidate(source=f"# {n}\n" + "pass\n" * n, origin="o")
            s.add_candidate(c, round=0)
            record(s, c)
    assert not Path(f"{path}-wal").exists()  # closing checkpointed everything into the file
    return path.stat().st_size


def refused(path: Path, match: str) -> str:
    with pytest.raises(StoreError, match=match) as e:
        RunStore.open(path)
    msg = str(e.value)
    assert str(path) in msg and "\n" not in msg  # one line, naming the file
    return msg


def test_open_refuses_a_text_file(path: Path) -> None:
    path.write_text("BLOCK = 1024\n")
    refused(path, "not a TritonForge run store")


def test_open_refuses_an_empty_file(path: Path) -> None:
    path.touch()
    refused(path, "empty file")


def test_open_refuses_another_sqlite_database(path: Path) -> None:
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t (a)")
    refused(path, "SQLite file of another kind")


def test_open_refuses_a_directory_and_a_missing_file(tmp_path: Path) -> None:
    refused(tmp_path, "is a directory")
    refused(tmp_path / "nope.sqlite", "no such run store")
    assert not (tmp_path / "nope.sqlite").exists()  # open never creates


def test_open_refuses_a_truncated_store(path: Path) -> None:
    size = filled_store(path)
    os.truncate(path, size // 2)
    refused(path, "corrupted")


def test_open_refuses_overwritten_pages(path: Path) -> None:
    size = filled_store(path)
    with open(path, "r+b") as f:
        f.seek(size // 2)
        f.write(bytes(range(256)) * 32)  # two pages of garbage mid-file
    refused(path, "corrupted")


def test_open_refuses_a_newer_schema(path: Path) -> None:
    RunStore.create(path, "p.py", "", "f", {}).close()
    with sqlite3.connect(path) as c:
        c.execute("UPDATE schema_version SET version = version + 1")
    refused(path, "newer TritonForge")


def test_create_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        RunStore.create(tmp_path, "p.py", "", "f", {})
