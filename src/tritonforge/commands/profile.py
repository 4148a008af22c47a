"""`tritonforge profile`: static and measured facts about a problem or candidate: features,
compile facts, occupancy, roofline, timing, and (with Nsight Compute) counters and findings.

User code only ever runs in workers; `case_work` and `ncu_profile` also serve `optimize`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tritonforge.analysis.ceilings import Ceilings
from tritonforge.analysis.features import features_of_file
from tritonforge.analysis.occupancy import occupancy, spec_for_arch, waves
from tritonforge.analysis.roofline import Roofline, Work, roofline
from tritonforge.diagnosis import DiagnosisInput, diagnose, main_bottleneck
from tritonforge.commands.session import Session, SessionOptions
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.problem.spec import Case, Problem
from tritonforge.worker.client import WorkerClient
from tritonforge.worker.faults import WorkerFault

ESTIMATE_LABEL = "estimate: compiled offline for sm_90, no GPU measurement"


@dataclass
class CaseWork:
    """Launches, compile facts and the roofline of one case."""

    case: str
    launches: list[dict[str, Any]]
    roofline: Roofline


def _request(ask: Callable[..., Any], problem: Problem, case: Case, candidate: Path | None, timeout: float) -> Any:
    """`ask` (a WorkerClient method) about one case; RuntimeError naming the request on any fault."""
    try:
        return ask(problem, case, candidate, timeout)
    except WorkerFault as e:
        raise RuntimeError(f"{ask.__name__} on {case.label}: {e}") from None


def case_work(problem: Problem, cases: list[Case], candidate: Path | None, ceilings: Ceilings,
              timeout: float = 600.0) -> list[CaseWork]:
    """Launches and facts of `candidate` (or the baseline) and the problem's roofline, per case.

    Runs two CPU workers side by side: one compiles without a GPU, one counts FLOPs in the
    interpreter. The floor is a property of the problem, so FLOPs are counted on its own entry.
    """
    with WorkerClient("compile") as compiler, WorkerClient("cpu") as counter, ThreadPoolExecutor(2) as pool:
        def analyze_all() -> list[dict[str, Any]]:
            return [_request(compiler.analyze, problem, c, candidate, timeout) for c in cases]

        def count_all() -> list[dict[str, Any] | None]:
            counts: list[dict[str, Any] | None] = []
            for c in cases:
                try:
                    counts.append(_request(counter.count_flops, problem, c, None, timeout))
                except RuntimeError as e:
                    # e.g. Triton 3.6's interpreter under numpy 2: the floor then rests on bytes
                    # (and on a declared FLOPS), and says that FLOPs were not counted.
                    counts.append({"error": str(e).splitlines()[0][:200]})
            return counts

        analyzed, counted = pool.submit(analyze_all), pool.submit(count_all)
        results = []
        for case, a, flops in zip(cases, analyzed.result(), counted.result()):
            results.append(CaseWork(case=case.label, launches=a["launches"],
                                    roofline=roofline(_work(a["work"], flops), ceilings)))
    return results


def _work(w: dict[str, Any], flops: dict[str, Any] | None) -> Work:
    failed = (flops or {}).get("error")
    if failed:
        flops = None
    if w.get("declared_flops") is not None:
        total, fsrc = float(w["declared_flops"]), "declared FLOPS"
        counted = dict((flops or {}).get("dot_flops_by_dtype") or {})
        counted_total = float((flops or {}).get("total") or 0)
        # The declared total, split between operand types as the counted work was.
        dots = {k: total * v / counted_total for k, v in counted.items()} if counted_total else {"fp16": total}
    elif flops is not None:
        total, dots, fsrc = float(flops["total"]), dict(flops.get("dot_flops_by_dtype") or {}), "counted"
    else:
        total, dots, fsrc = 0.0, {}, f"not counted ({failed})" if failed else "not counted"
    if w.get("declared_bytes") is not None:
        return Work(bytes=w["declared_bytes"], flops=total, dot_flops=dots, bytes_source="declared BYTES",
                    flops_source=fsrc)
    return Work(bytes=w["bytes"], flops=total, dot_flops=dots, flops_source=fsrc)


def launch_rows(launches: list[dict[str, Any]], sm_count: int | None) -> list[dict[str, Any]]:
    """One row per launch: grid, warps, registers, spills, shared, occupancy and its limiter."""
    rows = []
    for item in launches:
        launch, facts = item["launch"], item.get("facts") or {}
        row: dict[str, Any] = {"kernel": launch["kernel_name"], "grid": launch["grid"],
                               "num_warps": launch["num_warps"], "num_stages": launch["num_stages"],
                               "constexprs": {a["name"]: a["value"] for a in launch["args"] if a["kind"] == "constexpr"},
                               "error": item.get("error")}
        if facts:
            spec = spec_for_arch(facts.get("arch", 90))
            if spec is not None and sm_count:
                spec = type(spec)(**{**spec.__dict__, "sm_count": sm_count})
            occ = occupancy(facts.get("registers") or 0, facts.get("shared_bytes") or 0, facts["num_warps"], spec) \
                if spec else None
            sass = facts.get("sass") or facts.get("ptx") or {}
            grid = launch["grid"][0] * launch["grid"][1] * launch["grid"][2]
            row.update(registers=facts.get("registers"), spill_bytes=(facts.get("spill_store_bytes") or 0)
                       + (facts.get("spill_load_bytes") or 0), stack_bytes=facts.get("stack_bytes"),
                       shared_bytes=facts.get("shared_bytes"), facts_source=facts.get("source"),
                       widest_load_bits=max([int(k) for k in (sass.get("global_loads") or {})] +
                                            [int(k) for k in (sass.get("async_copies") or {})], default=0),
                       tensor_core=sass.get("tensor_core") or {}, local_ops=(sass.get("local_loads") or 0)
                       + (sass.get("local_stores") or 0), barriers=sass.get("barriers"))
            if occ:
                row.update(occupancy_pct=occ.occupancy_pct, limiter=occ.limiter, blocks_per_sm=occ.blocks_per_sm,
                           waves=round(waves(grid, occ.blocks_per_sm, spec), 2) if occ.blocks_per_sm else None)
        rows.append(row)
    return rows


def compile_signals(facts: dict[str, Any] | None) -> dict[str, Any] | None:
    """Compile facts in the shape the diagnosis rules read."""
    if not facts:
        return None
    sass = facts.get("sass") or facts.get("ptx") or {}
    spilled = (facts.get("spill_store_bytes") or 0) + (facts.get("spill_load_bytes") or 0)
    return {"registers": facts.get("registers"), "spills": spilled, "shared": facts.get("shared_bytes"),
            "num_warps": facts.get("num_warps"), "num_stages": facts.get("num_stages"),
            "instructions": dict(sass.get("tensor_core") or {})}


@dataclass
class ProfileOptions:
    entry: str | None = None
    specs: list[str] = field(default_factory=list)
    evaluation: EvalOptions = field(default_factory=EvalOptions)
    ncu: bool = False


def profile(problem_path: Path, candidate: Path | None, options: ProfileOptions) -> dict[str, Any]:
    """Everything `tritonforge profile` shows, as one JSON-ready dict."""
    target = Path(candidate) if candidate else Path(problem_path)
    dev = options.evaluation.device
    session_options = SessionOptions(entry=options.entry, specs=options.specs, evaluation=options.evaluation)
    with Session(Path(problem_path), session_options) as s:
        problem, env, ceilings = s.problem, s.environment(), s.ceilings
        verdict = s.evaluator.evaluate(candidate)
        # Launches and the roofline at the sizes that matter on the GPU (compiled offline here),
        # unless `--shapes test` asks for the small ones the verdict also ran on.
        gpu_cases = problem.test_cases if options.evaluation.shapes == "test" else problem.cases
        work = case_work(problem, gpu_cases, candidate, ceilings)
        if dev == "cuda":  # the kernels actually launched replace the offline compiles
            for cw, case in zip(work, gpu_cases):
                launched = _request(s.worker.launched, problem, case, candidate, 600)
                if all(item.get("facts") for item in launched):
                    cw.launches = launched
    sm_count = env.get("sm_count")
    cases = []
    timed = {cv.case: cv for cv in verdict.cases}
    for cw in work:
        cv = timed.get(cw.case)
        t = (cv.candidate or cv.baseline) if cv and dev == "cuda" else None
        rows = launch_rows(cw.launches, sm_count)
        measured = t.median_ms if t else None
        findings = []
        if len(cw.launches) == 1:
            facts = cw.launches[0].get("facts")
            inp = DiagnosisInput(compile=compile_signals(facts), roofline=cw.roofline, measured_ms=measured,
                                 ceilings=ceilings, sm_count=sm_count)
            findings = [f.to_json() for f in diagnose(inp)]
        cases.append({"case": cw.case, "launches": rows, "roofline": cw.roofline.to_json(),
                      "achieved": cw.roofline.achieved(measured).to_json() if measured else None,
                      "verdict": cv.status.value if cv else None, "findings": findings})
    report = {"problem": str(problem.path), "candidate": str(candidate) if candidate else None, "entry": problem.entry,
              "device": env, "timing": verdict.timing_label, "ceilings": ceilings.to_json(),
              "facts_label": "kernels as launched on the GPU" if dev == "cuda" else ESTIMATE_LABEL,
              "features": {k: v.to_json() for k, v in features_of_file(target).items()},
              "verdict": verdict.to_json(), "cases": cases}
    if options.ncu:
        report["ncu"] = ncu_profile(problem, candidate, gpu_cases[0], work[0], ceilings, sm_count, dev)
    return report


def ncu_profile(problem: Problem, candidate: Path | None, case: Case, cw: CaseWork, ceilings: Ceilings,
                sm_count: int | None, device: str) -> dict[str, Any]:
    """Nsight Compute counters and findings per kernel for one case, or why there are none."""
    from tritonforge.profiling import ProfileTarget, get_profiler

    if device != "cuda":
        return {"available": False, "reason": "no GPU: Nsight Compute needs one"}
    profiler = get_profiler("ncu")
    avail = profiler.available()
    if not avail.ok:
        return {"available": False, "reason": avail.reason}
    target = ProfileTarget(problem=str(problem.path), entry=problem.entry,
                           candidate=str(Path(candidate).resolve()) if candidate else None,
                           specs=list(problem.inputs_specs), params=dict(case.params), spec=case.spec)
    result = profiler.profile(target)
    facts_by_kernel = {item["launch"]["kernel_name"]: item.get("facts") for item in cw.launches}
    kernels = []
    for m in result.kernels:
        inp = DiagnosisInput(metrics=m, compile=compile_signals(facts_by_kernel.get(m.kernel)),
                             roofline=cw.roofline if len(result.kernels) == 1 else None,
                             ceilings=ceilings, sm_count=sm_count)
        findings = diagnose(inp)
        main = main_bottleneck(findings)
        kernels.append({"kernel": m.kernel, "metrics": m.to_json(), "findings": [f.to_json() for f in findings],
                        "main": main.to_json() if main else None})
    return {"available": True, "case": case.label, "wall_s": result.wall_s, "warning": result.warning,
            "command": result.command, "kernels": kernels}
