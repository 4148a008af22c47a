"""Compiling candidates on the CPU before they get GPU time: no GPU is needed to reject one
that cannot fit, and to collect the facts of one that can."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tritonforge.evaluate.evaluator import load_problem
from tritonforge.worker.client import WorkerClient
from tritonforge.domain.verdict import Status
from tritonforge.executors.compile_pool import CompilePool
from tritonforge.strategies.launch import rewrite


@pytest.fixture(scope="module")
def matmul():
    with WorkerClient("compile") as w:
        return load_problem(EXAMPLES / "matmul.py", w)


@pytest.mark.slow
def test_oversized_and_fitting_candidates(matmul, tmp_path):
    source = (EXAMPLES / "matmul.py").read_text()
    # 256 x 256 x 128 fp16 tiles, 6 stages: far beyond 227 KB of shared memory per block.
    huge = source.replace("BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32", "BLOCK_M, BLOCK_N, BLOCK_K = 256, 256, 128")
    huge = huge.replace("num_stages=2", "num_stages=6")
    good = rewrite(source, {"matmul_kernel.BLOCK_M": 128, "matmul_kernel.BLOCK_N": 128, "matmul_kernel.BLOCK_K": 64,
                            "matmul_kernel.num_warps": 8, "matmul_kernel.num_stages": 3})
    paths = []
    for name, text in (("huge", huge), ("good", good)):
        paths.append(tmp_path / f"{name}.py")
        paths[-1].write_text(text)
    pool = CompilePool(matmul, matmul.cases[0], workers=2, timeout_s=240)
    try:
        pool.submit(paths)
        bad, ok = pool.result(paths[0]), pool.result(paths[1])
    finally:
        pool.close()
    assert bad.status is Status.COMPILE_ERROR
    assert "out_of_resources" in bad.message or "shared" in bad.message.lower()
    assert ok.status is None
    (facts,) = ok.facts
    assert facts["num_warps"] == 8 and facts["shared_bytes"] > 32 * 1024
    assert any(k.lower().startswith(("hgmma", "wgmma")) for k in (facts["sass"] or facts["ptx"])["tensor_core"])


def test_close_stops_queued_compiles_and_can_be_repeated(matmul, tmp_path):
    # optimize closes the pool before the second opinion, and its exit stack closes it again.
    paths = []
    for block in (32, 64, 128):
        paths.append(tmp_path / f"b{block}.py")
        paths[-1].write_text(rewrite((EXAMPLES / "matmul.py").read_text(), {"matmul_kernel.BLOCK_M": block}))
    pool = CompilePool(matmul, matmul.cases[0], workers=1, timeout_s=240)
    pool.submit(paths)
    pool.close()
    assert not any(w.process.alive() for w in pool.all)
    assert sum(f.cancelled() for f in pool.futures.values()) >= 1  # queued behind the one worker
    pool.close()
