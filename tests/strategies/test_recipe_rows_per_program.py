"""The rows_per_program recipe (`-k recipe`): a row kernel launched one program per row gets
several rows a program, its grid divided to match; correct in Triton's interpreter with a
partial last program, and refused where the program is not a row or the loop would change
what runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.row_one_pass import RowOnePass
from tritonforge.strategies.recipes.rows_per_program import RowsPerProgram

CORPUS = ROOT / "benchmarks" / "corpus"
RMSNORM = EXAMPLES / "rmsnorm.py"
LAUNCH = "rmsnorm_kernel[(n_rows,)]"


def _one_pass(path: Path, entry: str = "") -> str:
    """The file after row_one_pass: rows that fit a block are read in one, without a loop."""
    result = RowOnePass().rewrite(path.read_text(), entry)
    assert isinstance(result, Rewrite), result
    return result.source


def _with_shapes(source: str, shapes: str) -> str:
    start = source.index("TEST_SHAPES = ")
    return source[:start] + f"TEST_SHAPES = {shapes}\n" + source[source.index("\n", start) + 1:]


def _problem(tmp_path: Path, source: str) -> Path:
    """The problem as judged: its test shapes are the ones in `source`."""
    path = tmp_path / "problem.py"
    path.write_text(source)
    return path


def _rewrite(source: str, entry: str = "") -> str:
    result = RowsPerProgram().rewrite(source, entry)
    assert isinstance(result, Rewrite), result
    return result.source


def test_recipe_rows_per_program_shares_programs_among_short_rmsnorm_rows(tmp_path):
    # 300 columns: blocks of 512, 8 rows a program, 6 rows in one partial program; 128
    # columns: 8 rows a program, 19 rows in 3 programs, the last with 3.
    original = RMSNORM.read_text()
    assert "TEST_SHAPES = [{\"rows\": 6, \"cols\": 300}, {\"rows\": 19, \"cols\": 128}]" in original
    new = _rewrite(_one_pass(RMSNORM, "rmsnorm"), "rmsnorm")
    assert "rmsnorm_kernel[(triton.cdiv(n_rows, rows_per_program),)]" in new
    assert "rows_per_program = (max(1, min(8, 4096 // row_block)) if n_cols <= row_block else 1)" in new
    assert "n_rows_total=n_rows, ROWS=rows_per_program)" in new
    assert "for _r in tl.static_range(ROWS):" in new
    assert_correct(RMSNORM, new, tmp_path)


def test_recipe_rows_per_program_keeps_one_row_a_program_on_the_long_row_loops(tmp_path):
    # A cap of 128 columns: 300 columns take row_one_pass's loops (1 row a program), 128 the one-pass path.
    once = _one_pass(RMSNORM, "rmsnorm").replace("if n_cols <= 16384 else 128", "if n_cols <= 128 else 128")
    assert_correct(RMSNORM, _rewrite(once, "rmsnorm"), tmp_path)


@pytest.mark.parametrize("name, shapes", [
    ("layernorm_pow2_cap", '[{"rows": 5, "cols": 300}, {"rows": 7, "cols": 1000}]'),  # 8 and 4 rows a program
    ("rmsnorm_block_helper", '[{"rows": 7, "hidden": 1000}, {"rows": 5, "hidden": 300}]'),  # 4 and 8
])
def test_recipe_rows_per_program_applies_to_corpus_norms_after_row_one_pass(tmp_path, name, shapes):
    source = _with_shapes((CORPUS / f"{name}.py").read_text(), shapes)
    new = _rewrite(_one_pass(_problem(tmp_path, source)))
    assert "[(triton.cdiv(n_rows, rows_per_program),)]" in new
    assert_correct(tmp_path / "problem.py", new, tmp_path)


def test_recipe_rows_per_program_takes_a_pointer_moved_by_the_constexpr_row_length(tmp_path):
    # `x += i_t * D`, D a constexpr that no tl.arange spans: a row's stride, not a tile's.
    path = CORPUS / "row_scale_many_rows.py"
    new = _rewrite(path.read_text())
    assert "l2norm_fwd_kernel[(triton.cdiv(T, rows_per_program),)]" in new
    assert "        x = _x_first\n" in new
    assert_correct(path, new, tmp_path)


@pytest.mark.parametrize("launch, grid", [
    ("grid = (n_rows,)\n    rmsnorm_kernel[grid]", "rmsnorm_kernel[(triton.cdiv(grid[0], rows_per_program),)]"),
    ("rmsnorm_kernel[lambda meta: (n_rows,)]", "rmsnorm_kernel[lambda meta: (triton.cdiv(n_rows, rows_per_program),)]"),
])
def test_recipe_rows_per_program_divides_a_named_or_lambda_grid(tmp_path, launch, grid):
    source = _one_pass(RMSNORM, "rmsnorm").replace(LAUNCH, launch)
    new = _rewrite(source, "rmsnorm")
    assert grid in new
    assert_correct(RMSNORM, new, tmp_path)


ONE_BLOCK_SOFTMAX = '''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    """One row, one block: the whole row loaded once."""
    row_idx = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row_idx * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row_idx * stride_out + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def softmax('''


MOVED_POINTER = ("    x = tl.load(x_ptr + row_idx * stride_x + cols",
                 "    x_ptr += row_idx * stride_x\n    x = tl.load(x_ptr + cols")


@pytest.mark.parametrize("edit", [None, MOVED_POINTER])
def test_recipe_rows_per_program_applies_to_a_one_block_softmax_with_its_row_count(tmp_path, edit):
    # Written without loops, and with the row count already a parameter: it is reused. A
    # parameter the body moves (x_ptr += ...) starts each row from its own value again.
    kernel = ONE_BLOCK_SOFTMAX.replace(*edit) if edit else ONE_BLOCK_SOFTMAX
    source = (EXAMPLES / "softmax.py").read_text()
    source = source[:source.index("@triton.jit")] + kernel + source[source.index("def softmax(") + 12:]
    source = source.replace("softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=128)",
                            "softmax_kernel[(n_rows,)](x, out, n_rows, n_cols, x.stride(0), out.stride(0), "
                            "BLOCK=triton.next_power_of_2(n_cols))")
    problem = _problem(tmp_path, _with_shapes(source, '[{"rows": 5, "cols": 300}, {"rows": 11, "cols": 1000}]'))
    new = _rewrite(problem.read_text(), "softmax")
    assert "rows_per_program = max(1, min(8, 4096 // triton.next_power_of_2(n_cols)))" in new
    assert "_row_live = _row < n_rows" in new and "n_rows_total" not in new
    assert '"""One row, one block: the whole row loaded once."""\n    ' in new  # docstring kept first
    assert ("_x_ptr_first = x_ptr" in new and "        x_ptr = _x_ptr_first\n" in new) == bool(edit)
    assert_correct(problem, new, tmp_path)


@pytest.mark.parametrize("path, why", [
    (EXAMPLES / "matmul.py", "tl.dot: a tile kernel, not a row kernel"),
    (EXAMPLES / "vector_add.py", "each program handles a tile, not a row"),
    (CORPUS / "cross_entropy_vocab.py", "loops over the row with a runtime bound"),
    (RMSNORM, "loops over the row with a runtime bound"),
])
def test_recipe_rows_per_program_refuses_what_is_not_a_short_row_a_program(path, why):
    result = RowsPerProgram().rewrite(path.read_text(), "x")
    assert isinstance(result, str) and why in result


@pytest.mark.parametrize("edit, why", [
    (("    x_row = x_ptr + row * stride\n", "    x_row = x_ptr + row * stride\n    if n_cols == 0:\n        return\n"),
     "returns early"),
    (("    x_row = x_ptr + row * stride\n", "    x_row = x_ptr + row * stride + tl.program_id(1)\n"),
     "other axes or more than once"),
    ((LAUNCH, "rmsnorm_kernel[(n_rows, 2)]"), "its grid has 2 axes"),
    ((LAUNCH, "rmsnorm_kernel[(triton.cdiv(n_rows, 4),)]"), "divides a count into blocks"),
    ((LAUNCH, "rmsnorm_kernel[lambda meta: (n_rows // meta['BLOCK'],)]"), "meta-parameters"),
    ((LAUNCH, "rmsnorm_kernel[grids[0]]"), "cannot tell the row count"),
    (("        acc += x * x\n", "        acc += x * x\n        tl.atomic_add(out_ptr, 1.0)\n"), "atomics"),
])
def test_recipe_rows_per_program_refuses_hand_edited_kernels_and_grids(edit, why):
    assert why in refusal(RowsPerProgram(), _one_pass(RMSNORM, "rmsnorm"), "rmsnorm", edit)


def test_recipe_rows_per_program_refuses_a_file_it_already_rewrote():
    twice = RowsPerProgram().rewrite(_rewrite(_one_pass(RMSNORM, "rmsnorm"), "rmsnorm"), "rmsnorm")
    assert isinstance(twice, str) and "already handles several rows a program" in twice
