"""The CUDA timer on a real GPU: a call whose launch takes the host longer than the GPU takes
to run it is still timed at its GPU time (worker/timing.py, the lead)."""

from __future__ import annotations

import statistics
import time

import pytest
import torch

from tritonforge.worker import timing

pytestmark = pytest.mark.gpu


def _slow_to_launch(x: torch.Tensor) -> torch.Tensor:
    # The host busy for 0.5 ms before a kernel of a few microseconds: like an entry launched
    # while compile workers share the CPU, only worse.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 5e-4:
        pass
    return x * 2


@pytest.mark.parametrize("lead", [3.0, 0.0])
def test_a_call_slow_to_launch_is_timed_at_its_gpu_time(lead):
    x = torch.randn(1 << 16, device="cuda")
    config = timing.TimingConfig(lead=lead, rep_ms=50, max_reps=200)
    m = timing.measure([_slow_to_launch], "cuda", config, lambda rep, i: (x,))
    median = statistics.median(m.samples[0])
    if lead:
        assert median < 0.1, f"timed {median:.3f} ms: the host's 0.5 ms leaked into the events"
    else:  # without the lead the events hold the host's wait: the case the lead is for
        assert median > 0.2, f"timed {median:.3f} ms"


def test_the_heat_runs_after_the_inputs_are_made_right_before_the_timed_calls():
    warm = torch.randn(1 << 16, device="cuda")
    log: list[str] = []

    def inputs(rep: int, fn: int) -> tuple:
        if rep >= 0:
            log.append("make")
        return (warm if rep < 0 else torch.randn(1 << 16, device="cuda"),)

    def double(x: torch.Tensor) -> torch.Tensor:
        log.append("heat" if x is warm else "timed")
        return x * 2

    timing.measure([double], "cuda", timing.TimingConfig(rep_ms=5, heat_ms=5, min_reps=8), inputs)
    runs = "".join(e[0] for e in log)  # m, h, t
    for burst in runs.split("m")[1:]:
        if burst:  # the calls after the last input of a chunk was made
            assert burst.startswith("h") and "t" in burst and "h" not in burst[burst.index("t"):], burst[:40]
