"""A case slower than the baseline: what the loop refuses and what the run files show when the
final timing finds one (H200, benchmarks/results/2026-12-03-h200-s3: a 5 us case accepted at
0.931x [0.878, 0.984], timed again at 0.874x)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tritonforge.domain.candidate import Candidate
from tritonforge.domain.verdict import CaseVerdict, Speedup, Status, Timing, Verdict
from tritonforge.report.run_files import report_markdown, summary


def test_a_regression_is_a_wide_interval_below_2pct_or_a_point_estimate_below_5pct():
    assert Speedup(0.931, 0.878, 0.984).regresses  # the microsecond case above: its interval reaches 0.98
    assert Speedup(0.97, 0.95, 0.979).regresses  # the whole interval below 0.98
    assert not Speedup(0.97, 0.90, 1.04).regresses  # within noise, point estimate within 5%
    assert not Speedup(1.2, 1.1, 1.3).regresses


def _verdict(ups: dict[str, Speedup]) -> Verdict:
    t = Timing(1.0, 0.9, 1.1, 50)
    return Verdict("best.py", Status.CORRECT, [CaseVerdict(case, Status.CORRECT, baseline=t, candidate=t, speedup=up)
                                              for case, up in ups.items()])


def test_the_final_timing_of_a_slower_case_is_flagged_in_summary_and_report(tmp_path: Path):
    final = _verdict({"n=98432": Speedup(0.874, 0.827, 0.921), "n=268435456": Speedup(3.417, 3.413, 3.419)})
    base = _verdict({"n=98432": None, "n=268435456": None})
    s = summary(problem="p.py", entry="add", baseline=base, best_verdict=final, best=Candidate("x = 1\n", "launch_params"),
                improved=True, tried=7, rounds=2, stop_reason="budget", wall_s=1.0, statuses=Counter(correct=7),
                run_dir=tmp_path)
    assert s["slower_cases"] == ["n=98432"]
    assert [c["slower_than_baseline"] for c in s["cases"]] == [True, False]
    assert "**Slower than the baseline in the final timing on n=98432**" in report_markdown(s, [])
    same = summary(problem="p.py", entry="add", baseline=base, best_verdict=base, best=Candidate("x = 1\n", "baseline"),
                   improved=False, tried=0, rounds=0, stop_reason="", wall_s=1.0, statuses=Counter(),
                   run_dir=tmp_path)
    assert same["slower_cases"] == [] and "Slower than" not in report_markdown(same, [])


def test_a_gpu_report_says_what_a_sample_counts_and_an_interpreter_report_does_not(tmp_path: Path):
    v = _verdict({"n=98432": Speedup(1.07, 1.05, 1.09)})
    s = summary(problem="p.py", entry="add", baseline=v, best_verdict=v, best=Candidate("x = 1\n", "launch_params"),
                improved=True, tried=1, rounds=1, stop_reason="budget", wall_s=1.0, statuses=Counter(correct=1),
                run_dir=tmp_path)
    assert s["timing"] == "GPU"
    assert "the host's launch work is not counted" in report_markdown(s, [])
    s["timing"] = "CPU (Triton interpreter)"
    assert "launch work" not in report_markdown(s, [])
