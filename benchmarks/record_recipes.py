"""Table of what the rewrite recipes bought, from the run directories of one session.

    python3 benchmarks/record_recipes.py RUNS[,RUNS...] [EARLIER_RUNS ...]

RUNS (comma-separated) hold <problem>/summary.json of the session with recipes; each EARLIER_RUNS
directory holds earlier runs of the same problems made with launch parameters alone. Both
speedups are ratios measured within their own run (best over the same baseline file), so
their quotient is the gain of the recipe over the launch-parameter-only best without
comparing times across sessions. Every number is read from those files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _summaries(d: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(d.glob("*/summary.json"))}


def table(now: dict[str, dict], before: dict[str, dict]) -> list[str]:
    rows = ["| problem | case | recipes in the best | speedup | launch-only speedup (earlier run) | gain over launch-only "
            "| % of roofline floor | do_bench speedup (gap) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, s in now.items():
        # best.recipes traces the best's ancestors (a launch move on a rewrite keeps it).
        recipes = ", ".join(s["best"].get("recipes") or s["best"].get("params", {}).get("recipes", [])) or "none"
        earlier = {c["case"]: c["speedup"] for c in before.get(name, {}).get("cases", [])}
        opinion = {c["case"]: c for c in s.get("second_opinion", {}).get("cases", [])}
        for c in s["cases"]:
            old = earlier.get(c["case"])
            o = opinion.get(c["case"], {})
            was = f"{old:.2f}x" if old else "-"
            gain = f"{c['speedup'] / old:.2f}x" if old else "-"
            second = f"{o['speedup']:.2f}x ({o['gap'] * 100:+.1f}%)" if o.get("speedup") else "-"
            rows.append(f"| {name} | {c['case']} | {recipes} ({s['best']['origin']}) | {c['speedup']:.2f}x "
                        f"| {was} | {gain} | {c.get('pct_of_floor') or '-'} | {second} |")
    return rows


def main() -> None:
    now: dict[str, dict] = {}
    for d in sys.argv[1].split(","):
        now.update(_summaries(Path(d)))
    before: dict[str, dict] = {}
    for d in sys.argv[2:]:
        before.update(_summaries(Path(d)))
    print("\n".join(table(now, before)))


if __name__ == "__main__":
    main()
