"""The adversarial suite: candidate files that try to fool or break the evaluator, each with the
verdict it must get in Triton's interpreter ("cpu") and on a GPU ("cuda").

Every row is judged by the real evaluator in a real worker process. Right after it, a known-good
candidate (the problem file itself) is judged by the same evaluator, to show that the trick or
fault harmed nothing beyond its own verdict.

    python -m tests.adversarial [--device cpu|cuda] [--only NAME,...] [--json OUT.json] [--lanes N]

It exits 1 when any row does not hold, known gaps (Row.gap) included; pytest expects those to
fail (strict xfail) until the evaluator closes them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, default_device, load_problem
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import WorkerFault
from tritonforge.worker.timing import TimingConfig
from tritonforge.domain.verdict import Status
from tritonforge.executors.compile_pool import CompilePool
from tritonforge.problem.spec import Problem

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples"
PROBLEMS = {
    "vector_add": EXAMPLES / "vector_add.py",
    "softmax": EXAMPLES / "softmax.py",
    "matmul": EXAMPLES / "matmul.py",
    "loose_tolerance": HERE / "problems" / "loose_tolerance.py",
    "op_add": HERE.parents[0] / "fixtures" / "problems" / "styles" / "triton_op_add.py",
}
HANG_S = 10.0  # check limit for rows that are meant to hang: long enough for any honest call here


@dataclass(frozen=True)
class Row:
    name: str  # "<problem>/<trick>"
    problem: str  # a key of PROBLEMS
    candidate: Path
    expect_cpu: Status | None  # None: the row is not run on that device
    expect_gpu: Status | None
    kind: str = "trick"  # "trick": tries to pass; "fault": tries to break the evaluator
    cpu_via: str = "evaluator"  # or "compile_pool": sm_90 compile on the CPU with the GPU hidden
    gpu_via: str = "evaluator"
    timeout_s: float | None = None  # a short limit for rows that are meant to hang
    gap: str = ""  # a known hole in the evaluator that makes this row fail until it is closed
    # Other verdicts that are just as right: which check catches a race depends on scheduling.
    also: tuple[Status, ...] = ()
    max_speedup: float | None = None  # a correct verdict's speedup must stay below this (a fake is far above)

    def expect(self, device: str) -> Status | None:
        return self.expect_cpu if device == "cpu" else self.expect_gpu

    def via(self, device: str) -> str:
        return self.cpu_via if device == "cpu" else self.gpu_via


def _row(problem: str, trick: str, cpu: Status | None, gpu: Status | None, **kw) -> Row:
    return Row(f"{problem}/{trick}", problem, HERE / "candidates" / problem / f"{trick}.py", cpu, gpu, **kw)


S = Status
# Tricks that fit any problem, run against several.
GENERIC = [("torch_op", S.REJECTED), ("reference_call", S.REJECTED), ("cached_by_shape", S.WRONG),
           ("empty_output", S.WRONG), ("partial_output", S.WRONG), ("mutates_input", S.WRONG),
           ("alias_input", S.REJECTED)]

ROWS: list[Row] = [
    _row("vector_add", "no_kernel", S.REJECTED, S.REJECTED),
    *[_row(p, trick, want, want) for p in ("vector_add", "softmax", "matmul") for trick, want in GENERIC],
    _row("vector_add", "cached_in_timing", S.REJECTED, S.REJECTED),
    _row("vector_add", "patch_event_at_import", S.REJECTED, S.REJECTED),
    _row("vector_add", "patch_time_in_call", S.REJECTED, S.REJECTED),
    _row("vector_add", "patch_synchronize", S.REJECTED, S.REJECTED),
    # Tampering with what the reference computes with, later in the same process: a swapped
    # torch.Tensor method is seen by the watch over torch's namespaces, an operator replaced
    # through torch.library by the source scan, before the reference ever runs.
    _row("vector_add", "patch_reference_op", S.REJECTED, S.REJECTED),
    _row("vector_add", "patch_aten_kernel", S.REJECTED, S.REJECTED),
    # Bending the reference or the checks by names built at run time, past the source scan: the
    # reference and the comparison run in the referee, a process no candidate touches, and the
    # judging process notices swapped code, replaced problem functions and threads left behind.
    _row("vector_add", "bend_reference_by_name", S.REJECTED, S.REJECTED),
    _row("vector_add", "reference_via_frames", S.REJECTED, S.REJECTED),
    _row("vector_add", "bend_comparison_by_name", S.REJECTED, S.REJECTED),
    _row("vector_add", "bend_check_code", S.REJECTED, S.REJECTED),
    _row("vector_add", "thread_left_behind", S.REJECTED, S.REJECTED),
    _row("vector_add", "bend_handoff_when_timed", S.REJECTED, S.REJECTED),
    # The compile pool calls the entry too (to capture its launches), in a worker it reuses.
    _row("vector_add", "patch_in_compile", S.REJECTED, S.REJECTED, cpu_via="compile_pool", gpu_via="compile_pool"),
    _row("vector_add", "side_stream", None, S.REJECTED),  # no streams in the interpreter
    _row("vector_add", "lazy_subclass", S.REJECTED, S.REJECTED),
    _row("loose_tolerance", "zeros", S.WRONG, S.WRONG),
    _row("vector_add", "seed_precompute", S.WRONG, S.WRONG),
    # Taking the problem's PyTorch operator name for a slow kernel, to slow the baseline timed
    # beside it: each import keeps its own operators, so it is correct and no faster.
    _row("op_add", "shadow_operator", S.CORRECT, S.CORRECT, max_speedup=1.5),
    # Faults. In the interpreter a wild store is a wild host store: the worker dies of SIGSEGV.
    _row("vector_add", "kernel_infinite_loop", S.TIMEOUT, S.TIMEOUT, kind="fault", timeout_s=HANG_S),
    _row("vector_add", "illegal_access", S.CRASH, S.CRASH, kind="fault"),
    # Triton's interpreter skips tl.device_assert (its options have debug off, whatever the
    # kernel asks), so on the CPU this kernel is simply correct.
    _row("vector_add", "device_assert", S.CORRECT, S.CRASH, kind="fault"),
    _row("vector_add", "segfault", S.CRASH, S.CRASH, kind="fault"),
    _row("vector_add", "oom", S.OOM, S.OOM, kind="fault"),
    _row("vector_add", "nan_output", S.WRONG, S.WRONG, kind="fault"),
    # A kernel registered for aten::add that kills the reference: refused (torch.library) before
    # it is imported; were it not, a crash in the reference after a candidate loaded is its own.
    _row("vector_add", "crash_in_reference", S.REJECTED, S.REJECTED, kind="fault"),
    # The interpreter runs programs in order. On a GPU the race is lost in a checked call (wrong)
    # or, when every checked call won it, in a timed call picked for checking (rejected).
    _row("vector_add", "racy_kernel", None, S.WRONG, kind="fault", also=(S.REJECTED,)),
    # The interpreter compiles nothing: on the CPU this row goes through the offline compile pool.
    _row("vector_add", "slow_compile", S.TIMEOUT, S.TIMEOUT, kind="fault", cpu_via="compile_pool",
         timeout_s=HANG_S),
]


@dataclass
class Result:
    row: Row
    device: str
    expected: Status | None
    got: Status | None  # None: the evaluator itself raised
    message: str
    seconds: float
    good_after: bool  # the known-good candidate judged correct right after the row
    good_message: str = ""  # why it was not, when it was not
    speedup: float | None = None  # the verdict's, where the row asks

    @property
    def holds(self) -> bool:
        return self.as_expected and self.good_after

    @property
    def as_expected(self) -> bool:
        status = self.got is self.expected or (self.got is not None and self.got in self.row.also)
        limit = self.row.max_speedup
        return status and (limit is None or (self.speedup is not None and self.speedup < limit))

    def to_json(self) -> dict:
        return {"row": self.row.name, "kind": self.row.kind, "problem": self.row.problem, "device": self.device,
                "expected": _value(self.expected), "got": _value(self.got), "holds": self.holds,
                "good_after": self.good_after, "good_message": self.good_message, "speedup": self.speedup,
                "seconds": round(self.seconds, 2),
                "message": self.message}


def options_for(device: str) -> EvalOptions:
    """Small shapes and short timing: the suite is about verdicts, not speed."""
    if device == "cpu":
        return EvalOptions(device="cpu", shapes="test", check_timeout_s=60, time_timeout_s=60,
                           timing=TimingConfig(cpu_reps=2))
    return EvalOptions(device="cuda", shapes="test", check_timeout_s=60, time_timeout_s=60,
                       timing=TimingConfig(heat_ms=5, rep_ms=20))


class Bench:
    """One worker, and one evaluator per problem on it, kept across rows, for one device.

    A single worker serves every problem (it keeps each one loaded): a fresh one costs seconds.
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.options = options_for(device)
        self.worker = WorkerClient(device)
        self.evaluators: dict[str, Evaluator] = {}
        self.speedup: float | None = None  # the last row verdict's

    def evaluator(self, problem: str) -> Evaluator:
        if problem not in self.evaluators:
            loaded = load_problem(PROBLEMS[problem], self.worker)
            self.evaluators[problem] = Evaluator(loaded, self.worker, self.options)
        return self.evaluators[problem]

    def run(self, row: Row) -> Result:
        self.speedup = None
        ev = self.evaluator(row.problem)
        if row.timeout_s and row.via(self.device) == "evaluator":
            # Warm the worker on this problem with the good file first, so that a short limit covers
            # the candidate's own work, never the problem's (a hang there would blame the problem).
            self._judge(ev, None)
        t0 = time.monotonic()
        good: tuple[Status | None, str] | None = None  # the good file's verdict and message
        try:
            if row.via(self.device) == "compile_pool":
                got, message, good = _through_compile_pool(row, ev.problem)
            else:
                got, message = self._judge(ev, row)
        except Exception as e:  # the evaluator must not raise on a candidate: record it as a failure
            got, message = None, f"evaluator raised {type(e).__name__}: {e}"
        seconds = time.monotonic() - t0
        if good is None:
            try:
                good = self._judge(ev, None)
            except Exception as e:
                good = (None, f"evaluator raised {type(e).__name__}: {e}")
        ok = good[0] is Status.CORRECT
        if not ok:  # the worker is suspect: later rows must not inherit what this one left behind
            self.worker.close()
        return Result(row, self.device, row.expect(self.device), got, message, seconds, ok, "" if ok else good[1],
                      self.speedup if row.max_speedup is not None else None)

    def _judge(self, ev: Evaluator, row: Row | None) -> tuple[Status, str]:
        """Judge a row's candidate, or the problem file itself (first case only) when row is None."""
        _warm(ev.worker)
        limit = row.timeout_s if row else None
        # A row's verdict is settled by its first failing case; trying the others costs time.
        ev.options = replace(self.options, stop_at_first_failure=True,
                             check_timeout_s=limit or self.options.check_timeout_s,
                             time_timeout_s=limit or self.options.time_timeout_s)
        try:
            if row:
                verdict = ev.evaluate(row.candidate)
            else:
                verdict = ev.evaluate(ev.problem.path, cases=ev.cases[:1])
        finally:
            ev.options = self.options
        if row:
            self.speedup = verdict.speedup.value if verdict.speedup else None
        return verdict.status, _first_line(verdict.message)

    def close(self) -> None:
        self.worker.close()
        self.evaluators.clear()


