"""A problem whose optimum is several doublings away: the search leaps there in its first
round, where x2 steps spent the whole default budget of 24 to reach BLOCK_N 64 (a 64 x 64 tile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonforge.commands.optimize import OptimizeOptions, optimize
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.search.loop import SearchConfig
from tritonforge.worker.timing import TimingConfig

FAR = Path(__file__).resolve().parents[1] / "fixtures" / "problems" / "far_optimum.py"


@pytest.mark.slow
def test_optimize_reaches_a_tile_many_doublings_away(tmp_path):
    # The default rules (patience 2, no floor known on the CPU), a budget of one round.
    config = SearchConfig(budget=3, minutes=None, per_round=3)
    outcome = optimize(FAR, OptimizeOptions(out=tmp_path / "run", search=config,
                                            evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2))))
    best = outcome.result.best.params
    assert outcome.result.improved and outcome.summary["cases"][0]["correct"]
    assert best["row_mean_kernel.BLOCK_N"] >= 256  # 8 -> 256 or more: five doublings or more
    first = outcome.result.history[0].candidate
    assert first.params["row_mean_kernel.BLOCK_N"] >= 128 and outcome.result.history[0].status == "correct"
