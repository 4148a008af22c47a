"""`tritonforge check`: judge a candidate (or the problem's own entry) case by case."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.verdict import Verdict
from tritonforge.problem.spec import Problem


@dataclass
class CheckResult:
    problem: Problem
    verdict: Verdict
    environment: dict[str, Any]


def check(problem_path: Path, candidate: Path | None, options: SessionOptions,
          started: Callable[[Problem, dict[str, Any]], None] | None = None) -> CheckResult:
    """`started(problem, environment)` runs once the problem is loaded, before any judging."""
    with Session(problem_path, options) as s:
        env = s.environment()
        if started:
            started(s.problem, env)
        verdict = s.evaluator.evaluate(candidate)
    return CheckResult(problem=s.problem, verdict=verdict, environment=env)
