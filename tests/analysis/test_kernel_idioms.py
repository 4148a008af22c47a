"""Launch values of Triton 3.x kernel idioms (probe rounds 24 and 25): tiles given only as a
block pointer's block_shape, per-loop pipelining options, a chunk count computed from the
block, and work splits that the grid reads too."""

from __future__ import annotations

from tests.analysis.test_replay import captured_space
from tests.conftest import FIXTURES
from tritonforge.analysis.launch_sites import SearchSpace, entry_of
from tritonforge.strategies.launch.rewrite import apply_assignment

STYLES = FIXTURES / "problems" / "styles"


def space_of(name: str) -> SearchSpace:
    source = (STYLES / name).read_text()
    return SearchSpace.from_source(source, entry_of(source))


def test_block_shape_of_a_block_pointer_makes_tiles_and_dot_dimensions():
    scale = space_of("block_ptr_tile_scale.py")
    assert all(scale.by_id[f"_scale_shift_kernel.{d}"].free for d in ("BLOCK_M", "BLOCK_N"))
    matmul = space_of("block_ptr_matmul.py")
    facts = matmul.sites[0].facts
    assert facts.dots == (("BLOCK_M", "BLOCK_N", "BLOCK_K"),)
    k = matmul.by_id["_matmul_kernel.BLOCK_K"]
    assert k.free and min(k.legal) == 16  # a tl.dot dimension: 16 at least


def test_per_loop_pipelining_options_move_within_their_own_legal_values():
    space = space_of("range_num_stages_constexpr.py")
    stages, unroll = space.by_id["matvec_kernel.NUM_STAGES"], space.by_id["matvec_kernel.UNROLL"]
    assert stages.free and stages.legal == (1, 2, 3, 4, 5, 6)
    assert unroll.free and unroll.legal == (1, 2, 4, 8)
    assert any("not what it computes" in r for r in stages.relations)
    # The kernel's one loop sets its own num_stages: the launch's option pipelines nothing.
    assert not space.sites[0].facts.has_loop
    out = apply_assignment(space, {"matvec_kernel.NUM_STAGES": 3, "matvec_kernel.UNROLL": 2})
    assert "NUM_STAGES=3" in out and "UNROLL=2" in out
    # A loop flag that is a power of two but carries meaning is still refused.
    flag = space.source.replace("num_stages=NUM_STAGES, ", "").replace(
        "acc += tl.sum(a * xv[None, :], axis=1)", "acc += tl.sum(a * xv[None, :], axis=1) * NUM_STAGES")
    assert not SearchSpace.from_source(flag, "matvec").by_id["matvec_kernel.NUM_STAGES"].free


def test_static_range_chunks_follow_the_block_their_count_is_computed_from():
    space, _ = captured_space(STYLES / "static_range_chunks.py")
    chunks = space.by_id["_l2_norm_fwd_kernel.NUM_CHUNKS"]
    assert not chunks.free and "computed from _l2_norm_fwd_kernel.BLOCK, it follows a move of it" in chunks.why
    block = space.by_id["_l2_norm_fwd_kernel.BLOCK"]
    case = block.replayed.case(space.runtime)
    target = block.per_case[case] // 2
    out = apply_assignment(space, {block.id: target})  # the cap moves; NUM_CHUNKS is not held
    assert "MAX_FUSED_SIZE = 4096" not in out and "NUM_CHUNKS = triton.cdiv(n_cols, BLOCK)" in out
    assert not space.sites[0].facts.has_loop  # static_range loops are unrolled: no num_stages to pipeline


def test_a_chunk_count_made_with_divmod_follows_the_block():
    # `div, mod = divmod(vocab, MAX_FUSED_SIZE); n_chunks = div + (mod != 0)`: before, divmod
    # was not replayed, the count read only the 0, and every move of the block was ruled out.
    space, _ = captured_space(STYLES / "divmod_chunks.py")
    chunks = space.by_id["_chunked_cross_entropy_forward.N_CHUNKS"]
    assert "reads 128 (line 16)" in chunks.why
    out = apply_assignment(space, {"_chunked_cross_entropy_forward.BLOCK_SIZE": 1024})
    assert "MAX_FUSED_SIZE = 1024" in out and "n_chunks = div + (mod != 0)" in out


