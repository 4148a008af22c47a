"""Worker-side timing: each function in short sustained bursts, bursts alternating, L2 flushed
before every call.

The functions used to time are bound when this module is imported, which the worker does
before it imports any candidate, so a candidate that replaces `torch.cuda.Event` or
`time.perf_counter` later cannot reach the timer.

Every timed call gets its own fresh inputs (from the caller's `inputs(rep, fn)`, made
outside the timed window, the same values for every function at the same rep), so a
function that caches its result under the inputs' shapes or pointers returns a stale
answer; the outputs of a few calls chosen in secret are handed back for the caller to
check against the reference.

Why bursts, not call-by-call alternation: a kernel that draws the GPU to its power limit
runs faster right after a slower, cooler kernel than it does when called over and over, so
alternating call by call with a slow baseline flattered it (benchmarks/results/2026-12-03-h200-s4.md).
Each burst is preceded by an untimed run of the same function, long enough for the clock
to settle where that function keeps it, and made after the burst's inputs, which would
otherwise leave a pause (a cooler GPU) just before the timed calls; bursts of the functions
still alternate, so drift hits all of them alike.

Why a lead before each chunk of calls: the events time the GPU, but when the host takes longer
to launch a call than the GPU takes to flush L2 and run it, the GPU waits for the host inside
the timed window. That happened during `optimize`, whose compile workers share the CPU: a
kernel of ~20 us timed at 30-90 us (benchmarks/results/2026-12-03-h200-s6.md). A GPU sleep
queued before the chunk, as long as the host needs to launch it, lets the host run ahead, so
the calls reach the GPU back to back and the events hold GPU time only.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_elapsed = torch.cuda.Event.elapsed_time
_sleep = getattr(torch.cuda, "_sleep", None)  # spins the GPU for a number of cycles
_secret = random.SystemRandom()  # which repetitions get checked must not be predictable


@dataclass
class TimingConfig:
    rep_ms: float = 200.0  # time budget per function for the timed repetitions
    min_reps: int = 20
    max_reps: int = 1000
    burst_ms: float = 50.0  # timed calls of one function back to back, about this long
    # Untimed calls of the same function just before each burst: on the H200 a kernel at the
    # power limit ran at full clock for ~45 ms and had settled lower by ~150 ms.
    heat_ms: float = 100.0
    min_rounds: int = 4  # bursts per function, alternating
    burst_bytes: int = 4 << 30  # inputs and outputs held at once for one burst, at most
    flush_l2: bool = True
    # A GPU sleep before each chunk of timed calls where the host is slower than the GPU,
    # covering the host's launches of the chunk this many times over (0: none), at most lead_max_ms.
    lead: float = 3.0
    lead_max_ms: float = 20.0
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


Inputs = Callable[[int, int], tuple]  # (repetition, function) -> that call's arguments


@dataclass
class Measurement:
    samples: list[list[float]]  # milliseconds, one list per function
    kept: dict[tuple[int, int], Any]  # (function, repetition) -> what that call returned


def measure(fns: list[Callable[..., object]], device: str, config: TimingConfig, inputs: Inputs,
            keep: tuple[int, int] | None = None) -> Measurement:
    """Time each function on fresh inputs, in alternating bursts; repetition -1 is the warm-up's.

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
    for i, fn in enumerate(fns):
        fn(*inputs(-1, i))
    samples: list[list[float]] = [[] for _ in fns]
    kept: dict[tuple[int, int], Any] = {}
    for rep in range(config.cpu_reps):
        per_fn = [inputs(rep, i) for i in range(len(fns))]
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
    warm = [inputs(-1, i) for i in range(len(fns))]
    outs = [fn(*args) for fn, args in zip(fns, warm)]  # compile and load
    _synchronize()
    per_call = max(_nbytes(args) + _nbytes(out) for args, out in zip(warm, outs))
    del outs
    estimates = [_estimate_ms(fn, args, flush) for fn, args in zip(fns, warm)]
    plan = _plan(config, max(e.gpu_ms for e in estimates), per_call, _free_bytes(device))
    lead = _Lead(config, estimates)
    reps = plan.burst * plan.rounds
    picked = _picked(keep, reps)
    samples: list[list[float]] = [[] for _ in fns]
    kept: dict[tuple[int, int], Any] = {}
    for rnd in range(plan.rounds):
        for i in _order(len(fns), rnd):
            first = rnd * plan.burst
            for lo in range(first, first + plan.burst, plan.chunk):
                reps_here = range(lo, min(lo + plan.chunk, first + plan.burst))
                calls = [inputs(rep, i) for rep in reps_here]
                # The heat comes after the inputs are made, so no pause lies between it and
                # the timed calls.
                heat = heat_ms(config, lo == first, len(reps_here), estimates[i].cycle_ms)
                _run_for(fns[i], warm[i], flush, heat, estimates[i].gpu_ms)
                span = lead.span(i)
                for j in range(0, len(calls), span):
                    lead(i, len(calls[j:j + span]))
                    times, got = _burst(fns[i], calls[j:j + span], flush)
                    samples[i] += times
                    kept.update({(i, rep): out for rep, out in zip(reps_here[j:j + span], got) if (i, rep) in picked})
                    del got
    return Measurement(samples, kept)


@dataclass
class _Plan:
    burst: int  # timed calls per burst, the same for every function so that bursts pair up
    rounds: int
    chunk: int  # calls whose inputs (and outputs) memory holds at once; a burst is made of chunks


