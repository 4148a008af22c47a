"""The persistent_grid recipe on tiled products (`-k recipe`): a `tl.dot` kernel that loads its
tiles through tensor descriptors, launched one program per output tile, loops over the tiles
on one program per SM (4 programs on CPU tensors, so in the interpreter each takes several
tiles), in groups of 8 along the grid's first axis; an order tile_order grouped stays as it
was; correct in Triton's interpreter, refused where the loop would differ."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.persistent_grid import PersistentGrid
from tritonforge.strategies.recipes.tile_order import GroupedTileOrder
from tritonforge.strategies.recipes.tma import TensorDescriptorLoads

MATMUL = EXAMPLES / "matmul.py"
LOOP = "for tile_id in tl.range(tl.program_id(0), N_TILES, tl.num_programs(0), flatten=True):"


def _tma() -> str:
    return TensorDescriptorLoads().rewrite(MATMUL.read_text(), "matmul").source


def test_recipe_persistent_grid_loops_a_descriptor_matmul_over_its_tiles_in_groups(tmp_path):
    result = PersistentGrid().rewrite(_tma(), "matmul")
    assert isinstance(result, Rewrite), result
    # the pointer kernel (CPU tensors, unaligned operands) is left as it was
    assert result.note.startswith("matmul_kernel_tma: persistent grid") and "over the tiles" in result.note
    src = result.source
    assert src.count(LOOP) == 1
    # tile t, in groups of 8 ids of axis 0 by every id of axis 1: tl.swizzle2d of t as (t // tiles_1, t % tiles_1)
    assert "tiles_1 = N_TILES // TILES_0" in src
    assert ("tile_0, tile_1 = tl.swizzle2d(tl.cast(tile_id // tiles_1, tl.int32), tl.cast(tile_id % tiles_1, "
            "tl.int32),\n") in src and "TILES_0, tiles_1, 8)" in src
    assert "pid_m = tile_0\n" in src and "pid_n = tile_1\n" in src
    assert "tiles_0 = triton.cdiv(M, BLOCK_M)" in src and "n_tiles = tiles_0 * (triton.cdiv(N, BLOCK_N))" in src
    assert "matmul_kernel_tma[(programs,)](" in src and "N_TILES=n_tiles, TILES_0=tiles_0)" in src
    assert "programs_per_sm = 1\n" in src and "multi_processor_count * programs_per_sm" in src
    assert_correct(MATMUL, src, tmp_path)  # aligned CPU tensors take the descriptor kernel too


def test_recipe_persistent_grid_visits_every_tile_once_over_several_groups(tmp_path):
    # 11 x 3 tiles of 16: a whole group of 8 tile rows and a short one of 3, on 4 programs
    problem = tmp_path / "matmul.py"
    problem.write_text(MATMUL.read_text().replace("BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32",
                                                  "BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 16")
                       .replace('TEST_SHAPES = [{"M": 48, "N": 40, "K": 72}, {"M": 64, "N": 32, "K": 16}]',
                                'TEST_SHAPES = [{"M": 176, "N": 48, "K": 32}]'))
    assert "= 16, 16, 16" in problem.read_text() and '"M": 176' in problem.read_text()
    tma = TensorDescriptorLoads().rewrite(problem.read_text(), "matmul").source
    result = PersistentGrid().rewrite(tma, "matmul")
    assert isinstance(result, Rewrite) and "TILES_0, tiles_1, 8)" in result.source, result
    assert_correct(problem, result.source, tmp_path)


def test_recipe_persistent_grid_leaves_a_matmul_of_pointer_loads_alone():
    why = PersistentGrid().rewrite(MATMUL.read_text(), "matmul")
    assert isinstance(why, str) and "loads no tile through a tensor descriptor" in why


def test_recipe_persistent_grid_keeps_the_grouped_order_after_tma(tmp_path):
    grouped = GroupedTileOrder().rewrite(_tma(), "matmul").source
    result = PersistentGrid().rewrite(grouped, "matmul")
    assert isinstance(result, Rewrite), result
    src = result.source
    # swizzle2d reads the original grid's sizes where it read tl.num_programs
    ids = "pid_n, pid_m = tl.swizzle2d(tl.cast(tile_id // TILES_0, tl.int32), tl.cast(tile_id % TILES_0, tl.int32),"
    assert src.count(ids) == 1 and src.count("(N_TILES // TILES_0), TILES_0, 8)") == 1 and src.count(LOOP) == 1
    assert "tl.swizzle2d(tl.program_id(1), tl.program_id(0)," in src  # the pointer kernel's, as it was
    assert_correct(MATMUL, src, tmp_path)


BATCHED = ("    pid_n = tl.program_id(1)\n", "    pid_n = tl.program_id(1) + tl.program_id(2) * 0\n")


@pytest.mark.parametrize("edit, why", [
    (BATCHED, "tl.program_id(0) (and (1)) once each"),
    (("    offs_k = tl.arange(0, BLOCK_K)\n", "    offs_k = tl.arange(0, BLOCK_K)\n    if pid_m > M:\n        return\n"),
     "returns early"),
    (("    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))\n",
      "    grid = lambda meta: (triton.cdiv(M, meta['BLOCK_M']), triton.cdiv(N, meta['BLOCK_N']))\n"),
     None),  # a grid of the launch's own arguments is read: it applies
    (("    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))\n",
      "    grid = lambda meta: (triton.cdiv(M, meta['BLOCK_M']), triton.cdiv(N, meta['TILE']))\n"),
     "from the launch's meta-parameters"),
    (("    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))\n",
      "    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), 2)\n"),
     "its grid has 3 axes, its kernel reads 2"),
])
def test_recipe_persistent_grid_refuses_tiled_kernels_whose_loop_would_differ(edit, why):
    # edits of the matmul example, then tma: its descriptor kernel inherits them
    old, new = edit
    source = TensorDescriptorLoads().rewrite(MATMUL.read_text().replace(old, new), "matmul").source
    if why is None:
        assert isinstance(PersistentGrid().rewrite(source, "matmul"), Rewrite)
        return
    assert why in refusal(PersistentGrid(), source, "matmul", ("", ""))
