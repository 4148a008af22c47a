"""Worker-side timing: alternate the functions under test, flush L2 between calls.

The functions used to time are bound when this module is imported, which the worker does
before it imports any candidate, so a candidate that replaces `torch.cuda.Event` or
`time.perf_counter` later cannot reach the timer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_elapsed = torch.cuda.Event.elapsed_time


@dataclass
class TimingConfig:
    warmup_ms: float = 25.0
    rep_ms: float = 200.0  # time budget per function for the timed repetitions
    min_reps: int = 20
    max_reps: int = 1000
    flush_l2: bool = True
    cpu_reps: int = 3  # the interpreter is slow; its times are labelled, not trusted

    def to_json(self) -> dict:
        return dict(self.__dict__)


class _L2Flusher:
    """Writes a buffer larger than L2 (like triton.testing.do_bench) before each call."""

    def __init__(self, device: str) -> None:
        props = torch.cuda.get_device_properties(device)
        size = max(256 << 20, 4 * getattr(props, "L2_cache_size", 64 << 20))
        self.buffer = torch.empty(size // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self.buffer.zero_()


def measure(fns: list[Callable[[], object]], device: str, config: TimingConfig) -> list[list[float]]:
    """Time each function alternately; returns one list of milliseconds per function."""
    if device == "cpu":
        return _measure_cpu(fns, config)
    return _measure_cuda(fns, device, config)


def _measure_cpu(fns: list[Callable[[], object]], config: TimingConfig) -> list[list[float]]:
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    for rep in range(config.cpu_reps):
        for i in _order(len(fns), rep):
            t0 = _perf_counter()
            fns[i]()
            samples[i].append((_perf_counter() - t0) * 1e3)
    return samples


def _measure_cuda(fns: list[Callable[[], object]], device: str, config: TimingConfig) -> list[list[float]]:
    flush = _L2Flusher(device) if config.flush_l2 else (lambda: None)
    for fn in fns:  # compile and load
        fn()
    _synchronize()
    estimate = max(_estimate_ms(fn, flush) for fn in fns)
    n_warm = max(1, int(config.warmup_ms / max(estimate, 1e-3)))
    for _ in range(min(n_warm, 100)):
        for fn in fns:
            fn()
    reps = int(min(config.max_reps, max(config.min_reps, config.rep_ms / max(estimate, 1e-3))))
    starts = [[_Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    ends = [[_Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    for rep in range(reps):
        for i in _order(len(fns), rep):
            flush()
            starts[i][rep].record()
            fns[i]()
            ends[i][rep].record()
    _synchronize()
    return [[_elapsed(s, e) for s, e in zip(starts[i], ends[i])] for i in range(len(fns))]


def _estimate_ms(fn: Callable[[], object], flush: Callable[[], None]) -> float:
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    times = []
    for _ in range(5):
        flush()
        start.record()
        fn()
        end.record()
        _synchronize()
        times.append(_elapsed(start, end))
    return sorted(times)[len(times) // 2]


def _order(n: int, rep: int) -> list[int]:
    """Alternate who goes first, so that neither function always follows the flush."""
    return list(range(n)) if rep % 2 == 0 else list(reversed(range(n)))
