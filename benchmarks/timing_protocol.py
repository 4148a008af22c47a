"""Why the evaluator's speedups and do_bench's disagree (issue 12): one baseline/best pair
timed under protocols that differ in one respect each, with the SM clock and power sampled
during each.

    python3 benchmarks/timing_protocol.py OUT.json [--seconds S] [--only LABEL,...]

Pairs: a corpus matmul at two sizes (compute bound) and a corpus vector add at a size where
one call takes a few microseconds and at 2^28 elements. The best of each is the corpus file
with the edit its optimize run found (benchmarks/results/2026-12-03-h200-s3), applied here as
text.

Protocols (three rounds each, baseline then best in each round):
- do_bench: `triton.testing.do_bench` median, same inputs (the second opinion);
- alternating: the evaluator's loop until this experiment (fresh inputs every call, baseline
  and best alternating call by call, L2 flushed before each call);
- evaluator: `worker.timing.measure` as the evaluator calls it now (alternating bursts,
  each after an untimed heat of the same function), and variants: no heat (heat0), 100 ms
  of heat (heat100), bursts of 100 ms (burst100);
- do_bench_cudagraph: `triton.testing.do_bench_cudagraph` (no launch overhead at all);
- opinion_plain and opinion_replay: the second opinion's two ways (do_bench warmed for the
  evaluator's heat; the entry called, or its capture in a CUDA graph replayed), each timed
  in rounds of its own so that the sampled clock belongs to one way (s9: the matmul's replay
  7% slower than its plain calls).
A settling trace follows: per-call times of the best after 100 ms of the baseline, then one
after 5 s of an idle GPU (the best alone for 3 s).
The first run (timing_protocol_1.json) also had: the same inputs every call, one function at
a time, a GPU sleep queued before each call, and a 2 ms idle gap before each call.
The SM clock and power are sampled with `nvidia-smi` every 20 ms, per function for do_bench
(which times one function at a time) and per protocol otherwise.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from tritonforge.problem.module import ProblemModule, import_file  # noqa: E402
from tritonforge.worker import timing  # noqa: E402
from tritonforge.worker.opinion import graphed  # noqa: E402

CORPUS = ROOT / "benchmarks" / "corpus"
_ADD_EDIT = ("BLOCK_SIZE = 64\n", "BLOCK_SIZE = 1024\n")
_MATMUL_EDIT = ('{"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,\n'
                '                    "num_warps": 4, "num_stages": 1}',
                '{"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,\n'
                '                    "num_warps": 8, "num_stages": 4}')
PAIRS = [  # (label, corpus file, case, (text in the baseline, text in the best))
    ("add_98432", "vector_add_is_cuda", {"n": 98432}, _ADD_EDIT),
    ("matmul_8192", "matmul_dtype_configs", {"M": 8192, "N": 8192, "K": 8192}, _MATMUL_EDIT),
    ("matmul_4096", "matmul_dtype_configs", {"M": 4096, "N": 4096, "K": 4096}, _MATMUL_EDIT),
    ("add_2p28", "vector_add_is_cuda", {"n": 1 << 28}, _ADD_EDIT),
]


class Sampler:
    """SM clock (MHz) and power (W) every 20 ms from `nvidia-smi`, while a block runs."""

    def __enter__(self) -> "Sampler":
        self.error = ""
        try:
            self._proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                                           "--format=csv,noheader,nounits", "-lms", "20"],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError as e:  # no nvidia-smi: the protocols still run
            self._proc, self.error = None, f"{type(e).__name__}: {e}"
        return self

    def __exit__(self, *exc: Any) -> None:
        self.clocks: list[float] = []
        self.power: list[float] = []
        if self._proc is None:
            return
        self._proc.terminate()
        out, _ = self._proc.communicate()
        for line in out.splitlines():
            try:
                clock, power = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.clocks.append(clock)
            self.power.append(power)

    def to_json(self) -> dict:
        med = (lambda xs: statistics.median(xs) if xs else None)
        return {"sm_clock_mhz_median": med(self.clocks), "sm_clock_mhz_min": min(self.clocks, default=None),
                "power_w_median": med(self.power), "power_w_max": max(self.power, default=None),
                "samples": len(self.clocks), "error": self.error}


def alternating_measure(fns: list[Callable], inputs: Callable[[int, int], tuple],
                        cfg: timing.TimingConfig) -> list[list[float]]:
    """The evaluator's loop until this experiment: one call of each function in turn."""
    flush = timing._L2Flusher("cuda")
    warm = [inputs(-1, i) for i in range(len(fns))]
    estimate = max(timing._estimate_ms(f, a, flush).gpu_ms for f, a in zip(fns, warm))
    for _ in range(min(100, max(1, int(25.0 / estimate)))):  # its 25 ms of warm-up
        for f, a in zip(fns, warm):
            f(*a)
    reps = int(min(cfg.max_reps, max(cfg.min_reps, cfg.rep_ms / max(estimate, 1e-3))))
    starts = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    ends = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    for rep in range(reps):
        per_fn = [inputs(rep, i) for i in range(len(fns))]
        outs = []
        for i in timing._order(len(fns), rep):
            flush()
            starts[i][rep].record()
            outs.append(fns[i](*per_fn[i]))
            ends[i][rep].record()
    torch.cuda.synchronize()
    return [[s.elapsed_time(e) for s, e in zip(starts[i], ends[i])] for i in range(len(fns))]


