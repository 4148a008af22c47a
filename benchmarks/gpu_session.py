"""One whole GPU session's work, in priority order, inside a deadline.

    python3 benchmarks/gpu_session.py OUTDIR [--deadline SECONDS] [--only STEP,PREFIX*,...] [--minutes M]
                                             [--pack FILE] [--list]

Each step is a command whose output goes to OUTDIR/logs/<step>.log; a step that would not
finish before the deadline is skipped and says so. OUTDIR/session.json lists every step
(command, return code, seconds) and OUTDIR/runs.tgz (or FILE) holds the run directories'
summaries, reports, diffs and run stores (no copies of the example or candidate sources);
both are rewritten after every step, so a machine taken back mid-session still returns
what was finished.
Nothing here judges results: benchmarks/record.py turns these files into the tables in
benchmarks/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TF = [PY, "-m", "tritonforge"]
EXAMPLES = ["vector_add", "matmul", "softmax", "rmsnorm", "silu_mul", "col_sum"]
CORPUS = sorted(p.stem for p in (ROOT / "benchmarks" / "corpus").glob("*.py"))
# Where tile_order, persistent_grid and split_k were (or should be) the best.
LAUNCH_ONLY = ["examples/matmul.py", "benchmarks/corpus/scale_shift_module.py", "examples/col_sum.py"]
# Styles reached for the first time in the interpreter (probe rounds 20 and 22).
STYLES = ["mapping_subclass_cfg", "globals_get_block", "module_getattr_dtype", "post_init_dataclass",
          "closure_launcher_factory", "launcher_two_callers", "mapping_spread_stages", "flagattn_capability_config",
          "autotune_early_prune", "softmax_param_num_stages"]
# Work splits the grid reads too, moved for the first time in session 25 (probe round 24).
SPLITS = ["split_rows_literal_grid", "split_rows_meta_grid", "persistent_programs_per_sm"]
BOTTLENECKS = ["mem_peak", "mem_strided", "occupancy_regs", "spills", "tiny_grid", "matmul_tc"]


def steps(out: Path, minutes: str | None = None) -> list[tuple[str, list[str], float]]:
    """(name, command, expected seconds), most important first; `minutes` caps each optimize
    (default: the tool's default budget)."""
    runs = out / "runs"
    cap = ["--minutes", minutes] if minutes else []
    run_s = float(minutes) * 60 + 25 if minutes else 150  # the budget, then baseline and second opinion
    s: list[tuple[str, list[str], float]] = [
        ("env", ["bash", "-c", "nvidia-smi; python3 -c 'import torch, triton, numpy; "
                 "print(torch.__version__, triton.__version__, numpy.__version__)'; ncu --version | tail -1"], 5),
        ("matmul_probe", [PY, "benchmarks/matmul_probe.py", str(out / "matmul_probe.json")], 40),
        # What a recipe could still add above the matmul example's best on Hopper (issue 13, s22).
        ("matmul_variants", [PY, "benchmarks/matmul_variants.py", str(out / "matmul_variants.json")], 90),
        # Why the evaluator's and do_bench's speedups differed (issue 12): four pairs, protocol by protocol.
        ("timing_protocol", [PY, "benchmarks/timing_protocol.py", str(out / "timing_protocol.json"),
                             "--seconds", "200"], 230),
        # The 4096^3 matmul alone, with the second opinion's two ways and the clock in each (s9).
        ("timing_protocol_matmul", [PY, "benchmarks/timing_protocol.py", str(out / "timing_protocol_matmul.json"),
                                    "--seconds", "240", "--only", "matmul_4096"], 270),
        # The matmul example's claim against do_bench in three fresh processes in a row: its
        # 4096^3 best is at the power limit and its time moved from process to process (s10).
        ("agreement_matmul_x3", ["bash", "-c", f"for i in 1 2 3; do {PY} benchmarks/agreement.py "
                                 f"{out}/agreement_matmul_$i.json --only matmul; done"], 130),
        # Where each timed call's inputs and outputs live: the fused chain's small case (issue 12).
        ("fresh_inputs", [PY, "benchmarks/fresh_inputs.py", str(out / "fresh_inputs.json")], 150),
        # How a two-pass row log-softmax reaches copy bandwidth on 256 KB rows (session 10).
        ("log_softmax_probe", [PY, "benchmarks/log_softmax_probe.py", str(out / "log_softmax_probe.json")], 120),
        ("fresh_inputs_two_stage", [PY, "benchmarks/fresh_inputs.py", str(out / "fresh_inputs_two_stage.json"),
                                    "two_stage"], 150),
        # Which launches and row-loop splits bring col_sum's large case to its floor (s12).
        ("col_sum_probe", [PY, "benchmarks/col_sum_probe.py", str(out / "col_sum_probe.json"), "--seconds", "40"], 60),
    ]
    # The evaluator's claims against do_bench on the newest recorded best of every example and
    # corpus problem (issue 12), in parts that fit a call; all add to one agreement.json.
    for part, names in agreement_parts():
        s.append((f"agreement_{part}", [PY, "benchmarks/agreement.py", str(out / "agreement.json"),
                                        "--only", ",".join(names)], 45 * len(names)))
    # The real-world-style corpus first (issue 11), then the examples, each with the default budget.
    for name in CORPUS:
        s.append((f"corpus_{name}", [*TF, "optimize", f"benchmarks/corpus/{name}.py", "--out", str(runs / name), *cap],
                  run_s))
    # Styles reached for the first time in the interpreter (issue 11), two minutes each on the GPU.
    for name in STYLES:
        s.append((f"style_{name}", [*TF, "optimize", f"tests/fixtures/problems/styles/{name}.py", "--minutes", "2",
                                    "--out", str(runs / name)], 150))
    for name in SPLITS:
        s.append((f"split_{name.removeprefix('split_')}", [*TF, "optimize", f"tests/fixtures/problems/styles/{name}.py", "--minutes", "1.5",
                                    "--out", str(runs / name)], 120))
    s.append(("corpus_ratios", [PY, "benchmarks/corpus_ratios.py", str(runs), str(out / "corpus_ratios.json")], 90))
    # The newest recorded best of every corpus problem against copy bandwidth and torch.matmul (issue 11).
    s.append(("corpus_ratios_recorded", [PY, "benchmarks/corpus_ratios.py", "--recorded",
                                         str(out / "corpus_ratios.json")], 180))
    # The default budget (24 candidates, 2.5 minutes): the "under 3 minutes" claim.
    for ex in EXAMPLES:
        s.append((f"optimize_{ex}", [*TF, "optimize", f"examples/{ex}.py", "--out", str(runs / ex), *cap], run_s))
        if ex == "matmul":
            s.append(("bench_ratios", [PY, "benchmarks/bench_ratios.py", str(runs), str(out / "ratios.json")], 25))
    # The same runs with launch values alone, where a recipe was the best (issue 13's table:
    # each recipe's gain over the launch-only best of the same session).
    for problem in LAUNCH_ONLY:
        name = Path(problem).stem
        s.append((f"launch_only_{name}", [*TF, "optimize", problem, "--strategy", "launch_params",
                                          "--out", str(out / "launch_only" / name), *cap], run_s))
    for k in BOTTLENECKS:
        s.append((f"ncu_{k}", [*TF, "profile", f"benchmarks/bottlenecks/{k}.py", "--ncu", "--json"], 40))
    s.append(("optimize_ncu_softmax", [*TF, "optimize", "examples/softmax.py", "--ncu", "--budget", "12",
                                       "--out", str(runs / "softmax_ncu")], 150))
    for ex in EXAMPLES:
        s.append((f"profile_{ex}", [*TF, "profile", f"examples/{ex}.py", str(runs / ex / "best.py"), "--json"], 40))
    s += [
        # The GPU tests of the second opinion and of reach alone, for sessions short of time.
        ("gpu_tests_quick", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu",
                             "tests/evaluate/test_second_opinion.py", "tests/search/test_reach.py"], 90),
        # The whole GPU suite, in two halves: in one step it ran 447 s and was cut by the call (s25).
        ("gpu_tests", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/adversarial",
                       "tests/analysis", "tests/evaluate", "tests/profiling"], 330),
        ("gpu_tests_rest", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/search",
                            "tests/strategies", "tests/worker"], 240),
        ("adversarial", [PY, "-m", "tests.adversarial", "--device", "cuda", "--json", str(out / "adversarial.json")],
         240),
    ]
    return s


