"""`tritonforge check` end to end: exit codes, one-line errors for unusable problems, JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, FIXTURES

pytestmark = pytest.mark.slow  # each test runs the CLI in a new process that imports torch

PROBLEMS = FIXTURES / "problems"


def run_check(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tritonforge", "check", *args, "--device", "cpu"],
                          capture_output=True, text=True, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("name, words", [
    ("bad_syntax", "does not parse: expected ':' (line 2)"),
    ("bad_no_entry", "defines no ENTRY"),
    ("bad_entry_missing", "has no function named 'addition'"),
    ("bad_no_make_inputs", "defines no make_inputs"),
    ("bad_entry_raises", "ValueError: the problem's own entry is broken"),
    ("bad_make_inputs_raises", "make_inputs(seed="),
    ("bad_constant_inputs", "returned a constant tensor for 'x'"),
])
def test_unusable_problem_gets_one_line_and_exit_2(name, words):
    proc = run_check(str(PROBLEMS / f"{name}.py"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_error_line(proc)
    assert f"{name}.py" in line
    assert words in line


def test_missing_problem_file():
    proc = run_check(str(PROBLEMS / "nowhere.py"))
    assert proc.returncode == 2
    assert "no such file" in one_error_line(proc)


def test_check_problem_alone_prints_a_verdict():
    proc = run_check(str(EXAMPLES / "softmax.py"))
    assert proc.returncode == 0, proc.stderr
    assert "correct on all 2 cases" in proc.stdout
    assert "interpreter, not GPU" in proc.stdout


def test_check_candidate_json_and_exit_codes():
    good = run_check(str(EXAMPLES / "vector_add.py"), str(FIXTURES / "candidates" / "add_correct.py"), "--json")
    assert good.returncode == 0, good.stderr
    out = json.loads(good.stdout)
    assert out["verdict"]["status"] == "correct"
    assert out["verdict"]["timing"] == "interpreter, not GPU"
    assert out["verdict"]["speedup"]["ci_low"] <= out["verdict"]["speedup"]["value"]
    bad = run_check(str(EXAMPLES / "vector_add.py"), str(FIXTURES / "candidates" / "add_wrong.py"), "--no-time")
    assert bad.returncode == 1
    assert "wrong" in bad.stdout


def test_zero_config_inputs_build_cases():
    plain = str(PROBLEMS / "plain_add.py")
    proc = run_check(plain, "--entry", "scale_add", "--inputs", "x=float32[1000] y=float32[1000] alpha=0.5",
                     "--inputs", "x=fp32[300], y=fp32[300], alpha=2.0", "--json")
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(proc.stdout)["verdict"]["cases"]
    assert [c["status"] for c in cases] == ["correct", "correct"]
    bad = run_check(plain, "--entry", "scale_add", "--inputs", "x=float32[10] y=float32[10]")
    assert bad.returncode == 2
    assert "missing ['alpha']" in one_error_line(bad)
