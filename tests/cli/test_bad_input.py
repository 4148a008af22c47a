"""Bad input to `check` and `optimize`: one line naming the file and what is wrong, exit 2,
and nothing already done lost (a run store given to --resume is left byte for byte)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.cli import EXIT_UNUSABLE, app
from tritonforge.domain.verdict import Status, Verdict
from tritonforge.store import RunStore
from tritonforge.strategies.base import Candidate

PROBLEMS = FIXTURES / "problems"
VECTOR_ADD = EXAMPLES / "vector_add.py"


def run(*args: str) -> Result:
    # In-process: each command still starts its own worker, but the CLI's imports are paid once.
    return CliRunner().invoke(app, [*args, "--device", "cpu"])


def one_error_line(result: Result) -> str:
    """The single line on stderr of a command that refused its input with exit 2."""
    assert result.exit_code == EXIT_UNUSABLE, (result.exit_code, result.stderr, result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def optimize(problem: Path, out: Path, *extra: str) -> Result:
    return run("optimize", str(problem), "--out", str(out), "--budget", "1", *extra)


# --------------------------------------------------------------- malformed problem files

def _written(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


MALFORMED = {  # problem -> words its one line must hold
    "empty.py": "defines no ENTRY",
    "garbage.py": "is not a Python source file (byte 0xff at offset 0 is not UTF-8 text)",
    "null_bytes.py": "does not parse: source code string cannot contain null bytes",
    "bad_shapes_type.py": "SHAPES must be a list of dicts",
    "bad_make_inputs_count.py": "make_inputs returned 3 values; add takes 2 (x, y)",
    "bad_entry_missing.py": "has no function named 'addition' (ENTRY)",
    "bad_entry_not_function.py": "ENTRY names 'BLOCK', which is not a function (int)",
}


def malformed(tmp_path: Path, name: str) -> Path:
    if name == "empty.py":
        return _written(tmp_path, name, b"")
    if name == "garbage.py":
        return _written(tmp_path, name, bytes([0xFF, 0xFE, 0x00, 0x9C]) * 64)
    if name == "null_bytes.py":
        return _written(tmp_path, name, b'ENTRY = "add"\n\x00\x01 not source\n')
    return PROBLEMS / name


@pytest.mark.parametrize("command", ["check", "optimize"])
@pytest.mark.parametrize("name", list(MALFORMED))
@pytest.mark.slow
def test_a_malformed_problem_gets_one_line_naming_it_and_exit_2(tmp_path, name, command):
    problem = malformed(tmp_path, name)
    out = tmp_path / "run"
    result = run("check", str(problem), "--no-time") if command == "check" else optimize(problem, out)
    line = one_error_line(result)
    assert name in line and MALFORMED[name] in line
    # Nothing was learned, so nothing is kept that would block the same command once fixed.
    assert not (out / "run.sqlite").exists()


@pytest.mark.parametrize("command", ["check", "optimize"])
@pytest.mark.slow
def test_a_reference_that_is_not_deterministic_is_refused(tmp_path, command):
    # The worker calls the reference twice on the same inputs; noise between them means no
    # candidate could ever be judged against it.
    problem = PROBLEMS / "bad_nondeterministic_reference.py"
    result = run("check", str(problem), "--no-time") if command == "check" else optimize(problem, tmp_path / "run")
    line = one_error_line(result)
    assert problem.name in line and "not deterministic" in line


@pytest.mark.parametrize("command", ["check", "optimize"])
@pytest.mark.slow
def test_shapes_that_do_not_fit_the_device_name_the_case(tmp_path, command):
    problem = PROBLEMS / "bad_shapes_oom.py"
    out = tmp_path / "run"
    result = run("check", str(problem), "--no-time") if command == "check" else optimize(problem, out)
    line = one_error_line(result)
    assert problem.name in line
    assert f"case n={1 << 50}: make_inputs ran out of memory (tried to allocate 4 PiB); reduce SHAPES" in line
    assert not (out / "run.sqlite").exists()  # fix SHAPES, then run the same command again


# --------------------------------------------------------------- the run directory

def test_an_unwritable_run_directory_is_refused_before_any_work(tmp_path):
    # A problem that leaves a mark when imported: loading it would be work already spent.
    mark = tmp_path / "imported"
    problem = tmp_path / "marked.py"
    problem.write_text(f"open({str(mark)!r}, 'w').close()\n" + VECTOR_ADD.read_text())
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    outs = [a_file / "run", Path("/proc/tritonforge-test/run")]  # unwritable even for root
    if os.geteuid() != 0:  # root writes into a read-only directory regardless
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        outs.append(locked / "run")
    for out in outs:
        line = one_error_line(optimize(problem, out))
        assert f"{out}: cannot write the run directory" in line
    assert not mark.exists()


def test_resume_needs_a_store_and_a_new_run_never_overwrites_one(tmp_path):
    line = one_error_line(optimize(VECTOR_ADD, tmp_path, "--resume"))
    assert f"{tmp_path}: no run to resume (no run.sqlite there)" in line
    store = filled_store(tmp_path / "run.sqlite", VECTOR_ADD)
    before = store.read_bytes()
    line = one_error_line(optimize(VECTOR_ADD, tmp_path))
    assert f"{tmp_path}: already holds a run; pass --resume" in line
    assert store.read_bytes() == before


# --------------------------------------------------------------- a damaged store to resume

def filled_store(path: Path, problem: Path, source: str | None = None, entry: str = "add") -> Path:
    """A closed store of `problem` spanning several pages, as a killed run would leave it."""
    with RunStore.create(path, str(problem.resolve()), problem.read_text() if source is None else source,
                         entry, {}) as store:
        for n in range(40):
            c = Candidate(source=f"# {n}\n" + "pass\n" * n, origin="launch_params")
            store.add_candidate(c, round=1)
            store.record_evaluation(c.key, Verdict(str(n), Status.WRONG, message="x" * 200).to_json(),
                                    speedup=None, faster=False, environment={}, started=0.0, finished=1.0)
    return path


def garbage(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 64)


def truncated(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


@pytest.mark.parametrize("damage, words", [
    (garbage, "not a TritonForge run store (not an SQLite database)"),
    (truncated, "corrupted run store"),
])
def test_a_damaged_store_is_refused_and_left_as_it_is(tmp_path, damage, words):
    store = filled_store(tmp_path / "run.sqlite", VECTOR_ADD)
    damage(store)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    line = one_error_line(optimize(VECTOR_ADD, tmp_path, "--resume"))
    assert f"{store}: {words}" in line
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # byte for byte, nothing added


@pytest.mark.slow
def test_a_store_of_another_problem_or_entry_is_refused_and_left_as_it_is(tmp_path):
    store = filled_store(tmp_path / "run.sqlite", EXAMPLES / "softmax.py")
    before = store.read_bytes()
    line = one_error_line(optimize(VECTOR_ADD, tmp_path, "--resume"))
    assert f"{store}: holds a run of {(EXAMPLES / 'softmax.py').resolve()}, not of {VECTOR_ADD}" in line

    changed = tmp_path / "changed"
    changed.mkdir()
    filled_store(changed / "run.sqlite", VECTOR_ADD, source="# an older version\n")
    line = one_error_line(optimize(VECTOR_ADD, changed, "--resume"))
    assert f"{VECTOR_ADD}: changed since the run in {changed} started" in line

    other_entry = tmp_path / "other_entry"
    other_entry.mkdir()
    filled_store(other_entry / "run.sqlite", VECTOR_ADD, entry="add")
    line = one_error_line(optimize(VECTOR_ADD, other_entry, "--resume", "--entry", "reference"))
    assert f"{other_entry}: its run optimizes 'add', not 'reference'" in line
    assert store.read_bytes() == before


def test_a_run_in_use_by_another_optimize_is_refused(tmp_path):
    import fcntl

    out = tmp_path / "run"
    out.mkdir()
    held = os.open(out, os.O_RDONLY)  # the lock a running optimize holds on its directory
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        line = one_error_line(optimize(VECTOR_ADD, out))
    finally:
        os.close(held)
    assert "another optimize is using this run" in line
    assert list(out.iterdir()) == []


def test_gpu_only_host_code_is_refused_in_the_interpreter_with_one_line_saying_so(tmp_path):
    line = one_error_line(run("check", str(PROBLEMS / "styles" / "device_guarded.py"), "--shapes", "test"))
    assert "device_guarded.py" in line and "needs a CUDA GPU" in line and "assert x.is_cuda" in line
    line = one_error_line(optimize(PROBLEMS / "styles" / "device_guarded.py", tmp_path / "run"))
    assert "needs a CUDA GPU" in line
    assert not (tmp_path / "run" / "run.sqlite").exists()


def test_a_device_context_around_the_launch_is_harmless_in_the_interpreter():
    # `with torch.cuda.device(x.device.index):` (mamba's way) only places the launch: on CPU
    # tensors it does nothing, while `assert x.is_cuda` above still asks for a GPU.
    result = run("check", str(PROBLEMS / "styles" / "mamba_device_index.py"), "--shapes", "test")
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "correct on all 2 cases" in said


def test_cuda_placements_do_nothing_while_harmless_and_queries_keep_their_answers():
    import torch

    from tritonforge.analysis.host_state import cuda_placements_harmless

    placed, available = torch.cuda.device, torch.cuda.is_available()
    with cuda_placements_harmless():
        with torch.cuda.device(torch.empty(1).device.index):  # None on a CPU tensor
            torch.cuda.synchronize()
        assert torch.cuda.is_available() == available and not torch.empty(1).is_cuda
    assert torch.cuda.device is placed


@pytest.mark.slow
def test_a_case_the_entry_answers_with_torch_alone_is_named_with_the_way_out(tmp_path):
    problem = PROBLEMS / "bad_torch_fallback_case.py"
    line = one_error_line(optimize(problem, tmp_path / "run", "--shapes", "test"))
    assert problem.name in line and "n=40: the entry launched no Triton kernel" in line
    assert "leave it out of the shapes" in line


def test_a_kernel_error_the_entry_catches_is_named_not_passed_as_correct():
    # `try: kernel[grid](...) except Exception: return torch...` (probe round 12): the launch
    # had counted before it raised, so the torch answer passed as the kernel's; now nothing
    # launched, and the line names the kernel's own error.
    result = run("check", str(PROBLEMS / "bad_kernel_error_fallback.py"), "--shapes", "test")
    said = " ".join(result.output.split())
    assert result.exit_code != 0, said
    assert "the entry launched no Triton kernel (its launch of _scale_kernel raised" in said
    assert "arange's range must be a power of 2" in said and "went on without the kernel" in said
