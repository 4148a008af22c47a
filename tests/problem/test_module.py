"""What a problem file's entry must be given: every parameter without a default."""

from __future__ import annotations

import sys

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


def test_a_kernel_kept_in_a_module_beside_the_problem_imports_from_any_folder(tmp_path, monkeypatch):
    folder = tmp_path / "lib"
    folder.mkdir()
    for name in ("axpy_wrapper.py", "_axpy_kernels.py"):  # a fresh path: nothing imported before
        (folder / name).write_text((FIXTURES / "problems" / "sibling" / name).read_text())
    monkeypatch.chdir(tmp_path)  # not the problem's folder
    monkeypatch.setattr("sys.path", list(sys.path))
    monkeypatch.delitem(sys.modules, "_axpy_kernels", raising=False)
    pm = ProblemModule(folder / "axpy_wrapper.py")
    assert pm.module.axpy_kernel.fn.__module__ == "_axpy_kernels" and sys.path[0] == str(folder)
