"""`tritonforge check`: judge a candidate (or the problem's own entry) case by case."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.verdict import Verdict
from tritonforge.evaluate.second_opinion import SecondOpinion, second_opinion
from tritonforge.problem.spec import Problem


@dataclass
class CheckResult:
    problem: Problem
    verdict: Verdict
    environment: dict[str, Any]
    opinion: SecondOpinion | None = None  # do_bench's re-timing, when asked for


def check(problem_path: Path, candidate: Path | None, options: SessionOptions,
          started: Callable[[Problem, dict[str, Any]], None] | None = None,
          with_second_opinion: bool = False) -> CheckResult:
    """`started(problem, environment)` runs once the problem is loaded, before any judging.
    `with_second_opinion`: a correct candidate is also re-timed with do_bench in a fresh process."""
    with Session(problem_path, options) as s:
        env = s.environment()
        if started:
            started(s.problem, env)
        verdict = s.evaluator.evaluate(candidate)
        cases = s.evaluator.cases
    opinion = None
    if with_second_opinion and candidate is not None:
        opinion = (second_opinion(s.problem, candidate, verdict, cases, s.device) if verdict.correct
                   else SecondOpinion(False, "the candidate is not correct"))
    return CheckResult(problem=s.problem, verdict=verdict, environment=env, opinion=opinion)
