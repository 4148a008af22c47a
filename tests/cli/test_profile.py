"""`tritonforge profile` without a GPU: launches and roofline for SHAPES, or for TEST_SHAPES when
`--shapes test` asks (probe round 10: the help said test while SHAPES were shown)."""

from __future__ import annotations

from tests.conftest import EXAMPLES
from tritonforge.commands.profile import ProfileOptions, profile
from tritonforge.evaluate.evaluator import EvalOptions


def _labels(shapes: str) -> tuple[list[str], list[str | None]]:
    report = profile(EXAMPLES / "vector_add.py", None,
                     ProfileOptions(evaluation=EvalOptions(device="cpu", shapes=shapes)))
    return [c["case"] for c in report["cases"]], [c["verdict"] for c in report["cases"]]


def test_profile_shows_the_shapes_asked_for():
    cases, verdicts = _labels("test")
    assert cases == ["n=1000", "n=4099"] and verdicts == ["correct", "correct"]
    cases, verdicts = _labels("auto")  # launches at the GPU's sizes, the verdict on the test ones
    assert cases == ["n=134217728", "n=67108881"] and verdicts == [None, None]
