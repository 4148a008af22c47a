"""What an optimize run leaves in its directory: best.py, baseline.py, best.diff,
summary.json and report.md."""

from __future__ import annotations

import difflib
import json
import math
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tritonforge.domain.verdict import Verdict
from tritonforge.files import write_whole
from tritonforge.report.launch_parameters import markdown_table, table_cell


def summary(*, problem: str, entry: str, baseline: Verdict, best_verdict: Verdict, best: Any, improved: bool,
            tried: int, rounds: int, stop_reason: str, wall_s: float, statuses: Counter,
            run_dir: Path, launch_parameters: dict[str, Any] | None = None,
            floors_ms: dict[str, float] | None = None, second_opinion: dict[str, Any] | None = None,
            recipes: dict[str, str] | None = None, not_applied: dict[str, dict[str, str]] | None = None,
            recipes_refused: dict[str, str] | None = None) -> dict[str, Any]:
    """The machine-readable result of a run. `best` is the best Candidate; `launch_parameters`
    comes from `report.launch_parameters.launch_parameters`; `floors_ms`: the roofline floor per
    case; `second_opinion`: evaluate.second_opinion's re-timing of the best; `recipes`: the
    rewrite recipes in the best, each with how it can change rounding ("" if it cannot);
    `not_applied`: strategies left out of the run, with why, part by part; `recipes_refused`:
    where the recipes ran, why each of the others left the problem as given unchanged."""
    cases = []
    for base_cv, best_cv in zip(baseline.cases, best_verdict.cases):
        best_t = best_cv.candidate if improved else best_cv.baseline
        up = best_cv.speedup if improved else None
        cases.append({
            "case": base_cv.case,
            "correct": best_cv.status.ok,
            # When the best is a candidate, both times come from its final alternating run.
            "baseline_ms": (best_cv.baseline or base_cv.baseline).median_ms if (best_cv.baseline or base_cv.baseline) else None,
            "best_ms": best_t.median_ms if best_t else None,
            "speedup": up.value if up else 1.0,
            "speedup_ci95": [up.ci_low, up.ci_high] if up else [1.0, 1.0],
            "baseline_spread": _spread(best_cv.baseline or base_cv.baseline),
            "best_spread": _spread(best_t),
            "max_abs_err": best_cv.max_abs_err,
            "max_rel_err": best_cv.max_rel_err,
            # The final timing can disagree with the one the best was chosen on (a microsecond
            # case is noisy): a case it finds slower is shown, never hidden in the mean.
            "slower_than_baseline": bool(up and up.regresses),
        })
        floor = (floors_ms or {}).get(base_cv.case)
        best_ms = cases[-1]["best_ms"]
        cases[-1]["floor_ms"] = floor
        cases[-1]["pct_of_floor"] = round(100 * floor / best_ms, 1) if floor and best_ms else None
    up = best_verdict.speedup if improved else None
    env = best_verdict.environment or baseline.environment
    return {
        "problem": problem,
        "entry": entry,
        "run_dir": str(run_dir),
        "improved": improved,
        "result": _result_line(improved, up, len(cases)),
        "speedup": asdict(up) if up else {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0},
        "best": {"key": best.key, "origin": best.origin, "description": best.description, "params": best.params,
                 "recipes": list(recipes or {}), "rounding": {k: v for k, v in (recipes or {}).items() if v}},
        "cases": cases,
        "slower_cases": [c["case"] for c in cases if c["slower_than_baseline"]],
        "timing": best_verdict.timing_label,
        "device": {k: env.get(k) for k in ("device", "gpu", "sm_count", "capability", "driver", "cuda")},
        "versions": {k: env.get(k) for k in ("python", "torch", "triton", "numpy")},
        "candidates_tried": tried,
        "verdicts": dict(statuses),
        "rounds": rounds,
        "stop_reason": stop_reason,
        "wall_s": round(wall_s, 1),
        "launch_parameters": launch_parameters or {"basis": "", "sites": []},
        "second_opinion": second_opinion,
        "not_applied": not_applied or {},
        "recipes_refused": recipes_refused or {},
    }


def _spread(t: Any) -> float | None:
    return None if t is None or not math.isfinite(t.spread) else round(t.spread, 4)


def _result_line(improved: bool, up: Any, n: int) -> str:
    if not improved or up is None:
        return "No candidate was faster beyond noise; best.py is the baseline unchanged."
    return f"{up.value:.2f}x faster (geometric mean over {n} cases, 95% interval {up.ci_low:.2f}-{up.ci_high:.2f})."


def write_run_files(run_dir: Path, *, baseline_source: str, best_source: str, problem_name: str,
                    summary_data: dict[str, Any], history: list[Any]) -> dict[str, Path]:
    files = {
        "baseline": run_dir / "baseline.py",
        "best": run_dir / "best.py",
        "diff": run_dir / "best.diff",
        "summary": run_dir / "summary.json",
        "report": run_dir / "report.md",
    }
    texts = {
        "baseline": baseline_source,
        "best": best_source,
        "diff": "".join(difflib.unified_diff(
            baseline_source.splitlines(keepends=True), best_source.splitlines(keepends=True),
            fromfile=f"a/{problem_name}", tofile=f"b/{problem_name}")),
        "summary": json.dumps(summary_data, indent=2) + "\n",
        "report": report_markdown(summary_data, history),
    }
    for name, text in texts.items():
        write_whole(files[name], text)  # a run killed here leaves the old file or the new
    return files


