"""The persistent_grid recipe on tiled products (`-k recipe`): a `tl.dot` kernel that loads its
tiles through tensor descriptors, launched one program per output tile, loops over the tiles
in the launch's order on one program per SM (4 programs on CPU tensors, so in the
interpreter each takes several tiles); a grouped order stays grouped; correct in Triton's
interpreter, refused where the loop would differ."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.persistent_grid import PersistentGrid
from tritonforge.strategies.recipes.tile_order import GroupedTileOrder
from tritonforge.strategies.recipes.tma import TensorDescriptorLoads

MATMUL = EXAMPLES / "matmul.py"
LOOP = "for tile_id in range(tl.program_id(0), N_TILES, tl.num_programs(0)):"


def _tma() -> str:
    return TensorDescriptorLoads().rewrite(MATMUL.read_text(), "matmul").source


def test_recipe_persistent_grid_loops_a_descriptor_matmul_over_its_tiles_in_the_launch_order(tmp_path):
    result = PersistentGrid().rewrite(_tma(), "matmul")
    assert isinstance(result, Rewrite), result
    # the pointer kernel (CPU tensors, unaligned operands) is left as it was
    assert result.note.startswith("matmul_kernel_tma: persistent grid") and "over the tiles" in result.note
    src = result.source
    assert src.count(LOOP) == 1
    # tile t is the program (t % TILES_0, t // TILES_0) of the 2-D grid: axis 0 varies fastest
    assert "pid_m = tl.cast(tile_id % TILES_0, tl.int32)" in src
    assert "pid_n = tl.cast(tile_id // TILES_0, tl.int32)" in src
    assert "tiles_0 = triton.cdiv(M, BLOCK_M)" in src and "n_tiles = tiles_0 * (triton.cdiv(N, BLOCK_N))" in src
    assert "matmul_kernel_tma[(programs,)](" in src and "N_TILES=n_tiles, TILES_0=tiles_0)" in src
    assert "programs_per_sm = 1\n" in src and "multi_processor_count * programs_per_sm" in src
    assert_correct(MATMUL, src, tmp_path)  # aligned CPU tensors take the descriptor kernel too


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
