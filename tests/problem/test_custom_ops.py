"""Files that register their entry as a PyTorch operator (torch.library.triton_op): each import
keeps its own operator, so a candidate's cannot replace the baseline's in a shared process."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.conftest import FIXTURES
from tritonforge import triton_hooks
from tritonforge.analysis.launch_capture import capture_launches
from tritonforge.problem.module import ProblemModule, import_file
from tritonforge.strategies.dispatch import Variant, dispatch_source

TRITON_OP = FIXTURES / "problems" / "styles" / "triton_op_add.py"


@pytest.fixture
def interpreted(monkeypatch):
    triton_hooks.install_interpreter_compat()
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_two_files_defining_one_operator_each_run_their_own(tmp_path: Path, interpreted):
    other = tmp_path / "multiplies.py"
    other.write_text(TRITON_OP.read_text().replace(
        "tl.load(x_ptr + offsets, mask=mask) + tl.load", "tl.load(x_ptr + offsets, mask=mask) * tl.load"))
    adds, muls = import_file(TRITON_OP, "test_base"), import_file(other, "test_cand")
    x, y = torch.randn(100), torch.randn(100)
    assert torch.allclose(adds.add(x, y), x + y) and torch.allclose(muls.add(x, y), x * y)
    assert torch.allclose(adds.add(x, y), x + y)  # imported first, still its own
    assert torch.allclose(adds.add_twice(x, y), x + 2 * y)  # torch.ops lookups follow the rename
    assert torch.allclose(muls.add_twice(x, y), x * y * y)


def test_a_per_shape_copy_registers_its_operator_under_a_name_of_its_own(tmp_path: Path, interpreted):
    source = TRITON_OP.read_text()
    best = source.replace("cdiv(n_elements, 64)", "cdiv(n_elements, 1024)").replace(
        "BLOCK_SIZE=64)", "BLOCK_SIZE=1024)")
    merged = dispatch_source(best, "add", [Variant(source, "x.numel() <= 2000", "BLOCK_SIZE 1024->64")])
    assert '@triton_op("tf_styles::add_v1"' in merged or "@triton_op('tf_styles::add_v1'" in merged
    path = tmp_path / "merged.py"
    path.write_text(merged)
    module = import_file(path, "test_merged")
    for n, block in ((1000, 64), (4099, 1024)):
        x, y = torch.randn(n), torch.randn(n)
        assert torch.allclose(module.add(x, y), x + y)
        [launch] = capture_launches(module.add, (x, y), execute=True)
        assert launch.constexprs["BLOCK_SIZE"] == block  # each size runs its own registration


def test_an_operator_entry_has_its_schemas_parameters(interpreted):
    pm = ProblemModule(TRITON_OP)
    assert pm.param_names == ["x", "y"]  # not the (*args, **kwargs) of the operator object
