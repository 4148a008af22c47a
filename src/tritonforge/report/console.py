"""Rich tables for the terminal: verdicts per case, with the timing label on every time."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tritonforge.domain.verdict import CaseVerdict, Status, Timing, Verdict
from tritonforge.report.launch_parameters import no_launch_found, not_moved

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


def not_moved_text(summary: dict, most: int = 8) -> Text | None:
    """After a run that improved nothing: the launch values the search left alone, and why."""
    if summary["improved"]:
        return None
    section = summary.get("launch_parameters")
    if section is not None and not section.get("sites"):
        why = no_launch_found(section).rstrip(".")
        return Text(f"not moved: {why[0].lower()}{why[1:]}", style="yellow")
    lines = not_moved(section)
    if not lines:
        return None
    more = len(lines) - most
    shown = [f"  {line}" for line in lines[:most]]
    if more > 0:
        shown.append(f"  ... and {more} more (launch_parameters in summary.json)")
    return Text("not moved:\n" + "\n".join(shown), style="yellow")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def profile_tables(r: dict) -> list:
    """Tables for `tritonforge profile`: features, launches, roofline per case, ncu findings."""
    out: list = []
    env = r["device"]
    where = env.get("gpu") or "no GPU (CPU, Triton interpreter)"
    out.append(Text(f"{r['candidate'] or r['problem']} · {where} · compile facts: {r['facts_label']} · "
                    f"ceilings: {r['ceilings']['source']} · timings: {r['timing']}", style="dim"))
    feats = Table(title="kernels (source)", title_justify="left")
    for col in ("kernel", "loads (masked)", "stores", "dots", "reductions", "loops", "constexprs", "pointers"):
        feats.add_column(col)
    for name, f in r["features"].items():
        loads = f.get("loads", [])
        feats.add_row(name, f"{len(loads)} ({sum(1 for x in loads if x.get('masked'))})", str(len(f.get("stores", []))),
                      str(len(f.get("dots", []))), ", ".join(x["op"] for x in f.get("reductions", [])) or "-",
                      ", ".join(f"{x['kind']}{'' if x.get('static') else ' (runtime)'}" for x in f.get("loops", [])) or "-",
                      ", ".join(f.get("constexpr_params", [])) or "-", f.get("summary", {}).get("pointer_style", "-"))
    out.append(feats)
    for c in r["cases"]:
        t = Table(title=f"case {c['case']}: launches", title_justify="left")
        for col in ("kernel", "grid", "warps", "stages", "regs", "spill B", "smem B", "occupancy", "limiter",
                    "waves", "widest load", "tensor core"):
            t.add_column(col, justify="left" if col in ("kernel", "limiter", "tensor core") else "right")
        for row in c["launches"]:
            occ = row.get("occupancy_pct")
            t.add_row(row["kernel"], "x".join(str(g) for g in row["grid"]), str(row["num_warps"]),
                      str(row["num_stages"]), _s(row.get("registers")), _s(row.get("spill_bytes")),
                      _s(row.get("shared_bytes")), f"{occ:.0f}%" if occ is not None else "-",
                      row.get("limiter") or (row.get("error") or "-"), _s(row.get("waves")),
                      f"{row.get('widest_load_bits', 0)} bit" if row.get("widest_load_bits") else "-",
                      ", ".join(f"{k} {v}" for k, v in (row.get("tensor_core") or {}).items()) or "-")
        out.append(t)
        rf, a = c["roofline"], c.get("achieved")
        w = rf["work"]
        line = (f"  must move {w['bytes'] / 1e6:.1f} MB ({w['bytes_source']}), {w['flops'] / 1e9:.2f} GFLOP "
                f"({w['flops_source']}); floor {rf['floor_ms']:.4g} ms, {rf['bound']}-bound "
                f"(memory {rf['memory_ms']:.4g} ms, compute {rf['compute_ms']:.4g} ms)")
        if a:
            line += (f"\n  measured {a['measured_ms']:.4g} ms: {a['gbytes_per_s']:.0f} GB/s, "
                     f"{a['tflops_per_s']:.2f} TFLOP/s, {a['pct_of_floor']:.0f}% of floor")
        else:
            line += "\n  no GPU time: the roofline above is an estimate for the target GPU"
        out.append(Text(line))
        for f in c.get("findings", [])[:3]:
            out.append(Text(f"  static finding: {f['title']} (score {f['score']:.2f})", style="yellow"))
    ncu = r.get("ncu")
    if ncu is not None:
        if not ncu.get("available"):
            out.append(Text(f"Nsight Compute: {ncu.get('reason')}", style="yellow"))
        else:
            out.append(_ncu_table(ncu))
    return out


def _ncu_table(ncu: dict) -> Table:
    t = Table(title=f"Nsight Compute, case {ncu['case']} ({ncu['wall_s']:.0f} s)", title_justify="left")
    for col in ("kernel", "duration us", "SM %", "mem %", "DRAM MB", "occupancy", "main bottleneck", "evidence"):
        t.add_column(col, overflow="fold")
    for k in ncu["kernels"]:
        m, main = k["metrics"], k.get("main") or {}
        dram = (m.get("dram_bytes_read") or 0) + (m.get("dram_bytes_write") or 0)
        ev = ", ".join(f"{n}={_s(v)}" for n, v in list((main.get("evidence") or {}).items())[:4])
        t.add_row(k["kernel"], _s((m.get("duration_ns") or 0) / 1e3), _s(m.get("sm_throughput_pct")),
                  _s(m.get("memory_throughput_pct")), _s(dram / 1e6), _s(m.get("achieved_occupancy_pct")),
                  main.get("title", "-"), ev)
    return t


def _s(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def host_bound_note(c: dict) -> str:
    """Where do_bench's plain calls gave another speedup than the replay: they timed the host's
    launches, which the evaluator does not count (README, "What a time means")."""
    plain, replayed = c.get("plain_speedup"), c.get("speedup")
    if c.get("timed") != "cuda graph replay" or not plain or not replayed or abs(plain / replayed - 1) <= 0.05:
        return ""
    return (f"; plain calls {plain:.3f}x ({c['plain_baseline_ms']:.4g} / {c['plain_candidate_ms']:.4g} ms: "
            f"the host's launches timed)")


def second_opinion_lines(opinion: dict) -> list[tuple[str, str]]:
    """(text, style) lines for a second opinion (SecondOpinion.to_json())."""
    if not opinion.get("available"):
        return [(f"second opinion: none ({opinion.get('reason')})", "dim")]
    out = []
    for c in opinion["cases"]:
        if c.get("error"):
            out.append((f"second opinion {c['case']}: failed: {c['error']}", "red"))
            continue
        claimed = f"{c['claimed']:.3f}x" if c.get("claimed") else "?"
        replay = " graph replay" if c.get("timed") == "cuda graph replay" else ""
        line = (f"second opinion {c['case']}: do_bench{replay} {c['speedup']:.3f}x "
                f"({c['baseline_ms']:.4g} / {c['candidate_ms']:.4g} ms) vs claimed {claimed}")
        if c.get("gap") is not None:
            line += f", gap {100 * c['gap']:+.1f}%"
        line += host_bound_note(c)
        out.append((line + (" FLAGGED: over 5%" if c["flagged"] else ""), "bold red" if c["flagged"] else "dim"))
    return out
