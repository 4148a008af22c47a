"""Turn the raw files of one or more gpu_session.py calls into a results page.

    python3 benchmarks/record_session.py benchmarks/results/2026-12-02-h200-s2 > benchmarks/results/2026-12-02-h200-s2.md

Every section is made from the files that exist in the directory (logs/, runs/<name>/,
session-*.json, ratios.json, matmul_probe.json, adversarial.json); nothing is typed in.
(benchmarks/record.py made the first session's page, whose layout differed.)
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

EXAMPLES = ["vector_add", "matmul", "softmax", "rmsnorm", "silu_mul", "col_sum"]
BOTTLENECKS = {"mem_peak": "memory-bound near peak", "mem_strided": "memory-bound, uncoalesced (strided)",
               "occupancy_regs": "occupancy-limited by registers", "spills": "register spills",
               "tiny_grid": "launch-bound tiny grid", "matmul_tc": "tensor-core bound"}


def log_json(path: Path) -> dict:
    text = path.read_text()
    return json.loads(text[text.index("\n{") + 1:])


def added_lines(diff: Path) -> list[str]:
    """The lines a run's best.diff adds, stripped: its best change in a table cell."""
    return [ln[1:].strip() for ln in diff.read_text().splitlines() if ln.startswith("+") and not ln.startswith("+++")]


def summary(d: Path, name: str) -> dict | None:
    path = d / "runs" / name / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


def header(d: Path) -> list[str]:
    s = next(filter(None, (summary(d, ex) for ex in EXAMPLES)))
    dev, v = s["device"], s["versions"]
    steps = [(f.stem, st) for f in sorted(d.glob("session-*.json")) for st in json.loads(f.read_text())["steps"]]
    rows = [f"GPU {dev['gpu']} ({dev['sm_count']} SMs), driver {dev['driver']}, CUDA {dev['cuda']}; "
            f"{', '.join(f'{k} {x}' for k, x in v.items())}; Nsight Compute 2025.3.1.", "",
            "Made by `python3 benchmarks/gpu_session.py DIR --only ...` in several device calls (the steps, their "
            "commands and times are in the session-*.json files), then `python3 benchmarks/record_session.py "
            f"benchmarks/results/{d.name}`. Where a step ran in two calls, the tables use the later one; the earlier "
            "files carry a `-call1` suffix (runs-call1/, ratios-call1.json).", "",
            "| call | step | rc | seconds |", "|---|---|---:|---:|"]
    rows += [f"| {call} | {st['step']} | {st.get('rc', 'skipped')} | {st.get('seconds', '')} |" for call, st in steps]
    return rows


def optimize_table(d: Path) -> list[str]:
    rows = ["| example | case | baseline ms | best ms | speedup [95% CI] | candidates | wall s | stopped | best change |",
            "|---|---|---:|---:|---:|---:|---:|---|---|"]
    ups = []
    for ex in EXAMPLES:
        s = summary(d, ex)
        if s is None:
            continue
        ups.append(s["speedup"]["value"])
        diff = added_lines(d / "runs" / ex / "best.diff")
        for i, c in enumerate(s["cases"]):
            lo, hi = c["speedup_ci95"]
            first = i == 0
            rows.append(f"| {ex if first else ''} | {c['case']} | {c['baseline_ms']:.4f} | {c['best_ms']:.4f} | "
                        f"{c['speedup']:.3f}x [{lo:.3f}, {hi:.3f}] | {s['candidates_tried'] if first else ''} | "
                        f"{s['wall_s'] if first else ''} | {s['stop_reason'] if first else ''} | "
                        f"{'<br>'.join(f'`{x}`' for x in diff) if first else ''} |")
    geo = math.exp(sum(map(math.log, ups)) / len(ups))
    slowest = max(summary(d, ex)["wall_s"] for ex in EXAMPLES if summary(d, ex))
    rows.append(f"\nGeometric mean of the per-example speedups: **{geo:.2f}x** over {len(ups)} examples "
                f"(range {min(ups):.2f}x-{max(ups):.2f}x); the slowest run took {slowest:.0f} s of wall time. "
                "No LLM was used.")
    return rows


def ratio_lines(d: Path) -> list[str]:
    r = json.loads((d / "ratios.json").read_text())
    c, vb, vbest = r["copy"], r["vector_add_baseline"], r["vector_add_best"]
    mb, mbest, tm = r["matmul_baseline"], r["matmul_best"], r["torch_matmul"]
    return [
        f"- Device copy (1 GiB fp32, bytes read + written): {c['bytes_per_s'] / 1e12:.2f} TB/s ({c['ms']:.4f} ms).",
        f"- vector_add, n = 2^27 fp32: baseline {vb['bytes_per_s'] / 1e12:.2f} TB/s = "
        f"{100 * vb['fraction_of_copy']:.0f}% of copy; best {vbest['bytes_per_s'] / 1e12:.2f} TB/s = "
        f"**{100 * vbest['fraction_of_copy']:.0f}% of copy** (target >= 85%).",
        f"- matmul 8192^3 fp16: torch.matmul {tm['tflops']:.0f} TFLOP/s ({tm['ms']:.3f} ms); baseline "
        f"{mb['tflops']:.0f} TFLOP/s = {100 * mb['fraction_of_torch']:.0f}%; best {mbest['tflops']:.0f} TFLOP/s "
        f"({mbest['ms']:.3f} ms) = **{100 * mbest['fraction_of_torch']:.0f}% of torch.matmul** (target >= 70%).",
    ]


