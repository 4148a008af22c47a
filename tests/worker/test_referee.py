"""The referee: the reference is computed, and outputs compared, in a process that never
loads a candidate; outputs cross over as plain data (real CPU workers)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import torch

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.domain.verdict import Status
from tritonforge.problem.spec import Case
from tritonforge.worker import compare as cmp
from tritonforge.worker import handoff
from tritonforge.worker.faults import InternalFault
from tritonforge.worker.process import WorkerProcess
from tritonforge.worker.timing import TimingConfig

PIDS_PROBLEM = FIXTURES / "problems" / "reference_pid.py"
CANDIDATES = FIXTURES / "candidates"


def test_the_reference_runs_only_in_the_referee(client):
    pids = Path(tempfile.gettempdir()) / "tritonforge-test-reference-pids.txt"  # where the problem notes its pid
    pids.unlink(missing_ok=True)
    problem = client.describe(PIDS_PROBLEM)
    case = problem.test_cases[0]
    client.prepare(problem, [case], seed=5, timeout=120)
    result = client.check(problem, case, CANDIDATES / "add_correct.py", [1, 2, 3], 120)
    assert result.status is Status.CORRECT and result.draws == 3
    client.time(problem, case, CANDIDATES / "add_correct.py", seed=9, config=TimingConfig(cpu_reps=2).to_json(),
                timeout=120)
    seen = {int(line) for line in pids.read_text().split()}
    assert seen == {client.referee.proc.pid}, "the reference ran in another process than the referee"
    assert client.process.proc.pid not in seen


def test_a_referee_serves_no_candidate_and_a_judge_no_judging():
    referee = WorkerProcess("cpu", role="referee")
    judge = WorkerProcess("cpu")
    try:
        req = {"op": "check", "problem": str(EXAMPLES / "vector_add.py"), "entry": None, "specs": [],
               "candidate": str(CANDIDATES / "add_correct.py"), "case": Case({"n": 8}).to_json(), "seed": 1}
        reply = referee.request(req, 120).result
        assert "a referee does not serve 'check'" in reply["internal_error"]
        reply = judge.request({**req, "op": "judge", "candidate": None, "outputs": []}, 120).result
        assert "'judge' is the referee's request" in reply["internal_error"]
    finally:
        referee.close()
        judge.close()


def test_outputs_cross_as_data_and_come_back_the_same(tmp_path):
    box = handoff.Outbox(tmp_path)
    out = torch.arange(6.0).view(2, 3)
    produced = {"returned": (cmp.as_written(out, {"out": out}), 2.5, float("nan"), None, 7),
                "written": {"out": out}}
    pkg = json.loads(json.dumps(box.package(produced)))  # what the pipe carries
    shape, leaves = handoff.unpack(pkg, "cpu")
    assert shape == "dict" and [p for p, _ in leaves] == [p for p, _ in cmp.flatten(produced)]
    assert cmp.compare_leaves(shape, leaves, produced, None).ok
    wrong = {"returned": (cmp.as_written(out, {"out": out}), 2.5, float("nan"), None, 8), "written": {"out": out}}
    assert "7, the reference gave 8" in cmp.compare_leaves(shape, leaves, wrong, None).message
    box.clear()
    assert not list(box.dir.glob("*.pt"))


@pytest.mark.parametrize("bad, says", [
    ({"leaves": [{"path": "out", "cuda": {"dtype": "float32"}}]}, "a CUDA tensor handed to a CPU referee"),
    ({"leaves": [{"path": "out", "value": [1, 2]}]}, "not a plain value"),
    ({"leaves": [{"path": "out", "cpu": 3}], "file": None}, "out of range"),
    ({"leaves": "x"}, "not a package"),
    ({"leaves": [{"path": "out", "float": "__import__('os')"}]}, "could not convert"),
])
def test_a_malformed_package_is_refused_not_obeyed(bad, says):
    with pytest.raises((handoff.HandoffError, ValueError), match=says):
        handoff.unpack(bad, "cpu")


def test_a_package_file_holding_code_is_not_run(tmp_path):
    import pickle

    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('ran')",))

    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps([Boom()]))
    with pytest.raises(Exception) as caught:
        handoff.unpack({"leaves": [], "file": str(evil)}, "cpu")
    assert not isinstance(caught.value, SystemExit)


def test_a_referee_fault_is_the_problems(client):
    problem = client.describe(FIXTURES / "problems" / "bad_nondeterministic_reference.py")
    with pytest.raises(Exception) as caught:
        client.check(problem, problem.test_cases[0], None, [1], 120)
    assert "not deterministic" in str(caught.value) and not isinstance(caught.value, InternalFault)


@pytest.mark.gpu
def test_on_a_gpu_outputs_cross_by_cuda_ipc_and_are_judged_there():
    from tritonforge.worker.client import WorkerClient

    pids = Path(tempfile.gettempdir()) / "tritonforge-test-reference-pids.txt"
    pids.unlink(missing_ok=True)
    with WorkerClient("cuda") as gpu:
        problem = gpu.describe(PIDS_PROBLEM)
        case = problem.test_cases[0]
        gpu.prepare(problem, [case], seed=5, timeout=120)
        assert gpu.check(problem, case, CANDIDATES / "add_correct.py", [1, 2], 120).status is Status.CORRECT
        wrong = gpu.check(problem, case, CANDIDATES / "add_wrong.py", [1, 2], 120)
        assert wrong.status is Status.WRONG and "outside atol" in wrong.message
        gpu.time(problem, case, CANDIDATES / "add_correct.py", seed=9,
                 config=TimingConfig(heat_ms=5, rep_ms=20).to_json(), timeout=120)
        assert {int(line) for line in pids.read_text().split()} == {gpu.referee.proc.pid}
        out_style = gpu.describe(FIXTURES / "problems" / "add_out.py")
        for c in out_style.test_cases:
            assert gpu.check(out_style, c, CANDIDATES / "add_out_other_block.py", [1], 120).status is Status.CORRECT
