"""`tritonforge optimize`: baseline, rounds of candidates from the strategies, each judged in
isolation, the best kept; run files and a resumable store in the run directory."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tritonforge.analysis.ceilings import Ceilings
from tritonforge.commands.profile import case_work, ncu_profile
from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.candidate import BASELINE, source_key
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.evaluate.second_opinion import SecondOpinion, second_opinion
from tritonforge.executors.compile_pool import CompilePool
from tritonforge.executors.local import LocalExecutor
from tritonforge.problem.module import unreadable
from tritonforge.problem.spec import Problem, ProblemError
from tritonforge.report.launch_parameters import launch_parameters
from tritonforge.report.run_files import summary, write_run_files
from tritonforge.search.loop import BaselineError, Search, SearchConfig, SearchResult
from tritonforge.store import RunStore
from tritonforge.store.run_dir import (RunError, check_same_run, create_store, prepare_run_dir, resume_store,
                                       run_lock)
from tritonforge.strategies import registry
from tritonforge.strategies.base import Strategy
from tritonforge.strategies.recipes import recipes_in

__all__ = ["OptimizeOptions", "OptimizeOutcome", "RunError", "optimize"]

Observer = Callable[[str, dict[str, Any]], None]
_FLOOR_WAIT_S = 120.0  # for the summary's % of floor, the roofline may finish after the search


@dataclass
class OptimizeOptions:
    out: Path
    entry: str | None = None
    specs: list[str] = field(default_factory=list)
    resume: bool = False
    ncu: bool = False  # profile the baseline and each new best with Nsight Compute
    strategies: list[str] | None = None  # names; None: every registered strategy that applies
    evaluation: EvalOptions = field(default_factory=EvalOptions)
    search: SearchConfig = field(default_factory=SearchConfig)


@dataclass
class OptimizeOutcome:
    result: SearchResult
    summary: dict[str, Any]
    files: dict[str, Path]


def optimize(problem_path: Path, options: OptimizeOptions, observer: Observer | None = None,
             strategies: list[Strategy] | None = None) -> OptimizeOutcome:
    """`strategies` (instances) overrides `options.strategies` (names)."""
    problem_path = Path(problem_path)
    source = _read(problem_path)
    run_dir = prepare_run_dir(options.out, options.resume)
    with ExitStack() as stack:
        stack.enter_context(run_lock(run_dir))
        # A store given to --resume is checked before any work is spent on the problem.
        resumed = resume_store(run_dir, problem_path, source) if options.resume else None
        if resumed:
            stack.callback(resumed.close)
        session = stack.enter_context(Session(problem_path, SessionOptions(
            entry=options.entry, specs=options.specs, evaluation=options.evaluation)))
        if resumed:
            check_same_run(resumed, run_dir, session.problem.entry, options.specs)
        chosen, dropped = ((strategies, []) if strategies
                           else _strategies(options.strategies, source, session.problem.entry, problem_path))
        store = resumed or create_store(run_dir, problem_path, source, session.problem.entry,
                                        {"search": options.search.to_json(), "device": options.evaluation.device,
                                         "specs": options.specs})
        stack.callback(store.close)
        if not resumed:
            _record_refusals(store, dropped, source, session.problem.entry)
        try:
            return _search(session, problem_path, source, run_dir, store, options, observer, chosen)
        except ProblemError:
            # A new run stopped by its own problem has learned nothing worth keeping; without
            # its store, the same command works again once the problem file is fixed.
            if not resumed and all(c.origin == BASELINE for c, _ in store.judged()):
                store.discard()
            raise


def _strategies(names: list[str] | None, source: str, entry: str,
                path: Path) -> tuple[list[Strategy], list[Strategy]]:
    """The strategies that run, and those left out because they have nothing to offer the file
    (only when none were named: a named strategy always runs)."""
    try:
        chosen = registry.create(names)
    except ValueError as e:
        raise RunError(f"--strategy: {e}") from None
    if names is None:
        # None applying still runs the baseline: the summary then says why no launch value moves.
        kept = [s for s in chosen if s.applies(source, entry)]
        return kept, [s for s in chosen if s not in kept]
    if not chosen:
        raise RunError(f"{path}: no strategy applies to entry '{entry}'")
    return chosen, []


def _record_refusals(store: RunStore, dropped: list[Strategy], source: str, entry: str) -> None:
    """Why each strategy left out of the run has nothing to offer this file."""
    for strategy in dropped:
        store.log_event("not_applied", {"strategy": strategy.name,
                                        "why": strategy.refusals(source, entry) or {"": "nothing to offer"}})


def _search(session: Session, problem_path: Path, source: str, run_dir: Path, store: RunStore,
            options: OptimizeOptions, observer: Observer | None, strategies: list[Strategy]) -> OptimizeOutcome:
    problem = session.problem
    with ExitStack() as stack:
        precheck = floors = profile = None
        ceilings = session.ceilings  # datasheet without a GPU
        env = session.environment()
        if session.device == "cuda":
            arch = int(str(env.get("capability", "9.0")).replace(".", ""))
            precheck = CompilePool(problem, problem.cases[0], arch=arch)
            stack.callback(precheck.close)
            floors = _floors_in_background(problem, ceilings, stack)
        if options.ncu:
            profile = _ncu_profiler(problem, store, session.device, ceilings, env.get("sm_count"), observer)
        search = Search(executor=LocalExecutor(session.evaluator, precheck), store=store, strategies=strategies,
                        config=options.search, workdir=run_dir, baseline_source=source, observer=observer,
                        floor_ms=floors, profile=profile)
        store.set_state("running")
        try:
            result = search.run()
        except BaselineError as e:
            store.set_state("interrupted")
            raise ProblemError(problem_path, str(e)) from None
        except BaseException:
            store.set_state("interrupted")
            raise
        statuses = Counter(o.status for o in result.history)
        if precheck:
            # Compiles still queued when the search stopped serve nothing now; stopped, they
            # leave the CPU to the second opinion, whose plain do_bench loop has no lead.
            precheck.close()
        opinion = _second_opinion(session, search, result, observer)
        data = summary(problem=str(problem_path), entry=problem.entry, baseline=result.baseline,
                       best_verdict=result.best_verdict, best=result.best, improved=result.improved,
                       tried=result.tried, rounds=result.rounds, stop_reason=result.stop_reason,
                       wall_s=result.wall_s, statuses=statuses, run_dir=run_dir,
                       launch_parameters=_launch_parameters(store, result, source, problem.entry),
                       floors_ms=floors(wait_s=_FLOOR_WAIT_S) if floors else {},
                       second_opinion=opinion.to_json() if opinion else None,
                       recipes=recipes_in(result.best, [o.candidate for o in result.history]),
                       not_applied={e["data"]["strategy"]: e["data"]["why"] for e in store.events("not_applied")},
                       recipes_refused=_recipes_refused(store))
        files = write_run_files(run_dir, baseline_source=source, best_source=result.best.source,
                                problem_name=problem_path.name, summary_data=data, history=result.history)
        store.set_state("finished")
    return OptimizeOutcome(result=result, summary=data, files=files)


def _recipes_refused(store: RunStore) -> dict[str, str]:
    """Why each recipe left the problem as given unchanged: the recipes' account of their first round."""
    first = next((e["data"]["space"] for e in store.events("search_space")
                  if e["data"].get("strategy") == "recipes"), None)
    return dict(first.get("not_applied") or {}) if isinstance(first, dict) else {}