def _plan(config: TimingConfig, slowest_ms: float, per_call_bytes: int, free_bytes: int) -> _Plan:
    """Bursts of about burst_ms of the slowest function (as many calls for every function),
    enough rounds for the repetitions asked for, inputs made in chunks that memory holds."""
    slowest_ms = max(slowest_ms, 1e-3)
    reps = int(min(config.max_reps, max(config.min_reps, config.rep_ms / slowest_ms)))
    burst = max(1, min(math.ceil(config.burst_ms / slowest_ms), reps // config.min_rounds))
    room = min(config.burst_bytes, free_bytes // 4) // max(per_call_bytes, 1)
    return _Plan(burst=burst, rounds=max(config.min_rounds, math.ceil(reps / burst)), chunk=max(1, min(burst, room)))


def _burst(fn: Callable[..., object], calls: list[tuple], flush: Callable[[], None]) -> tuple[list[float], list]:
    """Time one call per argument tuple, back to back; every output stays alive until the
    burst ends, so no call can be handed memory another just filled with its answer."""
    starts = [_Event(enable_timing=True) for _ in calls]
    ends = [_Event(enable_timing=True) for _ in calls]
    outs = []
    for args, start, end in zip(calls, starts, ends):
        flush()
        start.record()
        outs.append(fn(*args))
        end.record()
    _synchronize()
    return [_elapsed(s, e) for s, e in zip(starts, ends)], outs


def heat_ms(config: TimingConfig, first: bool, calls: int, cycle_ms: float) -> float:
    """How long to heat before a chunk of `calls` timed calls (`first`: the burst's first chunk).

    Making the inputs of a chunk leaves the function's kernels idle (on the H200 a matmul of
    0.2 ms timed 10% faster after such a pause than do_bench's back-to-back calls:
    benchmarks/results/2026-12-04-h200-s8.md). The first chunk gets the whole heat; a later
    one as long as its own calls run (at most the whole heat), which bridges its inputs'
    pause and at most doubles the burst."""
    return config.heat_ms if first else min(config.heat_ms, calls * cycle_ms)


def _run_for(fn: Callable[..., object], args: tuple, flush: Callable[[], None], ms: float, estimate: float) -> None:
    """Untimed calls, each after a flush as the timed ones, for about `ms` of GPU time (at
    least one call); a kernel of microseconds is bound by the host's launches, so the host's
    own time stops the loop too."""
    t0 = _perf_counter()
    for _ in range(max(1, min(5000, int(ms / max(estimate, 1e-3))))):
        flush()
        fn(*args)
        if (_perf_counter() - t0) * 1e3 > ms:
            break


def _nbytes(obj: object) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.untyped_storage().nbytes()
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(x) for x in obj.values())
    return 0


def _free_bytes(device: str) -> int:
    free, _ = torch.cuda.mem_get_info(torch.device(device))
    return int(free)


@dataclass
class _Estimate:
    gpu_ms: float  # one call, L2 flushed before it
    cycle_ms: float  # the flush and the call, on the GPU
    host_ms: float  # the host's time to flush and launch one call, the GPU idle


def _estimate_ms(fn: Callable[..., object], args: tuple, flush: Callable[[], None]) -> _Estimate:
    before, start, end = (_Event(enable_timing=True) for _ in range(3))
    gpu, cycle, host = [], [], []
    for _ in range(5):
        _synchronize()
        t0 = _perf_counter()
        before.record()
        flush()
        start.record()
        fn(*args)
        end.record()
        host.append((_perf_counter() - t0) * 1e3)
        _synchronize()
        gpu.append(_elapsed(start, end))
        cycle.append(_elapsed(before, end))
    return _Estimate(*(sorted(t)[len(t) // 2] for t in (gpu, cycle, host)))


class _Lead:
    """Queues a GPU sleep before timed calls when the host launches a call more slowly than
    the GPU flushes and runs it: long enough for the host to launch them all (taking
    `config.lead` times what it took when measured), so that they reach the GPU back to back.
    A kernel slower than its launch gets none, so the GPU's duty cycle (and with it the clock
    of a kernel at the power limit) stays as it was."""

    def __init__(self, config: TimingConfig, estimates: list[_Estimate]) -> None:
        self.short_ms = [max(0.0, config.lead * e.host_ms - e.cycle_ms) for e in estimates]
        self.max_ms = config.lead_max_ms
        self.cycles_per_ms = 0.0  # measured when first needed

    def span(self, fn: int) -> int:
        """How many calls one lead of at most max_ms covers."""
        return max(1, int(self.max_ms / self.short_ms[fn] + 1e-9)) if self.short_ms[fn] else 1 << 30

    def ms(self, fn: int, calls: int) -> float:
        return min(self.max_ms, self.short_ms[fn] * calls)

    def __call__(self, fn: int, calls: int) -> None:
        ms = self.ms(fn, calls)
        if ms <= 0 or _sleep is None:
            return
        if not self.cycles_per_ms:
            self.cycles_per_ms = _cycles_per_ms()
        _sleep(int(ms * self.cycles_per_ms))


def _cycles_per_ms() -> float:
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    cycles = 1_000_000
    _sleep(cycles)  # the first call loads the kernel
    start.record()
    _sleep(cycles)
    end.record()
    _synchronize()
    return cycles / max(_elapsed(start, end), 1e-3)


def _order(n: int, rep: int) -> list[int]:
    """Alternate who goes first, so that neither function always follows the flush."""
    return list(range(n)) if rep % 2 == 0 else list(reversed(range(n)))
