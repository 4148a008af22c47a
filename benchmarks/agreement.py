"""The evaluator's speedup against an independent do_bench re-timing (issue 12), for the six
examples' best files found on the H200 earlier, with no search in between.

    python3 benchmarks/agreement.py RESULTS_RUNS_DIR OUT.json

RESULTS_RUNS_DIR holds one folder per example with the `best.diff` its optimize run left
(benchmarks/results/2026-12-02-h200-s2/runs). Each example's best is rebuilt from the diff
and judged by `tritonforge check EXAMPLE BEST --second-opinion --json`: the evaluator's
claimed speedup per case and do_bench's, side by side. OUT.json is rewritten after each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["vector_add", "matmul", "softmax", "rmsnorm", "silu_mul", "col_sum"]


def best_file(example: str, diff: Path, into: Path) -> Path:
    """The example with its best.diff applied, in a folder of its own."""
    folder = into / example
    folder.mkdir()
    (folder / f"{example}.py").write_text((ROOT / "examples" / f"{example}.py").read_text())
    subprocess.run(["patch", "-s", "-p1", "-i", str(diff.resolve())], cwd=folder, check=True)
    return folder / f"{example}.py"


def main() -> None:
    runs, out = Path(sys.argv[1]), Path(sys.argv[2])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ex in EXAMPLES:
            diff = runs / ex / "best.diff"
            if not diff.exists():
                result[ex] = {"error": f"{diff} is missing"}
                continue
            best = best_file(ex, diff, Path(tmp))
            cmd = [sys.executable, "-m", "tritonforge", "check", f"examples/{ex}.py", str(best),
                   "--second-opinion", "--json"]
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
            try:
                result[ex] = json.loads(proc.stdout)
            except json.JSONDecodeError:
                result[ex] = {"error": f"rc={proc.returncode}: {(proc.stderr or proc.stdout).strip()[-500:]}"}
            print(ex, json.dumps(result[ex].get("second_opinion", result[ex].get("error")))[:600], flush=True)
            out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
