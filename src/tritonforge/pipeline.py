"""The whole job, stage after stage: load -> search -> record -> report.

Each stage package knows nothing of the ones after it; this module is where they meet,
so that the command line stays a thin shell over it.
"""

from __future__ import annotations

import fcntl
import os
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from tritonforge.analyze import case_work, gpu_ceilings, ncu_profile
from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, load_problem
from tritonforge.executors.compile_pool import CompilePool
from tritonforge.problem.module import unreadable
from tritonforge.problem.spec import Problem, ProblemError
from tritonforge.profiling.ceilings import Ceilings
from tritonforge.report.run_files import summary, write_run_files
from tritonforge.search.loop import BASELINE, BaselineError, Search, SearchConfig, SearchResult
from tritonforge.store import DEFAULT_FILENAME, RunStore, StoreError
from tritonforge.strategies.base import Strategy
from tritonforge.worker.client import WorkerClient


class RunError(Exception):
    """Unusable input for a run (problem, run directory or store): one line, exit 2."""


@dataclass
class OptimizeOptions:
    out: Path
    entry: str | None = None
    specs: list[str] = field(default_factory=list)
    resume: bool = False
    ncu: bool = False  # profile the baseline and each new best with Nsight Compute
    evaluation: EvalOptions = field(default_factory=EvalOptions)
    search: SearchConfig = field(default_factory=SearchConfig)


@dataclass
class OptimizeOutcome:
    result: SearchResult
    summary: dict[str, Any]
    files: dict[str, Path]


def default_strategies() -> list[Strategy]:
    from tritonforge.strategies.launch_params import LaunchParamStrategy

    return [LaunchParamStrategy()]


def optimize(problem_path: Path, options: OptimizeOptions,
             observer: Callable[[str, dict[str, Any]], None] | None = None,
             strategies: list[Strategy] | None = None) -> OptimizeOutcome:
    problem_path = Path(problem_path)
    source = _read(problem_path)
    run_dir = _prepare_run_dir(options.out, options.resume)
    with ExitStack() as stack:
        stack.enter_context(_run_lock(run_dir))
        # A store given to --resume is checked before any work is spent on the problem.
        resumed = _resume_store(run_dir, problem_path, source) if options.resume else None
        if resumed:
            stack.callback(resumed.close)
        worker = stack.enter_context(WorkerClient(options.evaluation.device))
        problem = load_problem(problem_path, worker, entry=options.entry, specs=options.specs,
                               timeout=options.evaluation.check_timeout_s)
        if resumed:
            _check_same_run(resumed, run_dir, problem, options)
        store = resumed or _create_store(run_dir, problem_path, source, problem.entry, options)
        stack.callback(store.close)
        try:
            return _search(problem, problem_path, source, run_dir, store, worker, options, observer, strategies)
        except ProblemError:
            # A new run stopped by its own problem has learned nothing worth keeping; without
            # its store, the same command works again once the problem file is fixed.
            if not resumed and all(c.origin == BASELINE for c, _ in store.judged()):
                store.discard()
            raise


def _search(problem: Problem, problem_path: Path, source: str, run_dir: Path, store: RunStore,
            worker: WorkerClient, options: OptimizeOptions, observer: Callable[[str, dict[str, Any]], None] | None,
            strategies: list[Strategy] | None) -> OptimizeOutcome:
    with ExitStack() as stack:
        evaluator = Evaluator(problem, worker, options.evaluation)
        on_gpu = options.evaluation.device == "cuda"
        env = evaluator.environment()
        precheck = floors = profile = None
        ceilings = gpu_ceilings(worker, options.evaluation.device)  # datasheet without a GPU
        if on_gpu:
            arch = int(str(env.get("capability", "9.0")).replace(".", ""))
            precheck = CompilePool(problem, problem.cases[0], arch=arch)
            stack.callback(precheck.close)
            floors = _floors_in_background(problem, ceilings, stack)
        if options.ncu:
            profile = _ncu_profiler(problem, store, options.evaluation.device, ceilings, env.get("sm_count"),
                                    observer)
        search = Search(evaluator=evaluator, store=store, strategies=strategies or default_strategies(),
                        config=options.search, workdir=run_dir, baseline_source=source, observer=observer,
                        precheck=precheck, floor_ms=floors, profile=profile)
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
        data = summary(problem=str(problem_path), entry=problem.entry, baseline=result.baseline,
                       best_verdict=result.best_verdict, best=result.best, improved=result.improved,
                       tried=result.tried, rounds=result.rounds, stop_reason=result.stop_reason,
                       wall_s=result.wall_s, statuses=statuses, run_dir=run_dir)
        files = write_run_files(run_dir, baseline_source=source, best_source=result.best.source,
                                problem_name=problem_path.name, summary_data=data, history=result.history)
        store.set_state("finished")
    return OptimizeOutcome(result=result, summary=data, files=files)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ProblemError(path, unreadable(e)) from None


