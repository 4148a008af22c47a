"""What the local executor's launch capture sees is what the evaluation will run."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import FIXTURES
from tritonforge.commands.session import Session, SessionOptions
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.executors.local import LocalExecutor
from tritonforge.worker.timing import TimingConfig


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path is taken only where CUDA is absent")
def test_a_cpu_run_captures_the_host_path_the_interpreter_runs():
    # `BLOCK = 2048 if torch.cuda.is_available() and ... else 256`: CUDA's stand-ins (for a
    # capture of what a GPU will run) had shown the GPU branch to a CPU run, whose every move
    # then edited a branch that never ran there.
    problem = FIXTURES / "problems" / "styles" / "device_branch.py"
    with Session(problem, SessionOptions(evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=1)))) as s:
        captured = LocalExecutor(s.evaluator).capture(None)
    assert not captured.failures
    for launches in captured.launches.values():
        [launch] = launches
        block = next(a["value"] for a in launch["args"] if a["name"] == "BLOCK")
        assert (block, launch["num_warps"]) == (256, 4)
