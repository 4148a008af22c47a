"""Why the evaluator's speedups and do_bench's disagree (issue 12): one baseline/best pair
timed under protocols that differ in one respect each, with the SM clock and power sampled
during each.

    python3 benchmarks/timing_protocol.py OUT.json [--seconds S]

Pairs: a corpus matmul (compute bound, ~1.5 ms best) and a corpus vector add at a size
where one call takes a few microseconds. The best of each is the corpus file with the edit
its optimize run found (benchmarks/results/2026-12-03-h200-s3), applied here as text.

Protocols (each alternates baseline and best over three rounds unless it says otherwise):
- do_bench: `triton.testing.do_bench` median, same inputs (the second opinion);
- evaluator: `worker.timing.measure` as the evaluator calls it (fresh inputs every
  repetition, baseline and best alternating call by call, L2 flushed before each call);
- evaluator_same_inputs: the same, but one set of inputs for every repetition;
- evaluator_blocked: `measure` on one function at a time (no call-by-call alternation);
- evaluator_queued: the evaluator's loop with a GPU sleep queued before each start event,
  so the GPU is never waiting on the host when the timed call begins.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
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
PAIRS = {
    "vector_add_is_cuda": ({"n": 98432}, ("BLOCK_SIZE = 64\n", "BLOCK_SIZE = 1024\n")),
    "matmul_dtype_configs": ({"M": 8192, "N": 8192, "K": 8192},
                             ('{"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,\n'
                              '                    "num_warps": 4, "num_stages": 1}',
                              '{"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,\n'
                              '                    "num_warps": 8, "num_stages": 4}')),
}


class Sampler:
    """SM clock (MHz) and power (mW) every 10 ms while a protocol runs, where NVML is there."""

    def __init__(self) -> None:
        self.clocks: list[float] = []
        self.power: list[float] = []
        self.error = ""
        self._stop = threading.Event()

    def __enter__(self) -> "Sampler":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.clocks.append(float(torch.cuda.clock_rate()))
                self.power.append(float(torch.cuda.power_draw()))
            except Exception as e:  # no pynvml: the protocols still run
                self.error = f"{type(e).__name__}: {e}"
                return
            time.sleep(0.01)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def to_json(self) -> dict:
        med = (lambda xs: statistics.median(xs) if xs else None)
        return {"sm_clock_mhz_median": med(self.clocks), "sm_clock_mhz_min": min(self.clocks, default=None),
                "power_w_median": med(self.power) and med(self.power) / 1000, "samples": len(self.clocks),
                "error": self.error}


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


def protocols(pm: ProblemModule, case: Any, fns: list[Callable]) -> dict[str, Callable[[], list[float]]]:
    same = pm.make_args(case, 0, "cuda")

    def fresh(rep: int) -> list[tuple]:
        args = pm.make_args(case, 1 + rep, "cuda")
        return [args] + [tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)]

    def medians(samples: list[list[float]]) -> list[float]:
        return [statistics.median(s) for s in samples]

    cfg = timing.TimingConfig()
    return {
        "do_bench": lambda: [triton.testing.do_bench(lambda: f(*same), return_mode="median") for f in fns],
        "evaluator": lambda: medians(timing.measure(fns, "cuda", cfg, fresh).samples),
        "evaluator_same_inputs": lambda: medians(timing.measure(fns, "cuda", cfg, lambda rep: [same, same]).samples),
        "evaluator_blocked": lambda: [statistics.median(timing.measure([f], "cuda", cfg, lambda r: [fresh(r)[0]])
                                                        .samples[0]) for f in fns],
        "evaluator_queued": lambda: medians(queued_measure(fns, fresh, 200)),
    }


def run_pair(name: str, params: dict, edit: tuple[str, str], deadline: float) -> dict:
    path = CORPUS / f"{name}.py"
    source = path.read_text()
    assert edit[0] in source, f"{path}: the edit's text is not there"
    best_path = Path(f"/tmp/timing_protocol_{name}_best.py")
    best_path.write_text(source.replace(edit[0], edit[1]))
    pm = ProblemModule(path)
    case = next(c for c in pm.cases()[0] if c.params == params)
    fns = [getattr(import_file(p, f"tp_{name}_{i}"), pm.entry_name) for i, p in enumerate((path, best_path))]
    result: dict = {"case": case.label}
    for label, protocol in protocols(pm, case, fns).items():
        if time.monotonic() > deadline:
            result[label] = {"skipped": "deadline"}
            continue
        rounds = []
        with Sampler() as sampler:
            for _ in range(3):
                rounds.append(protocol())
        base = statistics.median(r[0] for r in rounds)
        best = statistics.median(r[1] for r in rounds)
        result[label] = {"baseline_ms": base, "best_ms": best, "speedup": base / best, "rounds": rounds,
                         "gpu": sampler.to_json()}
        print(name, label, json.dumps(result[label]), flush=True)
    return result


def main() -> None:
    out = Path(sys.argv[1])
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 120.0
    deadline = time.monotonic() + seconds
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    for name, (params, edit) in PAIRS.items():
        try:
            result[name] = run_pair(name, params, edit, deadline)
        except Exception as e:  # one pair's failure must not cost the other's numbers
            result[name] = {"error": f"{type(e).__name__}: {e}"}
        out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
