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