def _second_opinion(session: Session, search: Search, result: SearchResult,
                    observer: Observer | None) -> SecondOpinion | None:
    """The best re-timed against the baseline with do_bench in a fresh worker (on a GPU)."""
    if not result.improved:
        return None
    if observer:
        observer("second_opinion", {"key": result.best.key})
    opinion = second_opinion(session.problem, search.path_of(result.best), result.best_verdict,
                             session.evaluator.cases, session.device)
    search.store.log_event("second_opinion", opinion.to_json())
    return opinion


def _launch_parameters(store: RunStore, result: SearchResult, baseline_source: str, entry: str) -> dict[str, Any]:
    """The launch values as the last round searched them; without a round on record, as a
    fresh analysis of the best (the baseline, unless a resumed run had found better)."""
    from tritonforge.analysis.launch_sites import SearchSpace
    from tritonforge.strategies.launch import LaunchParamStrategy
    from tritonforge.strategies.launch.strategy import space_record

    spaces = [e["data"] for e in store.events("search_space") if e["data"].get("strategy") == LaunchParamStrategy.name]
    if spaces:
        last = spaces[-1]
        best = last["space"].get("on") or next((e["data"].get("best") for e in store.events("round")
                                                if e["data"].get("round") == last["round"]), None)
        # A candidate's lines are not the problem file's: a recipe may have added some.
        on = "the baseline" if best == source_key(baseline_source) else \
            f"candidate `{best}` (line numbers are those of candidates/{best}.py)"
        return launch_parameters(last["space"], f"round {last['round']}'s search space, on {on}")
    basis = "a fresh analysis of " + ("the baseline" if not result.improved else
                                      f"candidate `{result.best.key}` (line numbers are those of best.py)")
    launched = [k for e in store.events("captured") if "of" not in e["data"] for k in e["data"].get("kernels", [])]
    try:
        return launch_parameters(space_record(SearchSpace.from_source(result.best.source, entry), launched), basis)
    except (SyntaxError, ValueError):
        return launch_parameters(None, basis)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ProblemError(path, unreadable(e)) from None


def _floors_in_background(problem: Problem, ceilings: Ceilings, stack: ExitStack) -> Callable[..., dict[str, float]]:
    """Roofline floors per case, computed on the CPU while the search runs; {} until ready
    (`wait_s`: wait that long for them first)."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="roofline")
    stack.callback(pool.shutdown, wait=False, cancel_futures=True)
    future: Future = pool.submit(case_work, problem, problem.cases, None, ceilings)

    def floors(wait_s: float = 0.0) -> dict[str, float]:
        if wait_s:
            wait([future], timeout=wait_s)
        if not future.done() or future.exception() is not None:
            return {}
        return {cw.case: cw.roofline.floor_ms for cw in future.result()}

    return floors


def _ncu_profiler(problem: Problem, store: RunStore, device: str, ceilings: Ceilings, sm_count: int | None,
                  observer: Observer | None) -> Callable:
    """Profile one candidate with Nsight Compute on the first case; keep the result, return findings."""
    from tritonforge.diagnosis.model import Finding

    work_cache: dict[str, Any] = {}

    def profile(candidate: Any, path: Path | None) -> list[Any]:
        if "work" not in work_cache:
            work_cache["work"] = case_work(problem, problem.cases[:1], None, ceilings)[0]
        report = ncu_profile(problem, path, problem.cases[0], work_cache["work"], ceilings, sm_count, device)
        store.add_profile(candidate.key, "ncu", report)
        findings = [Finding.from_json(f) for k in report.get("kernels", []) for f in k["findings"]]
        if observer:
            main = [k["main"]["title"] for k in report.get("kernels", []) if k.get("main")]
            observer("profiled", {"key": candidate.key, "main": main, "reason": report.get("reason")})
        return sorted(findings, key=lambda f: -f.score)

    return profile
