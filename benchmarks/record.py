"""Turn one GPU session's raw files into the markdown tables of benchmarks/results/.

    python3 benchmarks/record.py benchmarks/results/2026-12-02-h200 > benchmarks/results/2026-12-02-h200.md

The directory holds what benchmarks/gpu_session.py (and the profile loop) wrote: logs/,
runs/<example>/summary.json, profiles/profile_<example>.json, ratios.json, session.json.
Every number below is read from those files.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

EXAMPLES = ["vector_add", "matmul", "softmax", "rmsnorm", "silu_mul", "col_sum"]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_session import added_lines, log_json, ncu_table  # noqa: E402  (the later sessions' page shares these)


def optimize_table(d: Path) -> list[str]:
    rows = ["| example | case | baseline ms | best ms | speedup [95% CI] | candidates | wall s | stopped | best change (diff) |",
            "|---|---|---:|---:|---:|---:|---:|---|---|"]
    ups = []
    for ex in EXAMPLES:
        s = json.loads((d / "runs" / ex / "summary.json").read_text())
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
    rows.append(f"\nGeometric mean of the per-example speedups (each itself a geometric mean over its cases): "
                f"**{geo:.2f}x**; range {min(ups):.2f}x-{max(ups):.2f}x. No LLM was used.")
    return rows


def check_table(d: Path) -> list[str]:
    rows = ["| candidate | run | case | baseline ms | candidate ms | speedup [95% CI] |", "|---|---:|---|---:|---:|---:|"]
    for ex in ("vector_add", "matmul"):
        values = []
        for run in (1, 2):
            v = log_json(d / "logs" / f"check_{ex}_{run}.log")["verdict"]
            values.append(v["speedup"]["value"])
            for c in v["cases"]:
                u = c["speedup"]
                rows.append(f"| {ex}/best.py ({v['status']}) | {run} | {c['case']} | {c['baseline']['median_ms']:.4f} | "
                            f"{c['candidate']['median_ms']:.4f} | {u['value']:.4f}x [{u['ci_low']:.4f}, {u['ci_high']:.4f}] |")
        rows.append(f"| {ex}: geometric-mean speedups {values[0]:.4f}x and {values[1]:.4f}x | | | | | "
                    f"differ by {100 * abs(values[0] - values[1]) / values[0]:.2f}% |")
    return rows


def ratio_lines(d: Path) -> list[str]:
    r = json.loads((d / "ratios.json").read_text())
    c, vb, vbest = r["copy"], r["vector_add_baseline"], r["vector_add_best"]
    mb, mbest, tm = r["matmul_baseline"], r["matmul_best"], r["torch_matmul"]
    return [
        f"- Device copy (1 GiB fp32, bytes read + written): {c['bytes_per_s'] / 1e12:.2f} TB/s ({c['ms']:.4f} ms).",
        f"- vector_add, n = 2^27 fp32 (3 x 4 bytes per element): baseline {vb['bytes_per_s'] / 1e12:.2f} TB/s "
        f"= {100 * vb['fraction_of_copy']:.0f}% of copy; best {vbest['bytes_per_s'] / 1e12:.2f} TB/s = "
        f"**{100 * vbest['fraction_of_copy']:.0f}% of copy** (target >= 85%).",
        f"- matmul 8192^3 fp16: torch.matmul {tm['tflops']:.0f} TFLOP/s ({tm['ms']:.3f} ms); baseline "
        f"{mb['tflops']:.0f} TFLOP/s = {100 * mb['fraction_of_torch']:.0f}%; best {mbest['tflops']:.0f} TFLOP/s = "
        f"**{100 * mbest['fraction_of_torch']:.0f}% of torch.matmul** (target >= 70%: not met).",
    ]


def floor_table(d: Path) -> list[str]:
    rows = ["| example | case | floor ms | bound | FLOPs | baseline ms | baseline % of floor | best ms | best % of floor |",
            "|---|---|---:|---|---|---:|---:|---:|---:|"]
    for ex in EXAMPLES:
        s = json.loads((d / "runs" / ex / "summary.json").read_text())
        best = {c["case"]: c["best_ms"] for c in s["cases"]}
        if ex == "vector_add":  # profiled as best.py in the session: its floors are the problem's
            prof = log_json(d / "logs" / "profile_vector_add.log")
            base = {c["case"]: c["baseline_ms"] for c in s["cases"]}
        else:
            prof = json.loads((d / "profiles" / f"profile_{ex}.json").read_text())
            base = {c["case"]: (c["achieved"] or {}).get("measured_ms") for c in prof["cases"]}
        for c in prof["cases"]:
            f = c["roofline"]["floor_ms"]
            src = c["roofline"]["work"]["flops_source"]
            src = "not counted" if src.startswith("not counted") else src
            b, t = base.get(c["case"]), best.get(c["case"])
            rows.append(f"| {ex} | {c['case']} | {f:.4f} | {c['roofline']['bound']} | {src} | {b:.4f} | "
                        f"{100 * f / b:.0f}% | {t:.4f} | {100 * f / t:.0f}% |")
    return rows


def ceilings_lines(d: Path) -> list[str]:
    c = json.loads((d / "profiles" / "profile_matmul.json").read_text())["ceilings"]
    m = c["matmul_flops_per_s"]
    return [f"- Copy bandwidth {c['copy_bytes_per_s'] / 1e12:.2f} TB/s (4 GiB moved); dense matmul 8192^3 through "
            f"torch: fp16 {m['fp16'] / 1e12:.0f}, bf16 {m['bf16'] / 1e12:.0f}, tf32 {m['tf32'] / 1e12:.0f}, "
            f"fp32 {m['fp32'] / 1e12:.0f} TFLOP/s ({c['source']}, {c['measured_at']}). The device notes say about "
            f"4.3 TB/s and 790 TFLOP/s bf16. CUDA-core fp32 rate: datasheet 67 TFLOP/s (labelled)."]


def main() -> None:
    d = Path(sys.argv[1])
    session = json.loads((d / "session.json").read_text())
    env = json.loads((d / "profiles" / "profile_matmul.json").read_text())["device"]
    out = [f"# H200 session, {session['date'][:10]}", "",
           f"GPU {env['gpu']} ({env['sm_count']} SMs), driver {env['driver']}, CUDA {env['cuda']}; Python "
           f"{env['python']}, torch {env['torch']}, Triton {env['triton']}, numpy {env['numpy']}; Nsight Compute "
           "2025.3.1. Commands: `python3 benchmarks/gpu_session.py $OUT/s --deadline 555` (every step's command and "
           "time are in session.json), then `python3 -m tritonforge profile examples/X.py --json` for the five "
           "examples whose profile did not fit in that call. Raw files: `2026-12-02-h200/`. Tables made by "
           "`python3 benchmarks/record.py benchmarks/results/2026-12-02-h200`.", "",
           "## optimize, per example (launch-parameter search only)", "",
           "vector_add and matmul with the default budget (24 candidates) and `--minutes 1.25` / `2.0`; the four "
           "others with `--budget 10 --minutes 0.75` to fit the session's device time.", "",
           *optimize_table(d), "", "## The ratio claims (benchmarks/bench_ratios.py, one process)", "",
           *ratio_lines(d), "", "## check, the same candidate twice", "", *check_table(d), "",
           "## Ceilings", "", *ceilings_lines(d), "", "## Roofline: % of floor, baseline and best", "",
           "Floor = max(bytes / copy bandwidth, FLOPs / matching rate), bytes = inputs read once + outputs "
           "written once. FLOPs 'not counted': Triton 3.6's interpreter failed on runtime loop bounds under the "
           "image's numpy 2.5, so those floors rest on bytes alone (these kernels are memory-bound; matmul "
           "declares FLOPS).", "", *floor_table(d), "",
           "## Nsight Compute diagnosis of kernels built to show one bottleneck", "", *ncu_table(d), ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
