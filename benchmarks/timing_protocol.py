"""Why the evaluator's speedups and do_bench's disagree (issue 12): one baseline/best pair
timed under protocols that differ in one respect each, with the SM clock and power sampled
during each.

    python3 benchmarks/timing_protocol.py OUT.json [--seconds S]

Pairs: a corpus matmul at two sizes (compute bound) and a corpus vector add at a size where
one call takes a few microseconds and at 2^28 elements. The best of each is the corpus file
with the edit its optimize run found (benchmarks/results/2026-12-03-h200-s3), applied here as
text.

Protocols (each alternates baseline and best over three rounds unless it says otherwise):
- do_bench: `triton.testing.do_bench` median, same inputs (the second opinion);
- evaluator: `worker.timing.measure` as the evaluator calls it (fresh inputs every
  repetition, baseline and best alternating call by call, L2 flushed before each call);
- evaluator_same_inputs: the same, but one set of inputs for every repetition;
- evaluator_blocked: `measure` on one function at a time (no call-by-call alternation);
- evaluator_queued: the evaluator's loop with a GPU sleep queued before each start event,
  so the GPU is never waiting on the host when the timed call begins;
- evaluator_gap: the evaluator's loop with the GPU idle 2 ms before each timed call (does a
  rest, as a slow baseline gives the best that follows it, raise the clock?);
- do_bench_cudagraph: `triton.testing.do_bench_cudagraph` (no launch overhead at all).
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


def queued_measure(fns: list[Callable], inputs: Callable[[int], list[tuple]], reps: int) -> list[list[float]]:
    """The evaluator's loop with `torch.cuda._sleep` queued ahead of each start event."""
    flush = timing._L2Flusher("cuda")
    starts = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    ends = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in fns]
    for rep in range(reps):
        per_fn = inputs(rep)
        outs = []
        for i in timing._order(len(fns), rep):
            flush()
            torch.cuda._sleep(200_000)  # ~0.1 ms of GPU time: the host gets ahead
            starts[i][rep].record()
            outs.append(fns[i](*per_fn[i]))
            ends[i][rep].record()
    torch.cuda.synchronize()
    return [[s.elapsed_time(e) for s, e in zip(starts[i], ends[i])] for i in range(len(fns))]


def gap_measure(fns: list[Callable], inputs: Callable[[int], list[tuple]], reps: int) -> list[list[float]]:
    """The evaluator's loop, the GPU left idle ~2 ms before each timed call."""
    flush = timing._L2Flusher("cuda")
    samples: list[list[float]] = [[] for _ in fns]
    for rep in range(reps):
        per_fn = inputs(rep)
        for i in timing._order(len(fns), rep):
            flush()
            torch.cuda.synchronize()
            time.sleep(0.002)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fns[i](*per_fn[i])
            end.record()
            end.synchronize()
            samples[i].append(start.elapsed_time(end))
    return samples


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


def protocols(pm: ProblemModule, case: Any, fns: list[Callable],
              clocks: list) -> dict[str, Callable[[], list[float]]]:
    same = pm.make_args(case, 0, "cuda")

    def fresh(rep: int) -> list[tuple]:
        args = pm.make_args(case, 1 + rep, "cuda")
        return [args] + [tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)]

    def medians(samples: list[list[float]]) -> list[float]:
        return [statistics.median(s) for s in samples]

    cfg = timing.TimingConfig()
    return {
        "do_bench": lambda: do_bench_each(fns, same, clocks),
        "evaluator": lambda: medians(timing.measure(fns, "cuda", cfg, fresh).samples),
        "evaluator_same_inputs": lambda: medians(timing.measure(fns, "cuda", cfg, lambda rep: [same, same]).samples),
        "evaluator_blocked": lambda: [statistics.median(timing.measure([f], "cuda", cfg, lambda r: [fresh(r)[0]])
                                                        .samples[0]) for f in fns],
        "evaluator_queued": lambda: medians(queued_measure(fns, fresh, 200)),
        "evaluator_gap": lambda: medians(gap_measure(fns, fresh, 60)),
        "do_bench_cudagraph": lambda: cudagraph(fns, same),
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
    return result


def main() -> None:
    out = Path(sys.argv[1])
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 120.0
    deadline = time.monotonic() + seconds
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    for label, name, params, edit in PAIRS:
        try:
            result[label] = run_pair(label, name, params, edit, deadline)
        except Exception as e:  # one pair's failure must not cost the other's numbers
            result[label] = {"error": f"{type(e).__name__}: {e}"}
        out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
