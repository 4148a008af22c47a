"""Single tiles: a block that must cover a whole argument is never moved below what the
captured launches received for it; blocks that stride, loop or run below it stay free."""

from __future__ import annotations

import ast
import textwrap

from tests.analysis.test_replay import STYLES, captured_space
from tritonforge.analysis.launch_sites.coverage import single_tiles


def tiles_of(body: str) -> tuple[tuple[str, str], ...]:
    fn = ast.parse(textwrap.dedent(body)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    constexprs = {a.arg for a in fn.args.args if a.annotation is not None}
    return single_tiles(fn, constexprs, tuple(a.arg for a in fn.args.args))


def test_a_row_read_in_one_tile_must_cover_the_row():
    assert tiles_of("""
        def k(x_ptr, n_cols, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < n_cols)
    """) == (("BLOCK", "n_cols"),)
    # broadcast into a 2-D mask, written either way round, and tl.arange compared inline
    assert tiles_of("""
        def k(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
            rows = tl.program_id(0) * BM + tl.arange(0, BM)
            cols = tl.arange(0, BN)
            x = tl.load(x_ptr, mask=(rows[:, None] < M) & (N > cols[None, :]))
            y = tl.load(x_ptr, mask=tl.arange(0, BM) < M)
    """) == (("BN", "N"), ("BM", "M"))


def test_blocks_that_stride_or_loop_are_not_single_tiles():
    assert tiles_of("""
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
    """) == ()
    assert tiles_of("""
        def k(x_ptr, n_cols, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            for start in range(0, n_cols, BLOCK):
                x = tl.load(x_ptr + start + cols, mask=cols < n_cols - start)
                y = tl.load(x_ptr + start + cols, mask=start + cols < n_cols)
    """) == ()
    # the bound is rebound in the body, or the tile name is: neither is a single tile
    assert tiles_of("""
        def k(x_ptr, n_cols, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            n_cols -= 1
            cols = cols + 1
            x = tl.load(x_ptr + cols, mask=cols < n_cols)
    """) == ()


def test_the_bound_is_what_the_launch_received_and_prunes_the_legal_blocks():
    space, _ = captured_space(STYLES / "dataclass_asdict.py")
    block = space.by_id["softmax_kernel.BLOCK"]
    assert block.current == 512 and block.free
    assert min(block.legal) == 512  # n_cols is 500: 256 would skip columns
    assert any("BLOCK >= n_cols (500 on " in r for r in block.relations)


def test_a_block_that_runs_below_the_bound_keeps_its_range(tmp_path):
    # A kernel that reads only the first BLOCK columns on purpose: the baseline runs with
    # BLOCK < n_cols, so the mask is no coverage rule and smaller blocks stay legal.
    source = (STYLES / "dataclass_asdict.py").read_text()
    source = source.replace("    assert n_cols <= 512\n", "").replace("BLOCK=512", "BLOCK=256")
    path = tmp_path / "first_columns.py"
    path.write_text(source.replace("return torch.softmax(x, dim=1)", "return x"))
    space, _ = captured_space(path)
    block = space.by_id["softmax_kernel.BLOCK"]
    assert block.current == 256 and min(block.legal) == 1
    assert not any("one tile" in r for r in block.relations)