def _prepare_run_dir(out: Path, resume: bool) -> Path:
    """Refuse a run directory that cannot be used, before any work is spent."""
    out = Path(out)
    store = out / DEFAULT_FILENAME
    if resume and not store.exists():
        raise RunError(f"{out}: no run to resume (no {DEFAULT_FILENAME} there)")
    if not resume and store.exists():
        raise RunError(f"{out}: already holds a run; pass --resume to continue it or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunError(f"{out}: cannot write the run directory ({e.strerror or e})") from None
    return out


@contextmanager
def _run_lock(run_dir: Path) -> Iterator[None]:
    """One optimize per run directory: a second one would judge the same candidates again.

    An advisory lock on the directory itself (no lock file to leave behind), which the
    kernel drops when its process dies, so a killed run never leaves its directory locked.
    """
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunError(f"{run_dir}: another optimize is using this run; wait for it to end "
                           "or choose another --out") from None
        yield
    finally:
        os.close(fd)


def _create_store(run_dir: Path, problem_path: Path, source: str, entry: str, options: OptimizeOptions) -> RunStore:
    try:
        return RunStore.create(run_dir / DEFAULT_FILENAME, str(problem_path.resolve()), source, entry,
                               {"search": options.search.to_json(), "device": options.evaluation.device,
                                "specs": options.specs})
    except StoreError as e:
        raise RunError(str(e)) from None


def _resume_store(run_dir: Path, problem_path: Path, source: str) -> RunStore:
    """The store in `run_dir`, sound and of a run of this very problem file."""
    path = run_dir / DEFAULT_FILENAME
    try:
        store = RunStore.open(path)
        info = store.info()
    except StoreError as e:
        raise RunError(str(e)) from None
    if info.problem_source != source:
        store.close()
        if Path(info.problem_path) != problem_path.resolve():
            raise RunError(f"{path}: holds a run of {info.problem_path}, not of {problem_path}; choose another --out")
        raise RunError(f"{problem_path}: changed since the run in {run_dir} started; resume needs the same file")
    return store


def _check_same_run(store: RunStore, run_dir: Path, problem: Problem, options: OptimizeOptions) -> None:
    """Candidates judged against another entry or other inputs would not compare."""
    info = store.info()
    if info.entry != problem.entry:
        raise RunError(f"{run_dir}: its run optimizes '{info.entry}', not '{problem.entry}'; "
                       "resume needs the same --entry")
    if info.options.get("specs", []) != options.specs:
        raise RunError(f"{run_dir}: its run used other --inputs; resume needs the same ones")


def _floors_in_background(problem: Problem, ceilings: Ceilings, stack: ExitStack) -> Callable[[], dict[str, float]]:
    """Roofline floors per case, computed on the CPU while the search runs; {} until ready."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="roofline")
    stack.callback(pool.shutdown, wait=False, cancel_futures=True)
    future: Future = pool.submit(case_work, problem, problem.cases, None, ceilings)

    def floors() -> dict[str, float]:
        if not future.done() or future.exception() is not None:
            return {}
        return {cw.case: cw.roofline.floor_ms for cw in future.result()}

    return floors


def _ncu_profiler(problem: Problem, store: RunStore, device: str, ceilings: Ceilings, sm_count: int | None,
                  observer: Callable[[str, dict[str, Any]], None] | None) -> Callable:
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

