"""The adversarial suite under pytest: each row must get exactly its verdict, and the known-good
candidate judged right after it must still be correct. CPU rows run in Triton's interpreter;
GPU rows need a CUDA GPU (the `gpu` marker skips them elsewhere).

The selected rows of a device are judged once, together (in parallel lanes on the CPU), by a
module-scoped fixture; each test then checks its own row's result.
"""

from __future__ import annotations

import pytest

from tests.adversarial.suite import PROBLEMS, ROWS, Result, run_suite, select


def _results(request: pytest.FixtureRequest, test: str, device: str) -> dict[str, Result]:
    """Run the rows whose `test` items survived selection (-k, node ids), keyed by row name."""
    names = [item.callspec.params["row"].name for item in request.session.items
             if getattr(item, "originalname", None) == test and item.module is request.module]
    return {r.row.name: r for r in run_suite(device, names)} if names else {}


@pytest.fixture(scope="module")
def cpu_results(request):
    return _results(request, "test_cpu", "cpu")


@pytest.fixture(scope="module")
def gpu_results(request):
    return _results(request, "test_gpu", "cuda")


def _check(result: Result) -> None:
    assert result.as_expected, (
        f"{result.row.name} on {result.device}: got {result.got}, expected {result.expected}: {result.message}")
    assert result.good_after, (
        f"after {result.row.name}, the known-good candidate was not judged correct: {result.good_message}")


def _params(device: str) -> list:
    """The device's rows; a row with a known gap must fail until the gap is closed (then drop the note)."""
    return [pytest.param(row, id=row.name, marks=[pytest.mark.xfail(reason=row.gap, strict=True)] if row.gap else [])
            for row in select(device)]


def test_rows_are_well_formed():
    assert len({r.name for r in ROWS}) == len(ROWS)
    for row in ROWS:
        assert row.candidate.is_file(), row.candidate
        assert row.problem in PROBLEMS and PROBLEMS[row.problem].is_file()
        assert row.kind in ("trick", "fault") and {row.cpu_via, row.gpu_via} <= {"evaluator", "compile_pool"}
        assert row.candidate.read_text().lstrip().startswith('"""'), f"{row.name} needs a docstring"


@pytest.mark.parametrize("row", _params("cpu"))
@pytest.mark.slow
def test_cpu(cpu_results, row):
    _check(cpu_results[row.name])


@pytest.mark.gpu
@pytest.mark.parametrize("row", _params("cuda"))
@pytest.mark.slow
def test_gpu(gpu_results, row):
    _check(gpu_results[row.name])
