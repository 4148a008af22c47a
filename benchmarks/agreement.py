"""The evaluator's speedup against an independent do_bench re-timing (issue 12): best files
found on the H200 earlier, judged again with no search in between.

    python3 benchmarks/agreement.py OUT.json RUNS_DIR [RUNS_DIR ...] [--only NAME,NAME...]

Each RUNS_DIR holds one folder per problem with the `best.diff` its optimize run left; where
several hold the same problem, the last one named wins (list older sessions first). A
problem is `examples/<name>.py` or `benchmarks/corpus/<name>.py`. Each best is rebuilt from
its diff and judged by `tritonforge check PROBLEM BEST --second-opinion --json`: the
evaluator's claimed speedup per case and do_bench's, side by side, with the diff's origin.
OUT.json is rewritten after each problem. `benchmarks/record_agreement.py` makes the table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# The newest best of each problem on record, oldest folders first (the last wins).
RECORDED = [RESULTS / "2026-12-03-h200-s3" / "runs", RESULTS / "2026-12-03-h200-s4" / "corpus" / "runs",
            RESULTS / "2026-12-03-h200-s5" / "runs", RESULTS / "2026-12-03-h200-s6" / "b",
            RESULTS / "2026-12-03-h200-s7" / "a", RESULTS / "2026-12-03-h200-s7" / "b", RESULTS / "2026-12-03-h200-s7" / "c",
            RESULTS / "2026-12-04-h200-s8" / "c", RESULTS / "2026-12-04-h200-s9" / "d",
            RESULTS / "2026-12-04-h200-s10" / "b", RESULTS / "2026-12-04-h200-s10" / "e",
            RESULTS / "2026-12-05-h200-s11" / "a", RESULTS / "2026-12-05-h200-s11" / "b",
            RESULTS / "2026-12-05-h200-s12" / "a"]


def problem_file(name: str) -> Path | None:
    for folder in (ROOT / "examples", ROOT / "benchmarks" / "corpus"):
        if (folder / f"{name}.py").exists():
            return folder / f"{name}.py"
    return None


def newest_diffs(runs: list[Path]) -> dict[str, Path]:
    """problem name -> its best.diff in the last of `runs` that has one."""
    found: dict[str, Path] = {}
    for d in runs:
        for diff in sorted(d.glob("*/best.diff")):
            if problem_file(diff.parent.name):
                found[diff.parent.name] = diff
    return found


def best_file(problem: Path, diff: Path, into: Path) -> Path:
    """The problem with its best.diff applied, in a folder of its own."""
    folder = into / problem.stem
    folder.mkdir()
    (folder / problem.name).write_text(problem.read_text())
    subprocess.run(["patch", "-s", "-p1", "-i", str(diff.resolve())], cwd=folder, check=True, capture_output=True)
    return folder / problem.name


def judge(problem: Path, diff: Path, tmp: Path, env: dict[str, str]) -> dict:
    try:
        best = best_file(problem, diff, tmp)
    except subprocess.CalledProcessError as e:
        return {"error": f"{diff} does not apply to {problem.name}: {(e.stdout or e.stderr).decode().strip()[:300]}"}
    cmd = [sys.executable, "-m", "tritonforge", "check", str(problem.relative_to(ROOT)), str(best),
           "--second-opinion", "--json"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": f"rc={proc.returncode}: {(proc.stderr or proc.stdout).strip()[-500:]}"}


def main() -> None:
    args = sys.argv[1:]
    only = args.pop(args.index("--only") + 1).split(",") if "--only" in args else None
    if "--only" in args:
        args.remove("--only")
    out, runs = Path(args[0]), [Path(a) for a in args[1:]] or RECORDED
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    diffs = newest_diffs(runs)
    result: dict = json.loads(out.read_text()) if out.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, diff in diffs.items():
            if only and name not in only:
                continue
            result[name] = {**judge(problem_file(name), diff, Path(tmp), env),
                            "best_from": str(diff.parent.relative_to(ROOT))}
            print(name, json.dumps(result[name].get("second_opinion", result[name].get("error")))[:600], flush=True)
            out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