def test_a_cap_set_in_a_branch_replay_cannot_decide_is_told_by_its_captured_value():
    # fla: `if check_shared_mem("hopper", idx): CONST_TILING = 128 elif ...: 64 else: 16`, the
    # tests asking the driver for shared memory. Before, CONST_TILING came from the capture,
    # read no literal, and every move of BK and BV was ruled out.
    space, _ = captured_space(STYLES / "fla_shared_mem_tiers.py")
    bk = space.by_id["chunk_state_kernel.BK"]
    fallback = 1 + space.source.splitlines().index("        CONST_TILING = 16")  # taken without a GPU
    assert bk.free and f"16 (line {fallback})" in bk.why
    out = apply_assignment(space, {bk.id: 32})
    assert "        CONST_TILING = 32\n" in out and "CONST_TILING = 128" in out and "CONST_TILING = 64" in out
    # Branches that assign the same value cannot be told apart: nothing is guessed.
    same = space.source.replace("CONST_TILING = 64", "CONST_TILING = 16")
    tied, _ = captured_space(STYLES / "fla_shared_mem_tiers.py", source=same)
    assert f"(line {fallback})" not in tied.by_id["chunk_state_kernel.BK"].why


def test_autotune_and_heuristics_applied_as_calls_are_read_like_decorators():
    # Before, the wrapper's name was launched but its configs were unseen: "BLOCK_M is not
    # passed at the launch", and nothing was proposed.
    space, _ = captured_space(STYLES / "autotune_call_wrapper.py")
    configs = space.by_id["_row_dot_kernel.autotune_configs"]
    assert configs.free and len(configs.current) == 2 and space.sites[0].autotuned
    assert "@triton.heuristics" in space.by_id["_row_dot_kernel.EVEN_N"].why
    wider = configs.current + (configs.current[0].with_values(BLOCK_N=64, num_warps=2),)
    out = apply_assignment(space, {configs.id: wider})
    assert 'triton.Config({"BLOCK_M": 1, "BLOCK_N": 64}, num_warps=2, num_stages=1)' in out
    assert "_row_dot_autotuned = triton.autotune(configs=_CONFIGS" in out
    # One kernel wrapped under two names, each its own configs: neither is taken for the other.
    twice = space.source + "\n_other = triton.autotune(configs=_CONFIGS[:1], key=['M'])(_row_dot_kernel)\n"
    assert not SearchSpace.from_source(twice, "row_dot").sites


def test_autotune_made_inside_a_cached_helper_is_read_and_one_unread_keeps_launch_moves_off(tmp_path):
    # xformers' way (probe round 26): the autotuner is made on first use inside an
    # lru_cache'd helper and kept in a dict. Before, its configs were unseen and a num_stages
    # keyword inserted at the launch clashed with them: every candidate an error.
    path = STYLES / "xformers_cached_autotune.py"
    space, _ = captured_space(path)
    configs = space.by_id["_scale_shift_kernel.autotune_configs"]
    assert configs.free and len(configs.current) == 2 and space.sites[0].autotuned
    out = apply_assignment(space, {configs.id: configs.current[1:]})
    assert '_TUNED[dtype] = triton.autotune(configs=[\n' in out and '], key=["N"])(_scale_shift_kernel)' in out
    # One wrapper per dtype: neither is read as the kernel's, and what their configs set is
    # not moved at the launch.
    twice = tmp_path / path.name
    twice.write_text(path.read_text().replace(
        "_TUNED = {}", '_TUNED = {torch.float16: triton.autotune(configs=_configs()[:1], key=["N"])(_scale_shift_kernel)}'))
    space, _ = captured_space(twice)
    assert not space.sites[0].autotuned
    stages = space.by_id["_scale_shift_kernel.num_stages"]
    assert not stages.free and "went through @triton.autotune (2 configs)" in stages.why
    assert not any(t.free for t in space.tunables)


