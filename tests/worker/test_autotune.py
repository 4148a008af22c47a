"""@triton.autotune in the interpreter: configs are timed on the CPU clock, and every config a
call could run is checked, so a wrong one cannot hide behind the one the tuner picks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.worker.conftest import check_cases
from tritonforge.domain.verdict import Status

PROBLEM = FIXTURES / "problems" / "autotune_one_config.py"
CANDIDATES = FIXTURES / "candidates"


@pytest.fixture(scope="module")
def problem(client):
    return client.describe(PROBLEM)


def test_a_one_config_autotune_widened_to_several_checks_correct(client, problem):
    for result in check_cases(client, problem, None) + check_cases(client, problem, CANDIDATES / "autotune_widened.py"):
        assert result.status is Status.CORRECT, result.message


def test_a_wrong_config_the_tuner_does_not_pick_is_caught(client, problem):
    results = check_cases(client, problem, CANDIDATES / "autotune_wrong_config.py")
    assert results[0].status is Status.WRONG
    assert "row_sum_kernel at autotune config 2 of 2 (BLOCK_M: 2, BLOCK_N: 8, STEP: 16" in results[0].message


SCRIPT = """
import torch, triton
from tritonforge import triton_hooks
triton_hooks.install_interpreter_compat()
assert triton_hooks.install_interpreter_autotune() and not triton_hooks.install_interpreter_autotune()
from tritonforge.problem.module import import_file
from pathlib import Path
mod = import_file(Path(r"{path}"), "candidate")
x = torch.randn(37, 100)
with triton_hooks.autotune_runs() as tuned:
    mod.row_sum(x)
(run,) = tuned.runs
assert len(run.configs) == 4 and run.index is not None
assert tuned.untried() == [p for p in range(4) if p != run.index]
for pin in range(4):
    with triton_hooks.autotune_runs(pin) as pinned:
        y = mod.row_sum(x)
    assert pinned.runs[0].index == pin and torch.allclose(y, x.sum(1), atol=1e-4)
kernel = mod.row_sum_kernel
assert kernel.cache and all(c is not None for c in kernel.cache.values())  # the tuned choice is kept
print("ok")
"""


def test_hooks_time_on_the_cpu_and_pin_each_config_in_turn():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "src")}
    script = SCRIPT.format(path=CANDIDATES / "autotune_widened.py")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


CORPUS = ROOT / "benchmarks" / "corpus"


@pytest.mark.parametrize("name", ["matvec_autotune", "swiglu_autotune_one"])
def test_corpus_autotuned_problems_check_in_the_interpreter(client, name):
    problem = client.describe(CORPUS / f"{name}.py")
    for result in check_cases(client, problem, None):
        assert result.status is Status.CORRECT, result.message
