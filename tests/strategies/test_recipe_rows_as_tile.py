"""The rows_as_tile recipe (`-k recipe`): a kernel launched one program per short row gets
ROWS rows a program read as one 2-D tile, its reductions along the tile's columns; correct
in Triton's interpreter with a partial last program, and refused where a value could be more
than one block of a row."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from tests.analysis.conftest import load
from tests.conftest import ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.analysis.compiled import compile_offline
from tritonforge.analysis.launch_capture import capture_launches
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.rows_as_tile import RowsAsTile
from tritonforge.strategies.recipes.rows_per_program import RowsPerProgram

CORPUS = ROOT / "benchmarks" / "corpus"

# A row softmax in the style of Triton's tutorial (pointer arithmetic on a row start, a
# masked block, max and sum along axis 0), plus a per-row statistic stored as a scalar.
SOFTMAX = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    ENTRY = "softmax_with_max"


    @triton.jit
    def softmax_kernel(out_ptr, max_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_SIZE: tl.constexpr):
        """One row a program."""
        row_idx = tl.program_id(0)
        row_start_ptr = in_ptr + row_idx * in_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        row = tl.load(row_start_ptr + col_offsets, mask=col_offsets < n_cols, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator)
        tl.store(out_ptr + row_idx * out_stride + col_offsets, numerator / denominator, mask=col_offsets < n_cols)
        tl.store(max_ptr + row_idx, tl.max(row, 0))


    def softmax_with_max(x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        m = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](y, m, x, x.stride(0), y.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
        return y, m


    def reference(x):
        return torch.softmax(x.double(), dim=-1).to(x.dtype), x.max(dim=-1).values


    def make_inputs(seed, device, rows, cols):
        g = torch.Generator(device=device).manual_seed(seed)
        return (torch.randn(rows, cols, device=device, generator=g),)


    SHAPES = [{"rows": 4096, "cols": 100}]
    TEST_SHAPES = [{"rows": 150, "cols": 100}, {"rows": 3, "cols": 7}]
''')


def _rewrite(source: str, entry: str = "") -> str:
    result = RowsAsTile().rewrite(source, entry)
    assert isinstance(result, Rewrite), result
    return result.source


def _with_shapes(source: str, shapes: str) -> str:
    start = source.index("TEST_SHAPES = ")
    return source[:start] + f"TEST_SHAPES = {shapes}\n" + source[source.index("\n", start) + 1:]


def test_recipe_rows_as_tile_reads_many_short_rows_as_one_tile(tmp_path):
    # 64 columns: 64 rows a program, 150 rows in 3 programs, the last with 22.
    problem = tmp_path / "problem.py"
    problem.write_text(_with_shapes((CORPUS / "row_scale_many_rows.py").read_text(),
                                    '[{"rows": 150, "cols": 64}, {"rows": 37, "cols": 50}]'))
    new = _rewrite(problem.read_text())
    assert "i_t = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None])" in new
    assert "o_d = tl.arange(0, BD)[None, :]" in new
    assert "tl.sum(b_x * b_x, axis=1, keep_dims=True)" in new
    assert "mask=tl.where(_row_live, m_d, False)" in new
    assert "rows_a_tile = max(1, min(64, 4096 // BD))" in new
    assert "l2norm_fwd_kernel[(triton.cdiv(T, rows_a_tile),)](x, y, eps, D=D, BD=BD, n_rows_total=T, " \
           "ROWS=rows_a_tile)" in new
    assert_correct(problem, new, tmp_path)


def test_recipe_rows_as_tile_turns_every_form_of_reduction_to_the_columns(tmp_path):
    # 100 columns: blocks of 128, 32 rows a program; axis given by keyword, positionally or not at all.
    problem = tmp_path / "problem.py"
    problem.write_text(SOFTMAX)
    new = _rewrite(SOFTMAX)
    assert "tl.max(row, axis=1, keep_dims=True)" in new
    assert "tl.sum(numerator, axis=1, keep_dims=True)" in new
    assert "tl.max(row, 1, keep_dims=True)" in new
    assert "tl.store(max_ptr + row_idx, tl.max(row, 1, keep_dims=True), mask=_row_live)" in new
    assert '"""One row a program."""\n    _row_live = ' in new
    assert_correct(problem, new, tmp_path)


def test_recipe_rows_as_tile_compiles_for_sm90_to_16_byte_accesses(tmp_path):
    # A million rows of 64 fp32: one a program leaves 4 warps 4-byte accesses to 64 elements;
    # unrolled (rows_per_program), 8 rows of them, row after row; as a tile of 64 rows, one
    # load of the tile: 8 accesses of 16 bytes a thread.
    path = CORPUS / "row_scale_many_rows.py"
    x = torch.empty(1 << 20, 64, device="meta")
    got = {}
    for name, recipe in (("as given", None), ("unrolled", RowsPerProgram()), ("tile", RowsAsTile())):
        file = tmp_path / name.replace(" ", "_") / path.name
        file.parent.mkdir()
        file.write_text(path.read_text() if recipe is None else recipe.rewrite(path.read_text(), "").source)
        module = load(file, interpret=False)
        (record,) = capture_launches(lambda: module.l2norm_rows(x, 1e-6), ())
        facts = compile_offline(record)
        got[name] = (facts.ptx.global_loads, facts.ptx.global_stores)
    assert got == {"as given": ({32: 1}, {32: 1}), "unrolled": ({32: 8}, {32: 8}), "tile": ({128: 8}, {128: 8})}


@pytest.mark.parametrize("edit, why", [
    (("    row_minus_max = row - tl.max(row, axis=0)\n",
      "    row_minus_max = row - tl.max(row, axis=0)\n    for i in range(2):\n        numerator = row\n"), "loops"),
    (("col_offsets = tl.arange(0, BLOCK_SIZE)", "col_offsets = tl.arange(0, BLOCK_SIZE)[:, None]"), "indexes a value"),
    (("tl.exp(row_minus_max)", "tl.cumsum(row_minus_max, 0)"), "uses tl.cumsum"),
    (("tl.exp(row_minus_max)", "_helper(row_minus_max)"), "calls _helper"),
    (("tl.exp(row_minus_max)", "row_minus_max.sum()"), "calls row_minus_max.sum"),
    (("tl.sum(numerator)", "tl.sum(numerator, axis=1)"), "reduces along 1"),
    (("tl.max(row, 0)", "tl.max(row, 0, return_indices=True)[0]"), "indexes a value"),
    (("tl.max(row, 0)", "tl.max(row, 0, return_indices=True)"), "arguments beyond"),
    (("tl.max(row, axis=0)", "tl.max(row, axis=0) + tl.sum(tl.arange(0, 4), axis=0)"), "has a tl.arange other than"),
])
def test_recipe_rows_as_tile_refuses_what_could_be_more_than_one_block(edit, why):
    assert why in refusal(RowsAsTile(), SOFTMAX, "softmax_with_max", edit)


def test_recipe_rows_as_tile_refuses_long_rows_and_tiles():
    assert "runtime bound" in RowsAsTile().rewrite((CORPUS / "log_softmax_vocab.py").read_text(), "log_softmax")
    assert "tile, not a row" in RowsAsTile().rewrite((ROOT / "examples" / "vector_add.py").read_text(), "add")
