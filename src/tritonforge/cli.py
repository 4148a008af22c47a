"""The `tritonforge` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from tritonforge.problem.spec import ProblemError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Profiling-guided, verified optimization of Triton GPU kernels.")
console = Console(stderr=False)
err = Console(stderr=True)

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


@app.callback()
def _root() -> None:
    """Profiling-guided, verified optimization of Triton GPU kernels."""

DeviceOpt = typer.Option("auto", "--device", help="cuda, cpu (Triton's interpreter) or auto.")
EntryOpt = typer.Option(None, "--entry", help="Name of the function under optimization (overrides ENTRY).")
InputsOpt = typer.Option(None, "--inputs", help='Zero-config case, e.g. "x=float16[4096,8192]"; repeat for more cases.')
ShapesOpt = typer.Option("auto", "--shapes", help="full (SHAPES), test (TEST_SHAPES), or auto: full on a GPU.")


def _device(choice: str) -> str:
    from tritonforge.evaluate.evaluator import default_device

    if choice not in ("auto", "cuda", "cpu"):
        raise typer.BadParameter("--device must be auto, cuda or cpu")
    if choice == "cuda":
        import torch

        if not torch.cuda.is_available():
            _unusable("--device cuda: no CUDA GPU is visible")
    return default_device() if choice == "auto" else choice


def _known_strategies() -> str:
    from tritonforge.strategies import registry

    return ", ".join(registry.available())


def _unusable(message: str, as_json: bool = False) -> None:
    if as_json:
        print(json.dumps({"error": message}))
    else:
        # escape: a message quoting user code or torch ("[enforce fail at ...]") is not markup
        err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_UNUSABLE)


@app.command()
def check(
    problem: Path = typer.Argument(..., help="Problem file (kernels, entry, make_inputs, SHAPES)."),
    candidate: Optional[Path] = typer.Argument(None, help="Candidate file; omit to check the problem itself."),
    entry: Optional[str] = EntryOpt,
    inputs: Optional[List[str]] = InputsOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    device: str = DeviceOpt,
    shapes: str = ShapesOpt,
    draws: int = typer.Option(3, "--draws", min=1, help="Fresh random input draws per case."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds allowed per check or timing call."),
    no_time: bool = typer.Option(False, "--no-time", help="Check correctness only."),
    second_opinion: bool = typer.Option(False, "--second-opinion",
                                        help="Also re-time a correct CANDIDATE against the problem with "
                                             "triton.testing.do_bench in a fresh process; flag gaps over 5%."),
) -> None:
    """Judge CANDIDATE against PROBLEM: correct on every case, and faster beyond noise?

    Exit 0 when correct, 1 when not, 2 when the input is unusable.
    """
    from tritonforge.commands.check import check as run_check
    from tritonforge.commands.session import SessionOptions
    from tritonforge.evaluate.evaluator import EvalOptions
    from tritonforge.report.console import verdict_summary, verdict_table

    if candidate is not None and not candidate.is_file():
        _unusable(f"{candidate}: no such file", as_json)
    dev = _device(device)
    options = SessionOptions(entry=entry, specs=inputs or [], evaluation=EvalOptions(
        device=dev, draws=draws, check_timeout_s=timeout, time_timeout_s=timeout, measure=not no_time,
        reference_timing=candidate is None, shapes=shapes))
    header = None if as_json else (lambda prob, env: _print_header(prob.path, candidate, env))
    try:
        result = run_check(problem, candidate, options, started=header, with_second_opinion=second_opinion)
    except ProblemError as e:
        _unusable(str(e), as_json)
    verdict = result.verdict
    if as_json:
        data = {"problem": result.problem.to_json(), "verdict": verdict.to_json()}
        if result.opinion is not None:
            data["second_opinion"] = result.opinion.to_json()
        print(json.dumps(data, indent=2))
    else:
        title = f"{problem}" + (f" vs {candidate}" if candidate else " (its own entry against its reference)")
        console.print(verdict_table(verdict, title))
        console.print(verdict_summary(verdict))
        if result.opinion is not None:
            from tritonforge.report.console import second_opinion_lines

            for line, style in second_opinion_lines(result.opinion.to_json()):
                console.print(line, style=style, highlight=False)
    raise typer.Exit(EXIT_OK if verdict.correct else EXIT_FAILED)


@app.command()
def optimize(
    problem: Path = typer.Argument(..., help="Problem file to optimize."),
    entry: Optional[str] = EntryOpt,
    inputs: Optional[List[str]] = InputsOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="Run directory (default runs/<problem name>)."),
    budget: int = typer.Option(24, "--budget", min=1, help="Candidates to evaluate at most."),
    minutes: float = typer.Option(2.5, "--minutes", help="Wall-clock limit of the run, in minutes: no candidate "
                                  "starts once what follows the search (final timing, second opinion) would not fit."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run stored in --out."),
    ncu: bool = typer.Option(False, "--ncu", help="Profile the baseline and each new best with Nsight Compute."),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="Strategies by name, comma-separated "
                                           f"(default: every one that applies); known: {_known_strategies()}."),
    device: str = DeviceOpt,
    shapes: str = ShapesOpt,
    draws: int = typer.Option(3, "--draws", min=1, help="Fresh random input draws per case."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds allowed per check or timing call."),
) -> None:
    """Search for a faster, verified, drop-in version of PROBLEM; leave it in the run directory.

    Exit 0 when the run completes (even when nothing faster was found), 2 for unusable input.
    """
    from tritonforge.commands.optimize import OptimizeOptions, RunError
    from tritonforge.commands.optimize import optimize as run_optimize
    from tritonforge.evaluate.evaluator import EvalOptions
    from tritonforge.report.progress import SearchProgress
    from tritonforge.worker.timing import TimingConfig
    from tritonforge.search.loop import SearchConfig
    from tritonforge.strategies import registry

    names = [n.strip() for n in strategy.split(",") if n.strip()] if strategy else None
    unknown = [n for n in names or [] if n not in registry.available()]
    if unknown:
        _unusable(f"--strategy: unknown strategy '{unknown[0]}'; known: {', '.join(registry.available())}")
    dev = _device(device)
    options = OptimizeOptions(
        out=out or Path("runs") / problem.stem, entry=entry, specs=inputs or [], resume=resume, ncu=ncu,
        strategies=names,
        evaluation=EvalOptions(device=dev, draws=draws, check_timeout_s=timeout, time_timeout_s=timeout,
                               shapes=shapes, timing=TimingConfig(rep_ms=100)),  # many candidates: shorter runs
        search=SearchConfig(budget=budget, minutes=minutes))
    with SearchProgress(console, budget) as progress:
        try:
            outcome = run_optimize(problem, options, observer=progress)
        except (ProblemError, RunError) as e:
            progress.stop()
            _unusable(str(e))
    from tritonforge.report.console import not_moved_text, summary_table

    console.print(summary_table(outcome.summary))
    console.print(outcome.summary["result"], style="bold green" if outcome.summary["improved"] else "yellow")
    if (why := not_moved_text(outcome.summary)) is not None:
        console.print(why)
    if outcome.summary.get("slower_cases"):
        console.print(f"slower than the baseline in the final timing on {', '.join(outcome.summary['slower_cases'])} "
                      "(chosen on an earlier timing that did not show it)", style="bold red", highlight=False)
    if outcome.summary.get("second_opinion"):
        from tritonforge.report.console import second_opinion_lines

        for line, style in second_opinion_lines(outcome.summary["second_opinion"]):
            console.print(line, style=style, highlight=False)
    console.print(f"[dim]{outcome.summary['candidates_tried']} candidates, stopped: "
                  f"{outcome.summary['stop_reason']}; results in {options.out}/ "
                  "(best.py, best.diff, summary.json, report.md)[/]", highlight=False)
    raise typer.Exit(EXIT_OK)


@app.command()
def profile(
    problem: Path = typer.Argument(..., help="Problem file."),
    candidate: Optional[Path] = typer.Argument(None, help="Candidate file; omit to profile the problem itself."),
    entry: Optional[str] = EntryOpt,
    inputs: Optional[List[str]] = InputsOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    ncu: bool = typer.Option(False, "--ncu", help="Also profile with Nsight Compute and diagnose the bottleneck."),
    device: str = DeviceOpt,
    shapes: str = ShapesOpt,
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds allowed per check or timing call."),
) -> None:
    """Static facts, roofline floor, timing and (with --ncu) the diagnosed bottleneck."""
    from tritonforge.commands.profile import ProfileOptions
    from tritonforge.commands.profile import profile as run_profile
    from tritonforge.evaluate.evaluator import EvalOptions
    from tritonforge.report.console import profile_tables

    if candidate is not None and not candidate.is_file():
        _unusable(f"{candidate}: no such file", as_json)
    dev = _device(device)
    options = ProfileOptions(entry=entry, specs=inputs or [], ncu=ncu,
                             evaluation=EvalOptions(device=dev, check_timeout_s=timeout, time_timeout_s=timeout,
                                                    reference_timing=candidate is None, shapes=shapes))
    try:
        with console.status("profiling..."):
            report = run_profile(problem, candidate, options)
    except ProblemError as e:
        _unusable(str(e), as_json)
    if as_json:
        print(json.dumps(report, indent=2, default=str))
    else:
        for table in profile_tables(report):
            console.print(table)
    raise typer.Exit(EXIT_OK if report["verdict"]["correct"] else EXIT_FAILED)


def _print_header(problem: Path, candidate: Optional[Path], env: dict) -> None:
    where = f"{env.get('gpu')} (driver {env.get('driver')})" if env.get("gpu") else "CPU, Triton interpreter"
    console.print(f"[dim]{where} · torch {env.get('torch')} · triton {env.get('triton')} · "
                  f"timings: {env.get('timing')}[/]", highlight=False)


def main() -> None:  # pragma: no cover - console entry for `python -m tritonforge`
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
