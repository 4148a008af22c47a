"""Every corpus problem through `optimize` in Triton's interpreter (CPU, TEST_SHAPES, a small
budget): which candidates each strategy made and how they were judged, and which problems were
refused and why. A check of reach and of the tool's own machinery, not of speed: interpreter
times say nothing about a GPU.

    python3 benchmarks/corpus_sweep_cpu.py OUTDIR [--budget N] > benchmarks/results/DATE-cpu-corpus-sweep.md
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from tritonforge.store import RunStore  # noqa: E402

CORPUS = sorted((ROOT / "benchmarks" / "corpus").glob("*.py"))


def run(path: Path, out: Path, budget: int) -> tuple[int, str, float]:
    cmd = [sys.executable, "-m", "tritonforge", "optimize", str(path), "--device", "cpu", "--shapes", "test",
           "--budget", str(budget), "--out", str(out)]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    return done.returncode, (lines[-1] if done.returncode else ""), time.monotonic() - t0


def judged(db: Path) -> tuple[Counter, str]:
    with RunStore.open(db) as store:
        verdicts = Counter(f"{c.origin}: {ev['status']}" for c, ev in store.judged() if c.origin != "baseline")
        best = store.candidate(store.best())
    return verdicts, best.origin


def versions() -> str:
    import platform

    import numpy
    import torch
    import triton

    return (f"CPU only ({platform.machine()}, {platform.python_implementation()} {platform.python_version()}); "
            f"torch {torch.__version__}, triton {triton.__version__}, numpy {numpy.__version__}.")


def main() -> None:
    outdir = Path(sys.argv[1])
    budget = int(sys.argv[sys.argv.index("--budget") + 1]) if "--budget" in sys.argv else 8
    rows = ["| problem | exit | wall s | candidates by strategy and verdict | best from | refused because |",
            "|---|---:|---:|---|---|---|"]
    for path in CORPUS:
        rc, why, secs = run(path, outdir / path.stem, budget)
        db = outdir / path.stem / "run.sqlite"
        verdicts, best = judged(db) if rc == 0 and db.exists() else (Counter(), "")
        seen = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
        rows.append(f"| {path.stem} | {rc} | {secs:.0f} | {seen} | {best} | {why.replace('|', '/')} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"# Corpus sweep in Triton's interpreter, {time.strftime('%Y-%m-%d')}\n")
    print(f"{versions()}\n")
    print(f"`python3 benchmarks/corpus_sweep_cpu.py OUTDIR --budget {budget}`: each corpus problem through "
          f"`tritonforge optimize --device cpu --shapes test --budget {budget}` (default strategies). Interpreter "
          "timings decide which candidate wins here and say nothing about a GPU; what this shows is reach (which "
          "problems get candidates, from which strategy) and that no verdict comes from the tool's own machinery "
          "(an `error` here would be one).\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
