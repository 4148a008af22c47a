"""Turn a corpus session's raw files into a results page.

    python3 benchmarks/record_corpus.py benchmarks/results/2026-12-03-h200-s3 > benchmarks/results/2026-12-03-h200-s3.md

The directory holds what benchmarks/gpu_session.py wrote for the corpus steps: session.json,
logs/, runs/<problem>/{summary.json,report.md,best.diff,run.sqlite}, corpus_ratios.json, and
optionally NOTES.md (words written after the session, shown last). Every number in the tables
is read from those files; nothing is typed in.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_session import added_lines  # noqa: E402  (the session pages share it)


def _summaries(d: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((d / "runs").glob("*/summary.json"))}


def header(d: Path, summaries: dict[str, dict]) -> list[str]:
    s = next(iter(summaries.values()))
    dev, v = s["device"], s["versions"]
    steps = json.loads((d / "session.json").read_text())["steps"]
    rows = [f"GPU {dev['gpu']} ({dev['sm_count']} SMs), driver {dev['driver']}, CUDA {dev['cuda']}; "
            f"{', '.join(f'{k} {x}' for k, x in v.items())}.", "",
            "Made in one device call by `python3 benchmarks/gpu_session.py DIR --minutes M --only STEPS` (the steps, "
            "their commands and times are in session.json; the optimize commands in logs/), then "
            f"`python3 benchmarks/record_corpus.py benchmarks/results/{d.name}`.", "",
            "| step | rc | seconds | command |", "|---|---:|---:|---|"]
    for st in steps:
        cmd = " ".join(st.get("command", [])).replace("|", "\\|")
        rows.append(f"| {st['step']} | {st.get('rc', 'skipped')} | {st.get('seconds', '')} | `{cmd[-140:]}` |")
    return rows


def failures(d: Path) -> list[str]:
    rows = []
    for st in json.loads((d / "session.json").read_text())["steps"]:
        if st.get("rc") not in (0, None):
            lines = [ln for ln in (d / "logs" / f"{st['step']}.log").read_text().splitlines() if ln.strip()]
            last = lines[-1][:400].replace("`", "'")  # the message quotes code; keep the list item whole
            rows.append(f"- `{st['step']}` (rc {st['rc']}): {last}")
    return rows


def optimize_table(d: Path, summaries: dict[str, dict]) -> list[str]:
    rows = ["| problem | case | baseline ms | best ms | speedup [95% CI] | % of floor | candidates | wall s | "
            "stopped | best change |", "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    ups = []
    for name, s in summaries.items():
        ups.append(s["speedup"]["value"])
        diff = added_lines(d / "runs" / name / "best.diff")
        for i, c in enumerate(s["cases"]):
            lo, hi = c["speedup_ci95"]
            first = i == 0
            change = "<br>".join(f"`{x}`" for x in diff[:4]) + (f"<br>(+{len(diff) - 4} lines)" if len(diff) > 4 else "")
            rows.append(f"| {name if first else ''} | {c['case']} | {c['baseline_ms']:.4f} | {c['best_ms']:.4f} | "
                        f"{c['speedup']:.3f}x [{lo:.3f}, {hi:.3f}] | {c.get('pct_of_floor') or ''} | "
                        f"{s['candidates_tried'] if first else ''} | {s['wall_s'] if first else ''} | "
                        f"{s['stop_reason'] if first else ''} | {(change or 'none') if first else ''} |")
    geo = math.exp(sum(map(math.log, ups)) / len(ups))
    rows.append(f"\nGeometric mean of the per-problem speedups (each a geometric mean over its cases): **{geo:.2f}x** "
                f"over {len(ups)} problems (range {min(ups):.2f}x-{max(ups):.2f}x). No LLM was used.")
    return rows


def opinion_table(summaries: dict[str, dict]) -> list[str]:
    rows = ["| problem | case | claimed | do_bench baseline ms | do_bench best ms | do_bench speedup | gap | flagged |",
            "|---|---|---:|---:|---:|---:|---:|---|"]
    for name, s in summaries.items():
        op = s.get("second_opinion") or {}
        for c in op.get("cases", []):
            if c["error"]:
                rows.append(f"| {name} | {c['case']} | | | | | | error: {c['error'][:120]} |")
                continue
            rows.append(f"| {name} | {c['case']} | {c['claimed']:.3f}x | {c['baseline_ms']:.4f} | "
                        f"{c['candidate_ms']:.4f} | {c['speedup']:.3f}x | {c['gap']:+.1%} | "
                        f"{'**yes**' if c['flagged'] else 'no'} |")
    return rows


def ratio_table(d: Path) -> list[str]:
    path = d / "corpus_ratios.json"
    if not path.exists():
        return ["(no corpus_ratios.json)"]
    r = json.loads(path.read_text())
    rows = [f"Copy bandwidth (1 GiB device-to-device copy, do_bench median): {r['copy_bytes_per_s'] / 1e12:.2f} TB/s.",
            "", "| problem | case | baseline ms | best ms | speedup | baseline of copy BW | best of copy BW | "
            "baseline of torch.matmul | best of torch.matmul |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, v in r.items():
        if not isinstance(v, dict):
            continue
        if "error" in v:
            rows.append(f"| {name} | error: {v['error'][:160]} | | | | | | | |")
            continue
        for case, c in v["cases"].items():
            b, s = c["baseline"], c.get("best", {})
            torch_b = f"{b['fraction_of_torch']:.0%}" if "fraction_of_torch" in b else ""
            torch_s = f"{s['fraction_of_torch']:.0%}" if "fraction_of_torch" in s else ""
            rows.append(f"| {name} | {case} | {b['ms']:.4f} | {s.get('ms', float('nan')):.4f} | "
                        f"{c.get('speedup', float('nan')):.3f}x | {b['fraction_of_copy']:.0%} | "
                        f"{s.get('fraction_of_copy', float('nan')):.0%} | {torch_b} | {torch_s} |")
    return rows


def main() -> None:
    d = Path(sys.argv[1])
    summaries = _summaries(d)
    out = [f"# H200 corpus session, {d.name}", "", *header(d, summaries), "",
           "## optimize, per corpus problem", "", *optimize_table(d, summaries), "",
           "## Second opinion at the end of each run (do_bench median, fresh process, same inputs)", "",
           *opinion_table(summaries), "",
           "## Independent re-timing in one process (benchmarks/corpus_ratios.py)", "", *ratio_table(d), ""]
    if failures(d):
        out += ["## Steps that failed", "", *failures(d), ""]
    if (d / "NOTES.md").exists():  # what the numbers alone do not say, written after the session
        out += ["## Notes", "", (d / "NOTES.md").read_text().rstrip(), ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
