"""Issue 12's table: for every example and corpus problem, the newest second opinion on record
(the evaluator's claim against do_bench in a fresh process), wherever it was made: an
`agreement.json` from `benchmarks/agreement.py` (a recorded best judged again by `check
--second-opinion`) or the `summary.json` an optimize run ends with.

    python3 benchmarks/agreement_table.py [RESULTS_DIR] [--gpu h100]

Only the records of one GPU kind (`--gpu`, default h200: folders named `DATE-h200-sN`) make a
table: timings of two kinds of GPU are never mixed.

Sessions are ordered by date and session number (`2026-12-04-h200-s10` after `-s9`), the
calls of a session by their folder names (a, b, c...); a problem's newest record wins. Prints
markdown: the table, where each row comes from, and how many cases agree within 5%.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from tritonforge.report.run_files import opinion_cells  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = {p.stem: p for folder in (ROOT / "examples", ROOT / "benchmarks" / "corpus") for p in folder.glob("*.py")}


def session_order(path: Path, results: Path, gpu: str = "h200") -> tuple:
    """(date, session number, the rest of the path) of a file under RESULTS_DIR."""
    top, *rest = path.relative_to(results).parts
    m = re.match(rf"(\d{{4}}-\d{{2}}-\d{{2}})-{gpu}(?:-s(\d+))?$", top)
    return (m.group(1), int(m.group(2) or 0), rest) if m else ("", 0, rest)


def records(results: Path, gpu: str = "h200") -> list[tuple[tuple, str, dict, str]]:
    """(order, problem, second opinion, where) for every record of GPU kind `gpu` under `results`."""
    out = []
    for path in results.glob(f"*-{gpu}-*/**/agreement*.json"):
        for name, result in json.loads(path.read_text()).items():
            opinion = result.get("second_opinion") if isinstance(result, dict) else None
            if name in PROBLEMS and opinion and opinion.get("cases"):
                out.append((session_order(path, results, gpu), name, opinion, str(path.relative_to(results))))
    for path in results.glob(f"*-{gpu}-*/**/summary.json"):
        summary = json.loads(path.read_text())
        name = Path(summary.get("problem", "")).stem
        opinion = summary.get("second_opinion") or {}
        if name not in PROBLEMS:
            continue
        if not summary.get("improved"):  # the baseline kept: no speedup is claimed
            opinion = {"cases": [], "kept": summary.get("stop_reason", "")}
        if opinion.get("cases") or "kept" in opinion:
            out.append((session_order(path, results, gpu), name, opinion, str(path.relative_to(results))))
    return out


def newest(results: Path, gpu: str = "h200") -> dict[str, tuple[dict, str]]:
    found: dict[str, tuple[dict, str]] = {}
    for _, name, opinion, where in sorted(records(results, gpu), key=lambda r: r[0]):
        found[name] = (opinion, where)
    return found


def main() -> None:
    args = sys.argv[1:]
    gpu = "h200"
    if "--gpu" in args:
        at = args.index("--gpu")
        gpu = args[at + 1]
        del args[at:at + 2]
    results = Path(args[0]) if args else ROOT / "benchmarks" / "results"
    found = newest(results, gpu)
    rows = ["| problem | case | claimed (evaluator) | do_bench | timed as | do_bench, plain calls | gap | flagged "
            "| record |", "|---|---|---:|---:|---|---:|---:|---|---|"]
    agree = cases = 0
    for name in sorted(found, key=lambda n: (PROBLEMS[n].parent.name != "examples", n)):
        opinion, where = found[name]
        if "kept" in opinion:
            rows.append(f"| {name} | all | no claim: the baseline was kept ({opinion['kept']}) | | | | | | {where} |")
        for c in opinion["cases"]:
            cases += 1
            agree += not c["flagged"]
            rows.append(f"| {name} | {c['case']} | {' | '.join(opinion_cells(c))} | "
                        f"{'**yes**' if c['flagged'] else 'no'} | {where} |")
    missing = sorted(set(PROBLEMS) - set(found))
    rows += ["", f"{agree} of {cases} cases within 5%, over {len(found)} problems."]
    if missing:
        rows.append(f"No second opinion on record for: {', '.join(missing)}.")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
