"""Why the evaluator and do_bench disagree on small cases (issue 12): one baseline/best pair,
timed under protocols that differ in one respect each.

    python3 benchmarks/fresh_inputs.py OUT.json [PAIR]

PAIR (default `chain`): `chain`, benchmarks/corpus/bias_gelu_residual_chain.py and its session-5
best (the two launches fused), at 1024x4096 (64 MiB per call, L2 is 50 MiB) and 8192x8192;
`two_stage`, benchmarks/corpus/sum_squares_two_stage.py and its session-6 best (PARTIAL_BLOCK
2048, 8 warps), at 2^24 elements (flagged at -28% in session 6) and 2^28. Protocols, three
rounds of baseline then best:
- do_bench: `triton.testing.do_bench`, median, the same inputs every repetition;
- pool_P: do_bench's loop by hand (flush, event, call, event), the inputs of each call taken
  in turn from P input sets made in advance; outputs freed after each call (P=1 is do_bench's
  protocol; a large P gives every call memory the previous calls did not touch);
- pool_64_outputs_alive: the same, every output kept until the loop ends;
- evaluator: `worker.timing.measure` as the worker calls it (with its lead, session 6);
- evaluator_lead0: the same without the lead;
- evaluator_chunk1: the same with room for one call's inputs at a time;
- host_us: the host's time to launch one call (flush, events and the call, the GPU idle) and
  the GPU's time for the flush and the call, as the timer estimates them: where the first
  exceeds the second, a loop that does not run ahead (do_bench) times the host too;
- worker: `tritonforge check --second-opinion --json` on the pair (the evaluator in its worker
  process against do_bench in a fresh one), the numbers the tool reports.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import torch
import triton.testing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from tritonforge.problem.module import ProblemModule, import_file  # noqa: E402
from tritonforge.problem.spec import Case  # noqa: E402
from tritonforge.worker import timing  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
PAIRS = {  # name -> (problem, best.diff, cases)
    "chain": (ROOT / "benchmarks" / "corpus" / "bias_gelu_residual_chain.py",
              RESULTS / "2026-12-03-h200-s5" / "runs" / "bias_gelu_residual_chain" / "best.diff",
              [{"rows": 1024, "cols": 4096}, {"rows": 8192, "cols": 8192}]),
    "two_stage": (ROOT / "benchmarks" / "corpus" / "sum_squares_two_stage.py",
                  RESULTS / "2026-12-03-h200-s6" / "d" / "sum_squares_two_stage" / "best.diff",
                  [{"n": 1 << 24}, {"n": 1 << 28}]),
}
ROUNDS = 3
CALLS = 300


def best_file(problem: Path, diff: Path, into: Path) -> Path:
    path = into / problem.name
    path.write_text(problem.read_text())
    subprocess.run(["patch", "-s", "-p1", "-i", str(diff)], cwd=into, check=True)
    return path


def pooled(fn: Callable, pm: ProblemModule, case: Case, pool: int, keep_outputs: bool) -> float:
    flush = timing._L2Flusher("cuda")
    sets = [pm.make_args(case, 1 + i, "cuda") for i in range(pool)]
    for _ in range(10):
        fn(*sets[0])
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]
    kept = []
    for i in range(CALLS):
        flush()
        starts[i].record()
        out = fn(*sets[i % pool])
        ends[i].record()
        if keep_outputs:
            kept.append(out)
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def evaluator(fns: list[Callable], pm: ProblemModule, case: Case, **config) -> list[float]:
    m = timing.measure(fns, "cuda", timing.TimingConfig(**config), lambda rep, i: pm.make_args(case, 1 + rep, "cuda"))
    return [statistics.median(s) for s in m.samples]


def protocols(pair: dict[str, Callable], pm: ProblemModule, case: Case) -> dict[str, list[dict[str, float]]]:
    rows: dict[str, list[dict[str, float]]] = {}

    def add(name: str, times: dict[str, float]) -> None:
        rows.setdefault(name, []).append({k: v * 1e3 for k, v in times.items()})

    for _ in range(ROUNDS):
        args = pm.make_args(case, 1, "cuda")
        add("do_bench", {k: triton.testing.do_bench(lambda f=f: f(*args), return_mode="median") for k, f in pair.items()})
        for pool in (1, 8, 64):
            add(f"pool_{pool}", {k: pooled(f, pm, case, pool, False) for k, f in pair.items()})
        add("pool_64_outputs_alive", {k: pooled(f, pm, case, 64, True) for k, f in pair.items()})
        add("evaluator", dict(zip(pair, evaluator(list(pair.values()), pm, case))))
        add("evaluator_lead0", dict(zip(pair, evaluator(list(pair.values()), pm, case, lead=0))))
        add("evaluator_chunk1", dict(zip(pair, evaluator(list(pair.values()), pm, case, burst_bytes=1))))
        torch.cuda.empty_cache()
    flush = timing._L2Flusher("cuda")
    args = pm.make_args(case, 1, "cuda")
    for name, f in pair.items():
        e = timing._estimate_ms(f, args, flush)
        rows.setdefault(f"host_us_{name}", []).append({"host": e.host_ms, "flush_and_call": e.cycle_ms})
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "chain"
    problem, diff, cases = PAIRS[name]
    result: dict = {"pair": name, "torch": torch.__version__, "triton": triton.__version__,
                    "gpu": torch.cuda.get_device_name(), "calls": CALLS, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        best = best_file(problem, diff, Path(tmp))
        pm = ProblemModule(problem)
        pair = {"baseline": pm.entry, "best": getattr(import_file(best, "fresh_inputs_best"), pm.entry_name)}
        for params in cases:
            case = next(c for c in pm.cases()[0] if c.params == params)
            label = "x".join(str(v) for v in params.values())
            rows = protocols(pair, pm, case)
            result["cases"][label] = {
                protocol: ({"host_us": 1e3 * statistics.median(r["host"] for r in rs),
                            "flush_and_call_us": 1e3 * statistics.median(r["flush_and_call"] for r in rs)}
                           if protocol.startswith("host_us") else
                           {"baseline_us": statistics.median(r["baseline"] for r in rs),
                            "best_us": statistics.median(r["best"] for r in rs),
                            "speedups": [r["baseline"] / r["best"] for r in rs]})
                for protocol, rs in rows.items()}
            print(label, json.dumps(result["cases"][label], indent=1), flush=True)
            out.write_text(json.dumps(result, indent=1))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        proc = subprocess.run([sys.executable, "-m", "tritonforge", "check", str(problem), str(best),
                               "--second-opinion", "--json"], cwd=ROOT, env=env, capture_output=True, text=True)
        try:
            result["worker"] = json.loads(proc.stdout)
        except json.JSONDecodeError:
            result["worker"] = {"error": f"rc={proc.returncode}: {(proc.stderr or proc.stdout).strip()[-800:]}"}
        print("worker", json.dumps(result["worker"])[:3000], flush=True)
    out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
