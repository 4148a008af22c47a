"""A rewritten problem file judged by the real evaluator in Triton's interpreter."""

from __future__ import annotations

from pathlib import Path

from tritonforge.commands.session import Session, SessionOptions
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.worker.timing import TimingConfig

CPU = EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=1))


def assert_correct(problem: Path, source: str, tmp_path: Path) -> None:
    """`source`, a rewrite of `problem`, is correct on every test case."""
    path = tmp_path / "candidate.py"
    path.write_text(source)
    with Session(problem, SessionOptions(evaluation=CPU)) as session:
        verdict = session.evaluator.evaluate(path)
    assert verdict.correct, verdict.message


def refusal(recipe, source: str, entry: str, edit: tuple[str, str]) -> str:
    """Why `recipe` refuses `source` with `edit` (old, new) made once; fails if it rewrites it."""
    assert edit[0] in source
    result = recipe.rewrite(source.replace(edit[0], edit[1], 1), entry)
    assert isinstance(result, str), f"rewrote it: {getattr(result, 'note', result)}"
    return result