def settling(fns: list[Callable], args: tuple, before_ms: float = 100, after_ms: float = 200) -> list[list[float]]:
    """The baseline for `before_ms`, then per-call times of the best for `after_ms`, each call
    after a flush: [ms since the best started, that call's ms]."""
    flush = timing._L2Flusher("cuda")
    est = [timing._estimate_ms(f, args, flush).gpu_ms for f in fns]
    timing._run_for(fns[0], args, flush, before_ms, est[0])
    n = max(1, int(after_ms / est[1]))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for s, e in zip(starts, ends):
        flush()
        s.record()
        fns[1](*args)
        e.record()
    torch.cuda.synchronize()
    return [[starts[0].elapsed_time(s), s.elapsed_time(e)] for s, e in zip(starts, ends)]


def settling_cold(fns: list[Callable], args: tuple, idle_s: float = 5.0, after_ms: float = 3000) -> list[list[float]]:
    """After `idle_s` of an idle GPU, per-call times of the best alone for `after_ms`: how long a
    kernel at the power limit keeps its boost clock from a cool start (s10: the evaluator's
    100 ms of heat may not reach the settled clock there)."""
    time.sleep(idle_s)
    return settling(fns, args, before_ms=0, after_ms=after_ms)


def do_bench_each(fns: list[Callable], args: tuple, clocks: list) -> list[float]:
    """do_bench one function at a time, the clock sampled during each."""
    times = []
    for f in fns:
        with Sampler() as sampler:
            times.append(triton.testing.do_bench(lambda: f(*args), return_mode="median"))
        clocks.append(sampler.to_json())
    return times


def cudagraph(fns: list[Callable], args: tuple) -> list[float]:
    with torch.cuda.stream(torch.cuda.Stream()):
        return [triton.testing.do_bench_cudagraph(lambda: f(*args), return_mode="median") for f in fns]


def opinion(fns: list[Callable], args: tuple, replay: bool) -> list[float]:
    """do_bench as the second opinion calls it: warmed for the evaluator's heat, the entry
    called or its captured graph replayed."""
    calls = [graphed(f, args) for f in fns] if replay else [(lambda f=f: f(*args)) for f in fns]
    bad = next((c for c in calls if isinstance(c, str)), None)
    if bad:
        raise RuntimeError(bad)
    warmup = int(timing.TimingConfig.heat_ms)
    return [triton.testing.do_bench(c, warmup=warmup, rep=100, return_mode="median") for c in calls]


