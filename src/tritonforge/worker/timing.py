"""Worker-side timing: alternate the functions under test, flush L2 between calls.

The functions used to time are bound when this module is imported, which the worker does
before it imports any candidate, so a candidate that replaces `torch.cuda.Event` or
`time.perf_counter` later cannot reach the timer.

Each repetition gets fresh inputs (from the caller's `inputs(rep)`, made outside the timed
window), so a function that caches its result under the inputs' shapes or pointers returns
a stale answer; the outputs of a few repetitions chosen in secret are handed back for the
caller to check against the reference.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_elapsed = torch.cuda.Event.elapsed_time
_secret = random.SystemRandom()  # which repetitions get checked must not be predictable


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


Inputs = Callable[[int], list[tuple]]  # repetition -> one argument tuple per function


@dataclass
class Measurement:
    samples: list[list[float]]  # milliseconds, one list per function
    kept: dict[tuple[int, int], Any]  # (function, repetition) -> what that call returned


def measure(fns: list[Callable[..., object]], device: str, config: TimingConfig, inputs: Inputs,
            keep: tuple[int, int] | None = None) -> Measurement:
    """Time each function alternately on fresh inputs; repetition -1 is the warm-up's.

    keep=(i, n): hand back what function i returned in n repetitions picked at random.
    """
    if device == "cpu":
        return _measure_cpu(fns, config, inputs, keep)
    return _measure_cuda(fns, device, config, inputs, keep)


def _picked(keep: tuple[int, int] | None, reps: int) -> frozenset[tuple[int, int]]:
    if keep is None:
        return frozenset()
    fn, n = keep
    return frozenset((fn, rep) for rep in _secret.sample(range(reps), min(n, reps)))


def _measure_cpu(fns: list[Callable[..., object]], config: TimingConfig, inputs: Inputs,
                 keep: tuple[int, int] | None) -> Measurement:
    picked = _picked(keep, config.cpu_reps)
    warm = inputs(-1)
    for fn, args in zip(fns, warm):
        fn(*args)
    samples: list[list[float]] = [[] for _ in fns]
    kept: dict[tuple[int, int], Any] = {}
    for rep in range(config.cpu_reps):
        per_fn = inputs(rep)
        for i in _order(len(fns), rep):
            t0 = _perf_counter()
            out = fns[i](*per_fn[i])
            samples[i].append((_perf_counter() - t0) * 1e3)
            if (i, rep) in picked:
                kept[(i, rep)] = out
    return Measurement(samples, kept)


def _measure_cuda(fns: list[Callable[..., object]], device: str, config: TimingConfig, inputs: Inputs,
                  keep: tuple[int, int] | None) -> Measurement:
    flush = _L2Flusher(device) if config.flush_l2 else (lambda: None)
    warm = inputs(-1)
    for fn, args in zip(fns, warm):  # compile and load
        fn(*args)
    _synchronize()
    estimate = max(_estimate_ms(fn, args, flush) for fn, args in zip(fns, warm))
    n_warm = max(1, int(config.warmup_ms / max(estimate, 1e-3)))
    for _ in range(min(n_warm, 100)):
        for fn, args in zip(fns, warm):
            fn(*args)
    del warm
    reps = int(min(config.max_reps, max(config.min_reps, config.rep_ms / max(estimate, 1e-3))))
    picked = _picked(keep, reps)
    starts = [[_Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    ends = [[_Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    kept: dict[tuple[int, int], Any] = {}
    for rep in range(reps):
        per_fn = inputs(rep)
        # Every output of this repetition stays alive until it ends, so no function can be
        # handed memory that another one just filled with the right answer.
        outs = []
        for i in _order(len(fns), rep):
            flush()
            starts[i][rep].record()
            outs.append(fns[i](*per_fn[i]))
            ends[i][rep].record()
            if (i, rep) in picked:
                kept[(i, rep)] = outs[-1]
    _synchronize()
    samples = [[_elapsed(s, e) for s, e in zip(starts[i], ends[i])] for i in range(len(fns))]
    return Measurement(samples, kept)


def _estimate_ms(fn: Callable[..., object], args: tuple, flush: Callable[[], None]) -> float:
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    times = []
    for _ in range(5):
        flush()
        start.record()
        fn(*args)
        end.record()
        _synchronize()
        times.append(_elapsed(start, end))
    return sorted(times)[len(times) // 2]


def _order(n: int, rep: int) -> list[int]:
    """Alternate who goes first, so that neither function always follows the flush."""
    return list(range(n)) if rep % 2 == 0 else list(reversed(range(n)))
