"""Tables for issue 12 from a session's raw files: the timing-protocol experiment and the
evaluator-vs-do_bench agreement on recorded best files.

    python3 benchmarks/record_agreement.py benchmarks/results/2026-12-03-h200-s4

Reads timing_protocol_*.json and agreement.json in that folder; prints markdown.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from tritonforge.report.run_files import opinion_cells  # noqa: E402


def protocol_table(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    rows = [f"### {path.name} ({data['date']}, {data['gpu']}, torch {data['torch']}, triton {data['triton']})", "",
            "| pair | protocol | baseline us | best us | speedup | per-round speedups |",
            "|---|---|---:|---:|---:|---|"]
    for pair, result in data.items():
        if not isinstance(result, dict):
            continue
        for name, r in result.items():
            if isinstance(r, dict) and "speedup" in r:
                rounds = ", ".join(f"{a / b:.3f}" for a, b in r["rounds"])
                rows.append(f"| {pair} | {name} | {r['baseline_ms'] * 1e3:.2f} | {r['best_ms'] * 1e3:.2f} "
                            f"| {r['speedup']:.3f}x | {rounds} |")
        if "settling" in result:
            trace = result["settling"]
            marks = [trace[min(range(len(trace)), key=lambda k: abs(trace[k][0] - t))] for t in (0, 25, 50, 100, 150, 200)]
            rows.append(f"| {pair} | settling: best's call (us) at ms after the baseline stopped | | | | "
                        + ", ".join(f"{t:.0f} ms: {ms * 1e3:.1f}" for t, ms in marks) + " |")
    return rows + [""]


def agreement_table(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    rows = ["| problem | case | claimed (evaluator) | do_bench | timed as | do_bench, plain calls | gap | flagged "
            "| best from |", "|---|---|---:|---:|---|---:|---:|---|---|"]
    for name, result in data.items():
        if result.get("error"):
            rows.append(f"| {name} | - | - | - | - | - | - | **error**: {result['error'][:200]} | "
                        f"{result.get('best_from', '-')} |")
            continue
        for c in (result.get("second_opinion") or {}).get("cases", []):
            rows.append(f"| {name} | {c['case']} | {' | '.join(opinion_cells(c))} | {'**yes**' if c['flagged'] else 'no'} "
                        f"| {result.get('best_from', '-')} |")
    return rows + [""]


def means(path: Path) -> list[str]:
    """The geometric mean over the problems of each one's speedup (itself a geometric mean over
    its cases), as claimed and as do_bench re-timed it, with the count of cases within 5%."""
    claimed, rechecked, agree, cases = [], [], 0, 0
    for result in json.loads(path.read_text()).values():
        opinion = (result.get("second_opinion") or {}).get("cases", [])
        if result.get("error") or not opinion or any(c.get("error") for c in opinion):
            continue
        claimed.append(_geomean([c["claimed"] for c in opinion]))
        rechecked.append(_geomean([c["speedup"] for c in opinion]))
        agree += sum(not c["flagged"] for c in opinion)
        cases += len(opinion)
    if not claimed:
        return []
    return [f"Over {len(claimed)} problems: geometric mean {_geomean(claimed):.2f}x claimed, "
            f"{_geomean(rechecked):.2f}x by do_bench; {agree} of {cases} cases within 5%.", ""]


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main() -> None:
    d = Path(sys.argv[1])
    lines = ["## Timing protocols, one baseline/best pair at a time (benchmarks/timing_protocol.py)", ""]
    for p in sorted(d.glob("timing_protocol_*.json")):
        lines += protocol_table(p)
    if (d / "agreement.json").exists():
        lines += ["## Recorded best files, claimed vs do_bench (benchmarks/agreement.py)", ""] \
            + agreement_table(d / "agreement.json") + means(d / "agreement.json")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
