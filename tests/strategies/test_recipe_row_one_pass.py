"""The row_one_pass recipe (`-k recipe`): a row kernel that reads its row once per pass gets a
one-pass path for rows that fit a block; correct in Triton's interpreter on both paths, and
refused where reusing a load would not be the same computation."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes import row_one_pass
from tritonforge.strategies.recipes.row_one_pass import RowOnePass

SOFTMAX = EXAMPLES / "softmax.py"
CORPUS = ROOT / "benchmarks" / "corpus"


def _loads_in_one_pass_branch(source: str) -> int:
    tree = ast.parse(source)
    branch = next(n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "ROW_ONE_PASS")
    return sum(1 for s in branch.body for n in ast.walk(s) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load")


def test_recipe_row_one_pass_reads_a_three_pass_softmax_row_once_on_both_paths(tmp_path, monkeypatch):
    # A cap of 64 columns: the test shapes (300 and 64 columns) take one path each.
    monkeypatch.setattr(row_one_pass, "CAP", 64)
    result = RowOnePass().rewrite(SOFTMAX.read_text(), "softmax")
    assert isinstance(result, Rewrite) and "2 later loads reuse the first" in result.note
    assert _loads_in_one_pass_branch(result.source) == 1  # three loads of the row before
    assert "row_block = triton.next_power_of_2(n_cols) if n_cols <= 64 else 128" in result.source
    assert "BLOCK=row_block, ROW_ONE_PASS=n_cols <= row_block" in result.source
    assert_correct(SOFTMAX, result.source, tmp_path)


@pytest.mark.parametrize("name", ["layernorm_pow2_cap", "rmsnorm_block_helper"])
def test_recipe_row_one_pass_follows_a_mask_kept_in_a_local_name(tmp_path, name):
    problem = CORPUS / f"{name}.py"
    result = RowOnePass().rewrite(problem.read_text(), "")
    assert isinstance(result, Rewrite), result
    loads_before = sum(1 for n in ast.walk(ast.parse(problem.read_text()))
                       if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load")
    assert _loads_in_one_pass_branch(result.source) < loads_before  # the row's re-reads are gone
    assert_correct(problem, result.source, tmp_path)


def test_recipe_row_one_pass_fills_masked_lanes_as_each_pass_did():
    # Pass two loads with other=0.0 where pass one used -inf: the reuse keeps pass two's fill.
    source = SOFTMAX.read_text().replace(
        "        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float(\"inf\"))\n        denom",
        "        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)\n        denom", 1)
    result = RowOnePass().rewrite(source, "softmax")
    assert isinstance(result, Rewrite)
    assert "x = tl.where(cols < n_cols, _row0, 0.0)" in result.source


@pytest.mark.parametrize("path, why", [
    (CORPUS / "cross_entropy_vocab.py", "fewer than two passes"),
    (EXAMPLES / "vector_add.py", "fewer than two passes"),
    (EXAMPLES / "matmul.py", "fewer than two passes"),
])
def test_recipe_row_one_pass_refuses_a_kernel_without_passes_to_merge(path, why):
    result = RowOnePass().rewrite(path.read_text(), "x")
    assert isinstance(result, str) and why in result


def test_recipe_row_one_pass_refuses_a_pass_that_writes_before_the_last():
    source = SOFTMAX.read_text().replace(
        "        row_max = tl.maximum(row_max, tl.max(x, axis=0))\n",
        "        row_max = tl.maximum(row_max, tl.max(x, axis=0))\n        tl.store(out_row + cols, x, mask=cols < n_cols)\n")
    assert "a pass before the last writes memory" in RowOnePass().rewrite(source, "softmax")


def test_recipe_row_one_pass_refuses_when_the_address_changes_between_passes():
    source = SOFTMAX.read_text().replace("    denom = 0.0\n", "    denom = 0.0\n    x_row = x_row + 1\n")
    assert "no pass loads what an earlier pass loaded" in RowOnePass().rewrite(source, "softmax")


def test_recipe_row_one_pass_refuses_an_autotuned_block_and_a_file_already_rewritten():
    autotuned = (CORPUS / "swiglu_autotune_one.py").read_text()
    assert isinstance(RowOnePass().rewrite(autotuned, "x"), str)
    once = RowOnePass().rewrite(SOFTMAX.read_text(), "softmax").source
    assert "already has a one-pass path" in RowOnePass().rewrite(once, "softmax")


def test_recipe_row_one_pass_stays_right_whatever_later_moves_do_to_its_cap(tmp_path):
    # The launch search may move the cap (16384) or the fallback block (128): the flag follows
    # the block the launch actually gets, so a row never takes the one-pass path it does not fit.
    once = RowOnePass().rewrite(SOFTMAX.read_text(), "softmax").source
    moved = once.replace("if n_cols <= 16384 else 128", "if n_cols <= 32 else 128")
    assert moved != once
    assert_correct(SOFTMAX, moved, tmp_path)  # 300 columns: the loops, with blocks of 128