def protocols(pm: ProblemModule, case: Any, fns: list[Callable],
              clocks: list) -> dict[str, Callable[[], list[float]]]:
    same = pm.make_args(case, 0, "cuda")

    def fresh(rep: int, fn: int) -> tuple:
        return pm.make_args(case, 1 + rep, "cuda")

    def medians(samples: list[list[float]]) -> list[float]:
        return [statistics.median(s) for s in samples]

    def cold(protocol: Callable[[], list[float]]) -> Callable[[], list[float]]:
        return lambda: (time.sleep(5.0), protocol())[1]

    def evaluator(**cfg: float) -> Callable[[], list[float]]:
        return lambda: medians(timing.measure(fns, "cuda", timing.TimingConfig(**cfg), fresh).samples)

    return {
        "do_bench": lambda: do_bench_each(fns, same, clocks),
        "alternating": lambda: medians(alternating_measure(fns, fresh, timing.TimingConfig())),
        "evaluator": evaluator(),
        "evaluator_heat0": evaluator(heat_ms=0),
        "evaluator_heat100": evaluator(heat_ms=100),
        "evaluator_burst100": evaluator(burst_ms=100),
        "do_bench_cudagraph": lambda: cudagraph(fns, same),
        # After 5 s of an idle GPU, as `check` times its first case after the correctness draws:
        # does 100 ms of heat bring a kernel at the power limit to its settled clock (s10)?
        "evaluator_cold": cold(evaluator()),
        "evaluator_cold_heat300": cold(evaluator(heat_ms=300)),
        # A second of heat before every burst (s11): does the claim then match a hot GPU's?
        "evaluator_cold_heat1000": cold(evaluator(heat_ms=1000)),
        "opinion_plain": lambda: opinion(fns, same, replay=False),
        "opinion_replay": lambda: opinion(fns, same, replay=True),
    }


def run_pair(label: str, name: str, params: dict, edit: tuple[str, str], deadline: float) -> dict:
    path = CORPUS / f"{name}.py"
    source = path.read_text()
    assert edit[0] in source, f"{path}: the edit's text is not there"
    best_path = Path(f"/tmp/timing_protocol_{label}_best.py")
    best_path.write_text(source.replace(edit[0], edit[1]))
    pm = ProblemModule(path)
    case = next(c for c in pm.cases()[0] if c.params == params)
    fns = [getattr(import_file(p, f"tp_{label}_{i}"), pm.entry_name) for i, p in enumerate((path, best_path))]
    result: dict = {"case": case.label}
    for protocol_name, protocol in protocols(pm, case, fns, clocks := []).items():
        if time.monotonic() > deadline:
            result[protocol_name] = {"skipped": "deadline"}
            continue
        rounds = []
        with Sampler() as sampler:
            for _ in range(3):
                rounds.append(protocol())
        base = statistics.median(r[0] for r in rounds)
        best = statistics.median(r[1] for r in rounds)
        result[protocol_name] = {"baseline_ms": base, "best_ms": best, "speedup": base / best, "rounds": rounds,
                                 "gpu": sampler.to_json()}
        if protocol_name == "do_bench":
            result[protocol_name]["gpu_per_function"] = clocks[:2]
        print(label, protocol_name, json.dumps(result[protocol_name]), flush=True)
    if time.monotonic() < deadline:
        result["settling"] = settling(fns, pm.make_args(case, 0, "cuda"))
    if time.monotonic() < deadline:
        result["settling_cold"] = settling_cold(fns, pm.make_args(case, 0, "cuda"))
    return result


def main() -> None:
    out = Path(sys.argv[1])
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 120.0
    deadline = time.monotonic() + seconds
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    for label, name, params, edit in PAIRS:
        if only and label not in only:
            continue
        try:
            result[label] = run_pair(label, name, params, edit, deadline)
        except Exception as e:  # one pair's failure must not cost the other's numbers
            result[label] = {"error": f"{type(e).__name__}: {e}"}
        out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