def _through_compile_pool(row: Row, problem: Problem) -> tuple[Status, str, tuple[Status | None, str]]:
    """Compile the candidate for sm_90 in a compile pool; then the problem file in the same pool."""
    pool = CompilePool(problem, problem.test_cases[0], workers=1, timeout_s=row.timeout_s or 240)
    try:
        _warm(pool.all[0])
        pool.submit([row.candidate])
        report = pool.result(row.candidate)
        pool.timeout_s = 240  # the good file compiles in seconds, but may start a fresh worker first
        pool.submit([problem.path])
        good = pool.result(problem.path)
    finally:
        pool.close()
    # A report without a status compiled: as good as correct here.
    got = report.status or Status.CORRECT
    return got, _first_line(report.message) or "compiled", (good.status or Status.CORRECT, _first_line(good.message))


def _warm(worker: WorkerClient) -> None:
    """Start the worker before a request, so that its start-up does not count against a short limit."""
    if not worker.alive():
        with contextlib.suppress(WorkerFault):
            worker.env()


def select(device: str, names: list[str] | None = None) -> list[Row]:
    """Rows run on `device`; a name matches a row's full name or its trick (e.g. "torch_op")."""
    rows = [r for r in ROWS if r.expect(device) is not None]
    if names:
        rows = [r for r in rows if r.name in names or r.candidate.stem in names]
    return rows


