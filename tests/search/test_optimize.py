"""The optimization loop end to end in Triton's interpreter: it finds a correct, faster
drop-in file, records everything, and resumes after SIGKILL without losing or repeating
a judged candidate."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.worker.timing import TimingConfig
from tritonforge.commands.optimize import OptimizeOptions, RunError, optimize
from tritonforge.search.loop import SearchConfig
from tritonforge.store import RunStore

pytestmark = pytest.mark.slow  # whole optimize runs, one of them killed and resumed


def options(out: Path, budget: int, **kw) -> OptimizeOptions:
    return OptimizeOptions(out=out, evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)),
                           search=SearchConfig(budget=budget, minutes=None, per_round=3, patience=3), **kw)


def test_loop_finds_a_correct_drop_in_and_writes_the_run_files(tmp_path):
    events = []
    outcome = optimize(EXAMPLES / "vector_add.py", options(tmp_path / "run", 5),
                       observer=lambda kind, data: events.append(kind))
    s = outcome.summary
    assert s["candidates_tried"] == 5
    assert s["timing"] == "interpreter, not GPU"
    assert all(c["correct"] for c in s["cases"])
    files = outcome.files
    assert files["best"].read_text() == outcome.result.best.source
    assert files["baseline"].read_text() == (EXAMPLES / "vector_add.py").read_text()
    if s["improved"]:
        diff = files["diff"].read_text()
        assert "BLOCK" in diff or "num_warps" in diff or "(hints)" in diff  # a launch move or the hints recipe
    else:
        assert files["diff"].read_text() == ""
        assert "best.py is the baseline" in s["result"]
    assert "TritonForge run" in files["report"].read_text()
    assert json.loads(files["summary"].read_text())["candidates_tried"] == 5
    assert events[0] == "baseline" and "round" in events and "judged" in events
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        assert store.info().state.value == "finished" if hasattr(store.info().state, "value") else True
        judged = store.judged()
        assert len(judged) == 6  # baseline + budget
        # per_shape may use the budget's last slot when the two cases were won by different candidates.
        origins = {c.origin for c, _ in judged}
        assert {"baseline", "launch_params"} <= origins <= {"baseline", "launch_params", "per_shape", "recipes"}
        space = store.events("search_space")
        launch = [e for e in space if e["data"]["strategy"] == "launch_params"]
        assert launch and launch[0]["data"]["space"]["tunables"]
        assert all(ev["environment"]["torch"] for _, ev in judged)


def test_an_existing_run_is_not_overwritten_and_resume_needs_a_store(tmp_path):
    optimize(EXAMPLES / "vector_add.py", options(tmp_path / "run", 1))
    with pytest.raises(RunError, match="already holds a run"):
        optimize(EXAMPLES / "vector_add.py", options(tmp_path / "run", 1))
    with pytest.raises(RunError, match="no run to resume"):
        optimize(EXAMPLES / "vector_add.py", options(tmp_path / "other", 1, resume=True))


def _judged(db: Path) -> dict[str, str]:
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return dict(con.execute("SELECT key, verdict FROM evaluations"))
    except sqlite3.DatabaseError:
        return {}
    finally:
        con.close()


def _optimize_cmd(out: Path, budget: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tritonforge", "optimize", str(EXAMPLES / "softmax.py"), "--device", "cpu",
            "--out", str(out), "--budget", str(budget), "--minutes", "30", *extra]


def test_resume_after_sigkill_loses_and_repeats_nothing(tmp_path):
    out, db, budget = tmp_path / "run", tmp_path / "run" / "run.sqlite", 6
    before: dict[str, str] = {}
    for attempt, kill_after in enumerate((2, 4)):  # kill twice, at different depths
        cmd = _optimize_cmd(out, budget, *(["--resume"] if attempt else []))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 240
        while len(_judged(db)) < kill_after and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        now = _judged(db)
        assert all(now[k] == v for k, v in before.items())  # nothing judged was lost or changed
        before = now
    done = subprocess.run(_optimize_cmd(out, budget, "--resume"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    final = _judged(db)
    assert all(final[k] == v for k, v in before.items())
    assert len(final) == budget + 1  # baseline + budget, each judged exactly once (key is unique)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["candidates_tried"] == budget
    with RunStore.open(db) as store:
        assert store.pending() == []


def test_ncu_profiles_of_baseline_and_new_bests_are_kept_even_without_a_gpu(tmp_path):
    # Without a GPU, Nsight Compute cannot run: the run says so in its record and goes on.
    opts = options(tmp_path / "run", 2)
    opts.ncu = True
    outcome = optimize(EXAMPLES / "vector_add.py", opts)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        baseline_key = next(c.key for c, _ in store.judged() if c.origin == "baseline")
        [profile] = store.profiles(baseline_key, "ncu")
        assert profile["data"]["available"] is False and "no GPU" in profile["data"]["reason"]
        if outcome.summary["improved"]:
            assert store.profiles(outcome.result.best.key, "ncu")


def test_a_round_records_the_search_space_only_of_strategies_it_asked(tmp_path):
    # With one candidate a round, the recipes fill round 1 and the launch search is not asked:
    # its space was once recorded anyway (empty, so the report said no launch was found).
    opts = options(tmp_path / "run", 2)
    opts.search.per_round = 1
    outcome = optimize(EXAMPLES / "softmax.py", opts)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        first = [c for c, _ in store.judged() if c.origin != "baseline"][0]
        spaces = [e["data"] for e in store.events("search_space") if e["data"]["round"] == 1]
    assert first.origin == "recipes"
    assert [s["strategy"] for s in spaces] == ["recipes"]
    report = outcome.files["report"].read_text()
    assert "No Triton launch was found" not in report and "`softmax_kernel`" in report
