"""Bytes and FLOPs per call, and the floor they give, against hand counts."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES
from tritonforge.analysis.ceilings import datasheet
from tritonforge.analysis.roofline import Work, roofline
from tritonforge.commands.profile import case_work
from tritonforge.evaluate.evaluator import load_problem
from tritonforge.worker.client import WorkerClient


def work_of(name: str):
    with WorkerClient("compile") as w:
        problem = load_problem(EXAMPLES / f"{name}.py", w)
    return case_work(problem, problem.test_cases[:1], None, datasheet(None))[0]


@pytest.mark.slow
def test_add_softmax_matmul_bytes_and_flops_match_hand_counts():
    add = work_of("vector_add")  # n = 1000 fp32: read x and y, write out
    assert add.roofline.work.bytes == 3 * 4 * 1000
    # 16 programs of 64 lanes, one add each (masked lanes are computed too): 1024.
    assert add.roofline.work.flops == 16 * 64
    soft = work_of("softmax")  # 5 x 300 fp32 in, the same out
    assert soft.roofline.work.bytes == 2 * 4 * 5 * 300
    assert soft.roofline.work.flops > 0 and soft.roofline.work.flops_source == "counted"
    mm = work_of("matmul")  # 48x72 @ 72x40 fp16 -> 48x40 fp16
    assert mm.roofline.work.bytes == 2 * (48 * 72 + 72 * 40 + 48 * 40)
    assert mm.roofline.work.flops == 2 * 48 * 40 * 72  # declared FLOPS
    assert set(mm.roofline.work.dot_flops) == {"fp16"}  # split as the interpreter counted it
    assert mm.launches[0]["facts"]["num_warps"] == 4


def test_floor_is_the_larger_of_memory_and_compute_time():
    c = datasheet(None)
    mem = roofline(Work(bytes=4.8e9, flops=1e9), c)  # 1 ms of bytes, little compute
    assert mem.bound == "memory" and mem.floor_ms == pytest.approx(1.0)
    dot = roofline(Work(bytes=1e6, flops=989e12, dot_flops={"fp16": 989e12}), c)
    assert dot.bound == "compute" and dot.floor_ms == pytest.approx(1000.0)
    assert dot.achieved(2000.0).pct_of_floor == pytest.approx(50.0)
