"""The split_k recipe (`-k recipe`): a matmul with few output tiles walks K in several programs
per tile and adds their partial tiles atomically; correct in Triton's interpreter with the
split taken and not, and refused where the split would not be the same sum."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.analysis.launch_sites import SearchSpace
from tritonforge.strategies.launch.rewrite import apply_assignment
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.split_k import SplitK

LONG_K = ROOT / "benchmarks" / "corpus" / "matmul_long_k.py"
ENTRY = "matmul_long_k"


def test_recipe_split_k_splits_a_long_k_matmul_and_stays_correct(tmp_path):
    # Its test cases: one output tile with 16 steps of K (split in two), and 5 steps (not split).
    result = SplitK().rewrite(LONG_K.read_text(), ENTRY)
    assert isinstance(result, Rewrite), result
    assert "for k in range(pid_split_k, tl.cdiv(K, BLOCK_K), SPLIT_K):" in result.source
    assert "a_ptrs += (BLOCK_K * stride_ak) * pid_split_k" in result.source
    assert "tl.atomic_add(c_ptrs, c, mask=" in result.source
    assert "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), split_k)" in result.source
    assert_correct(LONG_K, result.source, tmp_path)


def test_recipe_split_k_adds_an_axis_to_a_1d_grid_with_offsets_in_the_loop(tmp_path):
    problem = FIXTURES / "problems" / "styles" / "matmul_1d_grid.py"
    result = SplitK().rewrite(problem.read_text(), "mm")
    assert isinstance(result, Rewrite), result
    assert "tl.program_id(1)  # which share of K" in result.source
    assert_correct(problem, result.source, tmp_path)


@pytest.mark.parametrize("edit, why", [
    (("    c = acc.to(tl.float16)", "    c = tl.maximum(acc, 0.0).to(tl.float16)"), "computed from its accumulator"),
    (("        acc += tl.dot(a, b)\n", "        acc += tl.dot(a, b)\n        acc = acc * 0.5\n"),
     "does not only add into one accumulator"),
    (("        a_ptrs += BLOCK_K * stride_ak\n", "        a_ptrs += BLOCK_K * stride_ak * (k + 1)\n"),
     "advances by something the loop changes"),
    (("    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))\n",
      "    grid = lambda meta: (triton.cdiv(M, meta['BLOCK_M']), triton.cdiv(N, meta['BLOCK_N']))\n"),
     "grid from META is not split yet"),
])
def test_recipe_split_k_refuses_what_would_not_be_the_same_sum(edit, why):
    assert why in refusal(SplitK(), LONG_K.read_text(), ENTRY, edit)


def test_recipe_split_k_refuses_a_loop_that_carries_another_value():
    source = LONG_K.read_text().replace(
        "    for k in range(", "    seen = 0\n    for k in range(").replace(
        "        acc += tl.dot(a, b)\n", "        acc += tl.dot(a, b)\n        seen = seen + 1\n")
    result = SplitK().rewrite(source, ENTRY)
    assert isinstance(result, str) and "carries seen" in result, result


def test_recipe_split_k_refuses_autotuned_kernels_and_kernels_split_already():
    corpus = ROOT / "benchmarks" / "corpus"
    assert "autotuned" in SplitK().rewrite((corpus / "matvec_autotune.py").read_text(), "matvec")
    once = SplitK().rewrite(LONG_K.read_text(), ENTRY).source
    assert "already splits K" in SplitK().rewrite(once, ENTRY)


def test_recipe_split_k_splits_the_row_loop_of_a_column_sum_and_stays_correct(tmp_path):
    # examples/col_sum.py: each program sums 16 columns over all rows; the rows are split
    # when the columns give few programs. Its test cases (37 and 130 rows in blocks of 8)
    # split at most twice at the chooser's 8 steps a split: a smaller block splits more.
    problem = ROOT / "examples" / "col_sum.py"
    result = SplitK().rewrite(problem.read_text(), "col_sum")
    assert isinstance(result, Rewrite), result
    assert "for start in range(pid_split_k * BLOCK_M, n_rows, BLOCK_M * SPLIT_K):" in result.source
    assert "tl.atomic_add(out_ptr + cols, acc, mask=cols < n_cols)" in result.source
    assert "grid = (triton.cdiv(n_cols, BLOCK_N), split_k)" in result.source
    assert_correct(problem, result.source, tmp_path)
    split = result.source.replace("BLOCK_M = 8", "BLOCK_M = 2")  # 65 steps of 2 rows: split 8 ways
    assert_correct(problem, split, tmp_path)


def test_recipe_split_k_sizes_a_streaming_split_for_more_programs_and_follows_the_block():
    # A loop without tl.dot aims at 2048 programs, a matmul at 512. The launch's literal
    # BLOCK_M=8 becomes a local the chooser divides by, so a launch-search move of the block
    # moves the split's step count with it, and nothing else in the chooser.
    col_sum = SplitK().rewrite((ROOT / "examples" / "col_sum.py").read_text(), "col_sum").source
    assert "min(16, 2048 // max(1, (triton.cdiv(n_cols, BLOCK_N))), triton.cdiv(n_rows, BLOCK_M) // 8)" in col_sum
    assert "BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, SPLIT_K=split_k" in col_sum
    assert " 512 // " in SplitK().rewrite(LONG_K.read_text(), ENTRY).source
    space = SearchSpace.from_source(col_sum, "col_sum")
    moved = apply_assignment(space, {"col_sum_kernel.BLOCK_M": 256, "col_sum_kernel.BLOCK_N": 64})
    assert "BLOCK_M = 256  # shared by the launch and the split" in moved
    assert "2048 // max(1, (triton.cdiv(n_cols, BLOCK_N))), triton.cdiv(n_rows, BLOCK_M) // 8)" in moved


def test_recipe_split_k_refuses_a_loop_that_stores_or_keeps_a_maximum():
    problem = ROOT / "examples" / "col_sum.py"
    stores = refusal(SplitK(), problem.read_text(), "col_sum", (
        "        acc += tl.sum(x, axis=0)\n",
        "        acc += tl.sum(x, axis=0)\n        tl.store(out_ptr + cols, acc, mask=cols < n_cols)\n"))
    assert "its loop writes memory" in stores
    maximum = refusal(SplitK(), problem.read_text(), "col_sum", (
        "        acc += tl.sum(x, axis=0)\n", "        acc = tl.maximum(acc, tl.sum(x, axis=0))\n"))
    assert "not one loop adding into an accumulator" in maximum