def test_a_split_factor_is_free_only_where_the_grid_reads_it_too():
    space, _ = captured_space(STYLES / "split_rows_literal_grid.py")
    split = space.by_id["column_sum_kernel.ROWS_PER_PROG"]
    assert split.free and "splits the work over programs" in " ".join(split.relations)
    # The same loop bound with a grid that does not read it may carry meaning: not moved.
    fixed = space.source.replace("grid = (triton.cdiv(n_rows, ROWS_PER_PROG),", "grid = (triton.cdiv(n_rows, 4),")
    alone = SearchSpace.from_source(fixed, "column_sum").by_id["column_sum_kernel.ROWS_PER_PROG"]
    assert not alone.free and "may carry meaning" in alone.why
    # A persistent grid's program count moves its multiplier, never the stand-in SM count
    # used where no GPU answers.
    space, _ = captured_space(STYLES / "persistent_programs_per_sm.py")
    out = apply_assignment(space, {"fast_gelu_kernel.NUM_PROGS": 16})
    assert "PROGRAMS_PER_SM = 4" in out and "NUM_SMS = 4" in out


def test_a_split_a_def_grid_reads_by_its_host_name_is_free():
    # `def grid(META)` closing over the host's ROWS_PER_PROG (and reading BLOCK_COLS from META):
    # before, only a grid assigned as an expression had its names read.
    source = (STYLES / "split_rows_literal_grid.py").read_text()
    line = "    grid = (triton.cdiv(n_rows, ROWS_PER_PROG), triton.cdiv(n_cols, BLOCK_COLS))\n"
    assert line in source
    as_def = source.replace(line, "\n    def grid(META):\n        return (triton.cdiv(n_rows, ROWS_PER_PROG),"
                                  " triton.cdiv(n_cols, META['BLOCK_COLS']))\n\n")
    space = SearchSpace.from_source(as_def, "column_sum")
    split = space.by_id["column_sum_kernel.ROWS_PER_PROG"]
    assert space.sites[0].grid_kind == "def"
    assert split.free and "splits the work over programs" in " ".join(split.relations)
    assert "ROWS_PER_PROG = 8" in apply_assignment(space, {split.id: 8})


def test_a_kernel_under_a_decorator_analysis_does_not_read_is_named_with_it():
    source = '''import functools
import triton
import triton.language as tl

ENTRY = "copy"


@functools.partial(triton.jit, do_not_specialize=["n"])
def _copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def copy(x, out):
    _copy_kernel[(triton.cdiv(x.numel(), 512),)](x, out, x.numel(), BLOCK=512)
    return out
'''
    why = SearchSpace.from_source(source, "copy").unreached(["_copy_kernel"])["_copy_kernel"]
    assert "under @functools.partial(triton.jit" in why and "not read as @triton.jit" in why


def test_a_tile_computed_from_two_constexprs_stays_a_power_of_two():
    # `tl.arange(0, BLOCK_SIZE // VEC)` (probe round 25): VEC above the block compiled to an error.
    from tritonforge.strategies.launch import check_assignment

    source = '''import triton
import triton.language as tl

ENTRY = "scale"


@triton.jit
def _scale_kernel(x, out, n, BLOCK_SIZE: tl.constexpr, VEC: tl.constexpr):
    rows = tl.program_id(0) * (BLOCK_SIZE // VEC) + tl.arange(0, BLOCK_SIZE // VEC)
    offs = rows[:, None] * VEC + tl.arange(0, VEC)[None, :]
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, out):
    _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), 1024, 8, num_warps=4)
    return out
'''
    space = SearchSpace.from_source(source, "scale")
    assert space.sites[0].facts.arange_ends == ("BLOCK_SIZE // VEC",)
    assert check_assignment(space, {"_scale_kernel.VEC": 16}) is None
    assert "would be 0" in check_assignment(space, {"_scale_kernel.VEC": 2048})
