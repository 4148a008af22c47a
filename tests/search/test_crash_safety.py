"""`tritonforge optimize` SIGKILLed at random moments, resumed each time, then run to the end,
loses nothing, judges nothing twice, and reaches the verdicts of a run that was never killed.

The seed of the kill moments is printed in every assertion message; TF_CRASH_SEED=N replays it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import FIXTURES
from tritonforge.search.loop import Search, SearchConfig
from tritonforge.store import RunStore
from tritonforge.strategies.base import Candidate

# Small and quick in the interpreter, with verdicts of several kinds (correct, wrong, a new best).
PROBLEM = FIXTURES / "problems" / "floor_grid_add.py"
BUDGET = 7  # round 1 proposes 6 candidates, round 2 the 7th
KILLS = 3
RUN_FILES = ("best.py", "baseline.py", "best.diff", "summary.json", "report.md")


def optimize_cmd(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tritonforge", "optimize", str(PROBLEM), "--device", "cpu", "--out", str(out),
            "--budget", str(BUDGET), "--minutes", "30", *extra]


def start(cmd: list[str]) -> subprocess.Popen:
    # Its own process group, so that a kill takes the command down at once; its worker, in a
    # session of its own, sees its pipe close and exits.
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def judged(db: Path) -> int | None:
    """Evaluations committed so far; None while there is no store."""
    if not db.exists():
        return None
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    except sqlite3.DatabaseError:
        return None
    finally:
        con.close()


def _reached(count: int | None, target: int) -> bool:
    return count is not None and count >= target


def evaluations(db: Path) -> dict[str, tuple]:
    """Every stored evaluation, whole: a judgement repeated or lost changes this."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return {k: rest for k, *rest in con.execute("SELECT key, status, verdict, started, finished FROM evaluations")}
    finally:
        con.close()


def statuses(db: Path) -> tuple[dict[str, str], set[str]]:
    """Verdict status by candidate key, and the keys of round 1 (proposed from the baseline)."""
    with RunStore.open(db) as store:
        judged = store.judged()
    return {c.key: ev["status"] for c, ev in judged}, {c.key for c, ev in judged if ev["round"] == 1}


@pytest.fixture
def uninterrupted(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, Path]]:
    """The same command, never killed; it runs alongside, to keep the test's wall time down."""
    proc = start(optimize_cmd(tmp_path / "whole"))
    yield proc, tmp_path / "whole" / "run.sqlite"
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_matches_an_uninterrupted_run(
        tmp_path: Path, uninterrupted: tuple[subprocess.Popen, Path]) -> None:
    seed = int(os.environ.get("TF_CRASH_SEED") or int.from_bytes(os.urandom(4), "little"))
    rng = random.Random(seed)
    kills: list[str] = []  # what each kill left, for the messages

    def why() -> str:
        return f"(seed {seed}; TF_CRASH_SEED={seed} replays these kill moments; after each kill: {kills})"

    killed_out, db = tmp_path / "killed", tmp_path / "killed" / "run.sqlite"

    kept: dict[str, tuple] = {}  # what was judged before the latest kill: must survive as it is
    for kill in range(KILLS):
        # A random moment after this process has judged a random number of candidates (a new
        # run: after its store appeared): mid-evaluation, mid-timing, between a verdict and
        # the next round, in the final timing or while the run files are written.
        count = judged(db)
        target = (count or 0) + rng.randint(0 if count is None else 1, 3)
        proc = start(optimize_cmd(killed_out, *(["--resume"] if count is not None else [])))
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and not _reached(judged(db), target):
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 2.0))
        if proc.poll() is not None:  # finished before this kill: nothing left to interrupt
            assert proc.returncode == 0, f"{why()} {proc.stderr.read()}"
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills.append(f"{len(evaluations(db)) if db.exists() else 'no store'} judged")
        if db.exists():
            with RunStore.open(db):  # opens as --resume would: sound, of our schema
                pass
            now = evaluations(db)
            lost = {k for k, v in kept.items() if now.get(k) != v}
            assert not lost, f"{why()} kill {kill + 1}: judged candidates lost or judged again: {lost}"
            kept = now

    done = subprocess.run(optimize_cmd(killed_out, "--resume"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{why()} {done.stderr}"
    final = evaluations(db)
    assert all(final.get(k) == v for k, v in kept.items()), f"{why()} a judged candidate was lost or judged again"
    with RunStore.open(db) as store:
        assert store.pending() == [], why()
        assert store.info().state.value == "finished", why()
        sources = [c.source for c, _ in store.judged()]
        assert len(sources) == len(set(sources)) == BUDGET + 1, f"{why()} baseline + budget, each source once"
        best = store.candidate(store.best())
        assert store.evaluation(best.key)["status"] == "correct", why()
    for name in RUN_FILES:
        assert (killed_out / name).is_file(), f"{why()} {name} missing"
    summary = json.loads((killed_out / "summary.json").read_text())
    assert summary["candidates_tried"] == BUDGET and summary["best"]["key"] == best.key, why()
    assert (killed_out / "best.py").read_text() == best.source, why()

    reference, reference_db = uninterrupted
    assert reference.wait(timeout=300) == 0, f"{why()} {reference.stderr.read()}"
    got, _ = statuses(db)
    want, want_round1 = statuses(reference_db)
    # Round 1 is proposed from the baseline alone, so both runs judge the same candidates in it
    # (a kill before the round was stored makes the resumed run propose it again, as round 2).
    # Later rounds start from the best so far, which CPU timing noise may choose differently:
    # there only the candidates both runs tried are compared.
    assert len(want_round1) == 6 and want_round1 <= set(got), f"{why()} {want_round1} vs {set(got)}"
    shared = set(got) & set(want)
    assert {k: got[k] for k in shared} == {k: want[k] for k in shared}, why()
    assert len({want[k] for k in shared}) > 1, f"{why()} the comparison should cover several kinds of verdict"


def test_a_partial_candidate_file_is_rewritten_before_it_is_judged(tmp_path: Path) -> None:
    # A kill while a candidate's file was being written leaves its first bytes; a resume must
    # judge the candidate, not the fragment.
    search = Search(executor=None, store=None, strategies=[], config=SearchConfig(), workdir=tmp_path,
                    baseline_source="")
    c = Candidate(source="x = 'é'\n" * 100, origin="test")
    partial = tmp_path / "candidates" / f"{c.key}.py"
    partial.write_bytes(c.source.encode()[:42])  # cut inside the two bytes of the fifth 'é'
    assert search.path_of(c).read_text() == c.source
    assert [p.name for p in partial.parent.iterdir()] == [partial.name]  # no temporary file left
