"""The script ncu runs, on CPU: its configuration, its error path and how it finds the entry."""

from __future__ import annotations

import json
import textwrap

import pytest

from tritonforge.profiling.ncu import target as ncu_target
from tritonforge.profiling.profiler import ProfileTarget

PROBLEM = textwrap.dedent("""
    ENTRY = "scale"

    def scale(x, k):
        return x * k

    def make_inputs(seed, device, n):
        return [seed + i for i in range(n)], 2
""")
CANDIDATE = textwrap.dedent("""
    def scale(x, k):
        return [v * k + 1 for v in x]
""")


def test_config_is_inline_json_or_a_file(tmp_path):
    config = {"problem": "p.py", "params": {"n": 4}}
    assert ncu_target.load_config(json.dumps(config)) == config
    path = tmp_path / "t.json"
    path.write_text(json.dumps(config))
    assert ncu_target.load_config(str(path)) == config


def test_entry_of_builds_the_case_and_prefers_the_candidate(tmp_path):
    (tmp_path / "p.py").write_text(PROBLEM)
    (tmp_path / "c.py").write_text(CANDIDATE)
    fn, args = ncu_target.entry_of(ProfileTarget(problem=str(tmp_path / "p.py"), params={"n": 3}, seed=10))
    assert args == ([10, 11, 12], 2) and fn(*args) == [10, 11, 12] * 2
    fn, args = ncu_target.entry_of(ProfileTarget(problem=str(tmp_path / "p.py"), candidate=str(tmp_path / "c.py"),
                                                 params={"n": 2}))
    assert fn(*args) == [1, 3]


def test_a_candidate_without_the_entry_is_an_error(tmp_path):
    (tmp_path / "p.py").write_text(PROBLEM)
    (tmp_path / "c.py").write_text("def other(x, k):\n    return x\n")
    with pytest.raises(RuntimeError, match="has no function 'scale'"):
        ncu_target.entry_of(ProfileTarget(problem=str(tmp_path / "p.py"), candidate=str(tmp_path / "c.py"),
                                          params={"n": 1}))


def test_main_writes_one_line_error_when_it_cannot_profile(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this checks the no-GPU path")
    (tmp_path / "p.py").write_text(PROBLEM)
    result = tmp_path / "result.json"
    config = {**ProfileTarget(problem=str(tmp_path / "p.py"), params={"n": 2}).to_json(), "result": str(result)}
    assert ncu_target.main(["ncu_target", json.dumps(config)]) == 1
    written = json.loads(result.read_text())
    assert written == {"ok": False, "error": "RuntimeError: no CUDA device visible to the profiled process"}
    assert "tritonforge-ncu-target" in capsys.readouterr().out


def test_recorder_names_launches_but_not_compile_only_calls(monkeypatch):
    jit = pytest.importorskip("triton.runtime.jit")
    launched = []
    monkeypatch.setattr(jit.JITFunction, "run", lambda self, *a, **kw: launched.append(kw.get("warmup")))
    recorder = ncu_target.KernelRecorder()

    class Kernel:
        __name__ = "add_kernel"

    jit.JITFunction.run(Kernel(), grid=(1,), warmup=False)
    jit.JITFunction.run(Kernel(), grid=(1,), warmup=True)
    jit.JITFunction.run(Kernel(), grid=(1,), warmup=False)
    assert recorder.names == ["add_kernel", "add_kernel"] and launched == [False, True, False]
    recorder.reset()
    assert recorder.names == []


def test_usage_error_without_an_argument(capsys):
    assert ncu_target.main(["ncu_target"]) == 2
    assert "usage" in capsys.readouterr().err