# What one GPU sample is, so a reader of a microsecond case knows what it includes.
_HOW_TIMED = ("Each time is the GPU time of one call between CUDA events, L2 flushed before it, in alternating "
              "bursts after untimed calls of the same function; the host's launch work is not counted, the "
              "GPU's launch latency (a few microseconds) is, so ratios of few-microsecond cases lean toward 1.")


def report_markdown(s: dict[str, Any], history: list[Any]) -> str:
    lines = [f"# TritonForge run: {s['problem']} ({s['entry']})", "", f"**{s['result']}**", ""]
    dev = s["device"]
    where = dev.get("gpu") or "CPU (Triton interpreter)"
    lines += [f"Device: {where}; torch {s['versions'].get('torch')}, Triton {s['versions'].get('triton')}. "
              f"Timings: {s['timing']}.", ""]
    if s["timing"] == "GPU":
        lines += [_HOW_TIMED, ""]
    lines += ["| case | baseline ms | best ms | speedup [95% CI] | % of roofline floor | correct |",
              "|---|---:|---:|---:|---:|---|"]
    for c in s["cases"]:
        lo, hi = c["speedup_ci95"]
        pct = f"{c['pct_of_floor']:.0f}%" if c.get("pct_of_floor") else "-"
        lines.append(f"| {c['case']} | {_ms(c['baseline_ms'])} | {_ms(c['best_ms'])} | "
                     f"{c['speedup']:.3f}x [{lo:.3f}, {hi:.3f}] | {pct} | {'yes' if c['correct'] else 'NO'} |")
    if s.get("slower_cases"):
        lines += ["", f"**Slower than the baseline in the final timing on {', '.join(s['slower_cases'])}**: "
                      "the best was chosen on an earlier timing that did not show it.", ""]
    lines += _second_opinion_lines(s.get("second_opinion"))
    best = s["best"]
    lines += ["", f"Best: `{best['key']}` from {best['origin']}: {best['description'] or '-'}.", ""]
    if best.get("recipes"):
        lines += [f"Recipes in the best file: {', '.join(best['recipes'])}."]
        lines += [f"- {name} {how}: a reassociation, judged against the tolerance like every candidate."
                  for name, how in best.get("rounding", {}).items()]
        lines += [""]
    lines += [f"Search: {s['candidates_tried']} candidates in {s['rounds']} rounds, {s['wall_s']} s; "
              f"stopped: {s['stop_reason']}. Verdicts: "
              + ", ".join(f"{k} {v}" for k, v in sorted(s["verdicts"].items())) + ".", ""]
    if history:
        lines += ["| # | candidate | origin | change | verdict | speedup vs baseline |", "|---:|---|---|---|---|---:|"]
        for i, o in enumerate(history, 1):
            up = f"{o.speedup:.3f}x" if o.speedup else "-"
            # A correct candidate's message is why it did not become the best though faster.
            status = f"{o.status} ({table_cell(o.message)})" if o.status == "correct" and o.message else o.status
            lines.append(f"| {i} | `{o.candidate.key}` | {o.candidate.origin} | {o.candidate.description or '-'} | "
                         f"{status} | {up} |")
        lines.append("")
    for strategy, why in (s.get("not_applied") or {}).items():
        parts = "; ".join(f"{name}: {reason}" if name else reason for name, reason in why.items())
        lines += [f"Not run: `{strategy}`, which has nothing for this file ({table_cell(parts)}).", ""]
    if s.get("recipes_refused"):
        parts = "; ".join(f"{name}: {reason}" for name, reason in s["recipes_refused"].items())
        lines += [f"Recipes not applied to the problem as given: {table_cell(parts)}.", ""]
    lines += markdown_table(s.get("launch_parameters"))
    lines += ["Files: `best.py` (drop-in replacement of the problem file), `baseline.py`, `best.diff`, "
              "`summary.json`, `run.sqlite` (every candidate and evaluation; `--resume` continues from it).", ""]
    return "\n".join(lines)


def _second_opinion_lines(opinion: dict[str, Any] | None) -> list[str]:
    if not opinion:
        return []
    if not opinion["available"]:
        return ["", f"Second opinion: none ({opinion['reason']}).", ""]
    lines = ["", f"Second opinion ({opinion['tool']}; gaps over {100 * opinion['tolerance']:.0f}% flagged):", "",
             "| case | claimed | do_bench | timed as | do_bench, plain calls | gap | |",
             "|---|---:|---:|---|---:|---:|---|"]
    for c in opinion["cases"]:
        lines.append(f"| {c['case']} | {' | '.join(opinion_cells(c))} | {'**FLAGGED**' if c['flagged'] else 'agrees'} |")
    return lines + [""]


def opinion_cells(c: dict[str, Any]) -> list[str]:
    """A second opinion's case (CaseOpinion.to_json()) as table cells: claimed, do_bench, how
    do_bench timed it, do_bench's plain calls, the gap."""
    return [f"{c['claimed']:.3f}x" if c.get("claimed") else "-",
            f"{c['speedup']:.3f}x" if c.get("speedup") else c.get("error") or "-",
            c.get("timed") or "plain calls",
            f"{c['plain_speedup']:.3f}x" if c.get("plain_speedup") else "-",
            f"{100 * c['gap']:+.1f}%" if c.get("gap") is not None else "-"]


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"
