"""What a problem file's entry must be given: every parameter without a default."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tritonforge.problem.module import ProblemError, ProblemModule
from tritonforge.worker.checks import check_inputs

DEFAULTED = FIXTURES / "problems" / "styles" / "default_argument.py"


def test_an_entry_argument_with_a_default_may_be_left_to_it():
    pm = ProblemModule(DEFAULTED)
    assert pm.param_names == ["x", "negative_slope"] and pm.required == 1
    case = pm.cases()[1][0]
    x = pm.make_args(case, 0, "cpu")[0]
    check_inputs(pm, (x,), 0)
    check_inputs(pm, (x, 0.2), 0)
    with pytest.raises(ProblemError, match=r"make_inputs returned 3 values; leaky_relu takes 1 to 2 \(x, negative_slope\)"):
        check_inputs(pm, (x, 0.2, 1), 0)
    with pytest.raises(ProblemError, match="make_inputs returned 0 values"):
        check_inputs(pm, (), 0)


def test_an_input_spec_may_leave_a_defaulted_argument_out():
    pm = ProblemModule(DEFAULTED, specs=["x=float32[300]"])
    [case] = pm.cases()[0]
    args = pm.make_args(case, 0, "cpu")
    assert len(args) == 1 and tuple(args[0].shape) == (300,)
    both = ProblemModule(DEFAULTED, specs=["x=float32[300] negative_slope=0.2"])
    assert both.make_args(both.cases()[0][0], 0, "cpu")[1] == 0.2
    with pytest.raises(ProblemError, match="missing \\['x'\\]"):
        ProblemModule(DEFAULTED, specs=["negative_slope=0.2"])