def run_suite(device: str, names: list[str] | None = None, on_result=None, lanes: int | None = None) -> list[Result]:
    """Judge the selected rows; `lanes` benches (workers) run side by side, in threads.

    Many rows end their worker (a fatal verdict), and a fresh interpreter worker costs ~10 s to
    start and warm up, mostly CPU-bound imports: lanes overlap that with other rows' work.
    One GPU gets one lane, so that rows never share it.
    """
    rows = select(device, names)
    lanes = lanes or (min(2, os.cpu_count() or 1) if device == "cpu" else 1)
    results: dict[str, Result] = {}

    def lane(mine: list[Row]) -> None:
        bench = Bench(device)
        try:
            for row in mine:
                results[row.name] = bench.run(row)
                if on_result:
                    on_result(results[row.name])
        finally:
            bench.close()

    with ThreadPoolExecutor(max_workers=lanes) as pool:
        list(pool.map(lane, [rows[i::lanes] for i in range(lanes)]))
    return [results[r.name] for r in rows]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _value(status: Status | None) -> str:
    return status.value if status else "-"


def _note(r: Result) -> str:
    """The verdict's message, what the good candidate got when it failed, and a known gap's note."""
    parts = [r.message[:120]]
    if r.good_message:
        parts.append(f"next good: {r.good_message[:80]}")
    if r.row.gap and not r.holds:
        parts.append(f"known gap: {r.row.gap}")
    return " | ".join(p for p in parts if p)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(prog="python -m tests.adversarial", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None)
    parser.add_argument("--only", default="", help="comma-separated row names or tricks")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--lanes", type=int, default=None, help="rows judged side by side (default: 2 on cpu)")
    args = parser.parse_args(argv)
    device = args.device or default_device()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or None

    console = Console(width=None if sys.stdout.isatty() else 200)
    t0 = time.monotonic()
    results = run_suite(device, names, lanes=args.lanes, on_result=lambda r: console.print(
        f"{'ok ' if r.holds else 'BAD'} {r.row.name}: {_value(r.got)} ({r.seconds:.1f} s)"))
    wall = time.monotonic() - t0

    table = Table(title=f"adversarial suite on {device} ({wall:.0f} s)")
    for col in ("row", "kind", "problem", "expected", "got", "good after", "s", "message"):
        table.add_column(col, overflow="fold")
    for r in results:
        table.add_row(r.row.name, r.row.kind, r.row.problem, _value(r.expected), _value(r.got),
                      "yes" if r.good_after else "NO", f"{r.seconds:.1f}", _note(r),
                      style=None if r.holds else "yellow" if r.row.gap else "bold red")
    console.print(table)
    bad = [r for r in results if not r.holds]
    gaps = sum(1 for r in bad if r.row.gap)
    console.print(f"{len(results) - len(bad)} of {len(results)} rows hold" + (f" ({gaps} known gaps)" if gaps else ""))
    if args.json:
        args.json.write_text(json.dumps({"device": device, "seconds": round(wall, 1),
                                         "results": [r.to_json() for r in results]}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