def agreement_parts() -> list[tuple[str, list[str]]]:
    """The examples, then the corpus in parts of six problems."""
    return [("examples", EXAMPLES)] + [(f"corpus_{i // 6 + 1}", CORPUS[i:i + 6]) for i in range(0, len(CORPUS), 6)]


def pack(out: Path, to: Path) -> None:
    """Everything worth keeping, in one archive, replaced whole (never left half written)."""
    part = to.with_name(to.name + ".part")
    with tarfile.open(part, "w:gz") as tar:
        for path in sorted([*(out / "runs").glob("*"), *(out / "launch_only").glob("*")]):
            where = path.name if path.parent.name == "runs" else f"launch_only/{path.name}"
            # best.py is the example with best.diff applied: the diff is kept, not the copy.
            for f in ("summary.json", "report.md", "best.diff", "run.sqlite"):
                if (path / f).exists():
                    tar.add(path / f, arcname=f"{where}/{f}")
        tar.add(out / "logs", arcname="logs")
        for extra in ("session.json", "corpus_ratios.json", "ratios.json", "matmul_probe.json", "adversarial.json",
                      "timing_protocol.json", "timing_protocol_matmul.json", "agreement.json", "fresh_inputs.json",
                      "fresh_inputs_two_stage.json", "log_softmax_probe.json", "agreement_matmul_1.json",
                      "agreement_matmul_2.json", "agreement_matmul_3.json", "col_sum_probe.json", "matmul_variants.json"):
            if (out / extra).exists():
                tar.add(out / extra, arcname=extra)
    part.replace(to)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", type=Path, help="where logs, session.json and the pack go")
    parser.add_argument("--deadline", type=float, default=570.0, help="seconds for all steps (default 570)")
    parser.add_argument("--only", type=lambda v: v.split(","), help="STEP,PREFIX*,...: these steps alone")
    parser.add_argument("--minutes", help="cap each optimize run (default: the tool's budget)")
    parser.add_argument("--pack", type=Path, help="the archive to write (default OUTDIR/runs.tgz)")
    parser.add_argument("--list", action="store_true", help="print the steps with their expected seconds, run none")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    out, deadline, only, minutes = args.outdir, args.deadline, args.only, args.minutes
    if args.list:
        for name, _, expect in steps(out, minutes):
            print(f"{name}\t{expect:.0f} s")
        return
    (out / "logs").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1", "COLUMNS": "160"}
    t0 = time.monotonic()
    # A second invocation into the same OUTDIR (a later part of the session) adds to its record.
    record = json.loads((out / "session.json").read_text())["steps"] if (out / "session.json").exists() else []
    done_before = len(record)
    pack_to = args.pack or out / "runs.tgz"
    for name, cmd, expect in steps(out, minutes):
        if only and not any(name == o or (o.endswith("*") and name.startswith(o[:-1])) for o in only):
            continue
        left = deadline - (time.monotonic() - t0)
        if left < expect:
            record.append({"step": name, "skipped": f"{left:.0f} s left, expected {expect:.0f} s"})
            print(f"SKIP {name}: {left:.0f} s left", flush=True)
            continue
        start = time.monotonic()
        log = out / "logs" / f"{name}.log"
        with open(log, "w") as f:
            f.write(f"$ {' '.join(cmd)}\n")
            f.flush()
            try:
                rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    timeout=max(10.0, left - 5)).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        secs = time.monotonic() - start
        record.append({"step": name, "command": cmd, "rc": rc, "seconds": round(secs, 1)})
        print(f"{name}: rc={rc} {secs:.0f} s", flush=True)
        (out / "session.json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M:%S"),
                                                      "steps": record}, indent=1))
        pack(out, pack_to)
    if not any(r.get("command") for r in record[done_before:]):
        pack(out, pack_to)  # no step ran: files written into OUTDIR by hand since still come back
    print(f"total {time.monotonic() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