def probe_table(d: Path) -> list[str]:
    p = json.loads((d / "matmul_probe.json").read_text())
    rows = [f"examples/matmul.py's own kernel, unchanged, at 8192^3 fp16 (triton.testing.do_bench median); "
            f"torch.matmul {p['torch_tflops']:.0f} TFLOP/s in the same process.", "",
            "| BLOCK_M x BLOCK_N x BLOCK_K, warps, stages | ms | TFLOP/s | of torch.matmul |", "|---|---:|---:|---:|"]
    for c in p["configs"]:
        bm, bn, bk, w, s = c["config"]
        if "error" in c:
            rows.append(f"| {bm}x{bn}x{bk}, {w}, {s} | {c['error']} | | |")
        else:
            rows.append(f"| {bm}x{bn}x{bk}, {w}, {s} | {c['ms']:.3f} | {c['tflops']:.0f} | "
                        f"{100 * c['fraction_of_torch']:.0f}% |")
    return rows


def ncu_table(d: Path) -> list[str]:
    rows = ["| kernel (benchmarks/bottlenecks/) | built to be | main finding | score | key evidence | ncu wall s |",
            "|---|---|---|---:|---|---:|"]
    for k, expected in BOTTLENECKS.items():
        j = log_json(d / "logs" / f"ncu_{k}.log")["ncu"]
        for kern in j["kernels"]:
            m = kern["main"] or {}
            ev = ", ".join(f"{a}={b:.3g}" if isinstance(b, float) else f"{a}={b}"
                           for a, b in list((m.get("evidence") or {}).items())[:4])
            rows.append(f"| {k} | {expected} | {m.get('kind', '-')} | {m.get('score', 0):.2f} | {ev} | "
                        f"{j['wall_s']:.1f} |")
    return rows


def floor_table(d: Path) -> list[str]:
    rows = ["| example | case | floor ms | bound | FLOPs | baseline ms | baseline % of floor | best ms | "
            "best % of floor |", "|---|---|---:|---|---|---:|---:|---:|---:|"]
    for ex in EXAMPLES:
        log, s = d / "logs" / f"profile_{ex}.log", summary(d, ex)
        if not log.exists() or s is None:
            continue
        cases = {c["case"]: c for c in s["cases"]}
        for c in log_json(log)["cases"]:
            f, got = c["roofline"]["floor_ms"], cases.get(c["case"])
            if got is None:
                continue
            b, t = got["baseline_ms"], got["best_ms"]
            rows.append(f"| {ex} | {c['case']} | {f:.4f} | {c['roofline']['bound']} | "
                        f"{c['roofline']['work']['flops_source']} | {b:.4f} | {100 * f / b:.0f}% | {t:.4f} | "
                        f"{100 * f / t:.0f}% |")
    return rows


def adversarial_table(d: Path, name: str = "adversarial.json") -> list[str]:
    data = json.loads((d / name).read_text())
    results = data["results"]
    held = sum(r["holds"] for r in results)
    rows = [f"{held} of {len(results)} rows hold on `{data['device']}` ({data['seconds']:.0f} s). 'good after': the "
            "problem file itself, judged right after the row by the same evaluator, was still correct.", "",
            "| row | kind | expected | got | holds | good after | s | message |", "|---|---|---|---|---|---|---:|---|"]
    for r in results:
        msg = (r.get("message") or "").replace("|", "\\|").replace("\n", " ")[:150]
        rows.append(f"| {r['row']} | {r['kind']} | {r['expected']} | {r['got']} | {'yes' if r['holds'] else 'NO'} | "
                    f"{'yes' if r['good_after'] else 'NO'} | {r['seconds']:.2f} | {msg} |")
    return rows


def tail(d: Path, name: str, n: int = 3) -> list[str]:
    lines = (d / "logs" / f"{name}.log").read_text().strip().splitlines()
    return ["```", *lines[-n:], "```"]


SECTIONS = [
    ("optimize, per example, default budget (24 candidates, 2.5 minutes)", "runs", optimize_table),
    ("The ratio claims (benchmarks/bench_ratios.py, one process)", "ratios.json", ratio_lines),
    ("What launch parameters alone allow on matmul (benchmarks/matmul_probe.py)", "matmul_probe.json", probe_table),
    ("Nsight Compute diagnosis of kernels built to show one bottleneck", "logs/ncu_mem_peak.log", ncu_table),
    ("Roofline: % of floor, baseline and best", "logs/profile_matmul.log", floor_table),
    ("Adversarial suite on the GPU (python -m tests.adversarial --device cuda)", "adversarial.json",
     adversarial_table),
    ("Adversarial suite in Triton's interpreter (this CPU machine, Triton 3.9.0; CI runs the same rows)",
     "adversarial-cpu.json", lambda d: adversarial_table(d, "adversarial-cpu.json")),
    ("GPU tests (pytest -m gpu)", "logs/gpu_tests.log", lambda d: tail(d, "gpu_tests")),
    ("optimize --ncu (softmax, budget 12)", "logs/optimize_ncu_softmax.log",
     lambda d: tail(d, "optimize_ncu_softmax", 12)),
]


def main() -> None:
    d = Path(sys.argv[1])
    out = [f"# H200 session, {d.name}", "", *header(d), ""]
    for title, needs, make in SECTIONS:
        if (d / needs).exists():
            out += [f"## {title}", "", *make(d), ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
