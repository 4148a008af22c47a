"""Tables for issue 12 from a session's raw files: the timing-protocol experiment and the
evaluator-vs-do_bench agreement on the examples' best files.

    python3 benchmarks/record_agreement.py benchmarks/results/2026-12-03-h200-s4

Reads timing_protocol_*.json and agreement.json in that folder; prints markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


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
    rows = ["| example | case | claimed (evaluator) | do_bench | gap | flagged |", "|---|---|---:|---:|---:|---|"]
    for ex, result in data.items():
        for c in (result.get("second_opinion") or {}).get("cases", []):
            rows.append(f"| {ex} | {c['case']} | {c['claimed']:.3f}x | {c['speedup']:.3f}x | {c['gap'] * 100:+.1f}% "
                        f"| {'**yes**' if c['flagged'] else 'no'} |")
    return rows + [""]


def main() -> None:
    d = Path(sys.argv[1])
    lines = ["## Timing protocols, one baseline/best pair at a time (benchmarks/timing_protocol.py)", ""]
    for p in sorted(d.glob("timing_protocol_*.json")):
        lines += protocol_table(p)
    if (d / "agreement.json").exists():
        lines += ["## The examples' best files (from 2026-12-02-h200-s2), claimed vs do_bench "
                  "(benchmarks/agreement.py)", ""] + agreement_table(d / "agreement.json")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
