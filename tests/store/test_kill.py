"""A writer SIGKILLed at random moments loses nothing it committed, and resumes cleanly."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tritonforge.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import _kill_writer as writer  # noqa: E402

WRITER = Path(__file__).with_name("_kill_writer.py")


def run_and_kill(path: Path, rng: random.Random, anywhere: bool) -> list[str]:
    """Start the writer, kill it at a random moment; the keys it said were committed.

    `anywhere`: at a random time from the start (startup, open, resume or writing);
    otherwise a random moment after a random number of commits, mostly mid-transaction."""
    proc = subprocess.Popen([sys.executable, str(WRITER), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, proc.kill)  # a wedged writer fails the test, not hangs it
    watchdog.start()
    reported: list[str] = []
    try:
        if anywhere:
            time.sleep(rng.uniform(0, 0.15))  # the writer's first commit comes at ~0.05 s
        else:
            want = rng.randint(1, 40)
            while len(reported) < want:
                line = proc.stdout.readline()
                assert line.endswith("\n"), f"writer died on its own: {proc.stderr.read()}"
                reported.append(line.split()[1])
            time.sleep(rng.uniform(0, 0.005))  # a commit takes ~0.5 ms: lands inside a later one
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
    finally:
        watchdog.cancel()
    assert proc.returncode == -signal.SIGKILL
    # A kill can cut the last line short; only a whole line is a claim of a commit.
    return reported + [line.split()[1] for line in out.splitlines(keepends=True)
                       if line.endswith("\n")]


def check(path: Path, committed: dict[str, dict]) -> dict[str, dict]:
    """Open as --resume would and check the store against what is known committed."""
    with RunStore.open(path) as store:
        judged = {c.key: (c, ev) for c, ev in store.judged()}
        pending = store.pending()
    for key, ev in committed.items():  # nothing committed before a kill is lost or altered
        assert judged[key][1] == ev
    for c, ev in judged.values():  # every row is exactly what the writer meant to write
        i = c.params["i"]
        assert c == writer.candidate(i)
        assert ev["verdict"] == writer.verdict(i) and ev["environment"]["i"] == i
        assert ev["round"] == i // writer.BATCH and ev["wall_s"] == 0.5
    raw = sqlite3.connect(path)
    try:
        dupes = raw.execute("SELECT key FROM evaluations GROUP BY key HAVING count(*) > 1")
        assert dupes.fetchall() == []
        unjudged = [k for (k,) in raw.execute(
            "SELECT key FROM candidates WHERE key NOT IN (SELECT key FROM evaluations)"
            " ORDER BY seq")]
    finally:
        raw.close()
    assert [c.key for c in pending] == unjudged
    assert len(pending) <= writer.BATCH  # at most the batch in flight
    return {k: ev for k, (_, ev) in judged.items()}


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_only_the_candidate_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    RunStore.create(path, "p.py", "src", "f", {}).close()
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")  # shown on failure, to replay the same kill moments
    rng = random.Random(seed)
    committed: dict[str, dict] = {}
    for trial in range(8):
        reported = run_and_kill(path, rng, anywhere=trial % 4 == 3)
        state = check(path, committed)
        assert set(reported) <= set(state)
        committed = state  # everything now on disk must survive the next kill too
    assert len(committed) > 8  # the writer really did make progress between kills
    with RunStore.open(path) as store:
        best = store.best()
        assert best is None or store.evaluation(best)["status"] == "correct"
        assert store.info().state.value == "running"  # never finished: resume marks it
        assert len(store.events("resumed")) >= 1


DIE_WHILE_CREATING = """
import os, signal, sys
from tritonforge.store.sqlite import RunStore

init = RunStore._init
def init_then_die(self, *args):
    init(self, *args)  # the whole store is committed under its temporary name...
    os.kill(os.getpid(), signal.SIGKILL)  # ...and the creator dies before giving it its name
RunStore._init = init_then_die
RunStore.create(sys.argv[1], "p.py", "src", "f", {})
"""


def test_a_creator_killed_mid_create_leaves_nothing_that_blocks_a_new_run(tmp_path: Path) -> None:
    # A half-made store would be refused by open() (so --resume fails) and by create()
    # (so a new run fails too): the directory would be stuck until someone deleted the file.
    path = tmp_path / "run.sqlite"
    proc = subprocess.run([sys.executable, "-c", DIE_WHILE_CREATING, str(path)], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not path.exists()
    with RunStore.create(path, "p.py", "src", "f", {}) as store:
        assert store.info().problem_path == "p.py"
    # Besides the store, only the dead creator's hidden temporary files, which nothing reads.
    assert {p.name for p in tmp_path.iterdir() if not p.name.startswith(".run.sqlite.")} == {"run.sqlite"}
