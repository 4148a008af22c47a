"""Rich tables for the terminal: verdicts per case, with the timing label on every time."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tritonforge.evaluate.verdict import CaseVerdict, Status, Timing, Verdict

_STYLE = {Status.CORRECT: "green", Status.WRONG: "red", Status.INCOMPATIBLE: "yellow"}


def status_text(status: Status) -> Text:
    return Text(status.value, style=_STYLE.get(status, "bold red"))


def fmt_ms(t: Timing | None) -> str:
    if t is None:
        return "-"
    return f"{t.median_ms:.4g} ±{50 * t.spread:.1f}%"


def fmt_err(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def verdict_table(verdict: Verdict, title: str) -> Table:
    """Per-case table; compares with the baseline, or with the reference for a baseline check."""
    baseline_only = verdict.candidate == "baseline"
    unit = "ms" if verdict.timing_label == "GPU" else "ms, interp."
    caption = "times: median ±half the 20-80th percentile spread"
    if verdict.timing_label != "GPU":
        caption += f"; timings: {verdict.timing_label}"
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    table.add_column("case")
    table.add_column("verdict")
    table.add_column("max abs err", justify="right")
    table.add_column("max rel err", justify="right")
    if baseline_only:
        table.add_column(f"time {unit}", justify="right")
        table.add_column(f"reference {unit}", justify="right")
        table.add_column("vs reference", justify="right")
    else:
        table.add_column(f"baseline {unit}", justify="right")
        table.add_column(f"candidate {unit}", justify="right")
        table.add_column("speedup [95% CI]", justify="right")
    table.add_column("note", overflow="fold", max_width=60)
    for cv in verdict.cases:
        table.add_row(cv.case, status_text(cv.status), fmt_err(cv.max_abs_err), fmt_err(cv.max_rel_err),
                      *_time_cells(cv, baseline_only), cv.message)
    return table


def _time_cells(cv: CaseVerdict, baseline_only: bool) -> list[str]:
    if baseline_only:
        vs = "-"
        if cv.baseline and cv.reference:
            vs = f"{cv.reference.median_ms / cv.baseline.median_ms:.3f}x"
        return [fmt_ms(cv.baseline), fmt_ms(cv.reference), vs]
    up = str(cv.speedup) if cv.speedup else "-"
    return [fmt_ms(cv.baseline), fmt_ms(cv.candidate), up]


def verdict_summary(verdict: Verdict) -> Text:
    n = len(verdict.cases)
    if not verdict.correct:
        return Text(f"{verdict.status.value}: {verdict.message}", style="bold red")
    up = verdict.speedup
    if verdict.candidate == "baseline" or up is None:
        return Text(f"correct on all {n} cases", style="green")
    judged = "faster beyond noise" if verdict.faster else (
        "slower beyond noise" if up.slower else "not faster beyond noise")
    label = "" if verdict.timing_label == "GPU" else f" (timings: {verdict.timing_label})"
    return Text(f"correct on all {n} cases; {judged}: {up} geometric mean{label}",
                style="green" if verdict.faster else "yellow")


def summary_table(summary: dict) -> Table:
    """The final table of an optimize run."""
    label = summary["timing"]
    unit = "ms" if label == "GPU" else "ms, interp."
    table = Table(title=f"{summary['problem']}: baseline vs best", title_justify="left",
                  caption=None if label == "GPU" else f"timings: {label}", caption_justify="left")
    for col in ("case", f"baseline {unit}", f"best {unit}", "speedup [95% CI]", "correct"):
        table.add_column(col, justify="left" if col in ("case", "correct") else "right")
    for c in summary["cases"]:
        lo, hi = c["speedup_ci95"]
        table.add_row(c["case"], _num(c["baseline_ms"]), _num(c["best_ms"]),
                      f"{c['speedup']:.3f}x [{lo:.3f}, {hi:.3f}]", "yes" if c["correct"] else "NO")
    return table


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"
