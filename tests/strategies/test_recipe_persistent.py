"""The persistent_grid recipe (`-k recipe`): a kernel launched with one program per row (or per
block) runs its body in a loop over the original program ids, on a grid of a few programs per
SM (4 on CPU tensors, so in the interpreter each program takes several ids); correct in
Triton's interpreter, and refused where the loop would not be the same computation."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import EXAMPLES, FIXTURES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.launch.rewrite import rewrite as move_launch
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.persistent_grid import PersistentGrid

CORPUS = ROOT / "benchmarks" / "corpus"
ROWS = CORPUS / "row_scale_many_rows.py"
ENTRY = "l2norm_rows"
LOOP = "range(tl.program_id(0), N_TILES, tl.num_programs(0)):"


def _kernels_loop(source: str) -> list[str]:
    """Names of the kernels (functions with a decorator) whose code reads tl.num_programs."""
    tree = ast.parse(source)
    return [f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f.decorator_list
            and "num_programs" in ast.unparse(f)]


def test_recipe_persistent_grid_loops_over_the_rows_of_the_corpus_problem(tmp_path):
    result = PersistentGrid().rewrite(ROWS.read_text(), ENTRY)
    assert isinstance(result, Rewrite), result
    src = result.source
    assert f"for i_t in {LOOP}" in src  # `i_t = tl.program_id(0)` became the loop variable
    assert "        x_tile = x  #" in src and "x_tile += i_t * D" in src  # each row moves its own copy
    assert "l2norm_fwd_kernel[(programs,)](x, y, eps, D=D, BD=BD, N_TILES=n_tiles, num_warps=warps)" in src
    assert "warps = 4  # the launch's warps" in src  # Triton's default, now in a local
    assert "programs_per_sm = max(1, min(32, 64 // warps))" in src and "multi_processor_count * programs_per_sm" in src
    assert _kernels_loop(src) == ["l2norm_fwd_kernel"]
    assert_correct(ROWS, src, tmp_path)


def test_recipe_persistent_grid_starts_no_more_programs_than_the_sms_hold_at_the_launch_warps():
    # 32 programs of 4 warps are 128 warps an SM, which holds 64: half would wait for a second
    # wave and then run a whole share of ids. A launch move of num_warps reaches the count.
    src = PersistentGrid().rewrite(ROWS.read_text(), ENTRY).source
    one_warp = move_launch(src, {"l2norm_fwd_kernel.num_warps": 1})
    assert "    warps = 1  # the launch's warps" in one_warp and "num_warps=warps)" in one_warp
    count = next(line.split(" = ", 1)[1] for line in src.splitlines() if "programs_per_sm = " in line)
    assert {w: eval(count, {"warps": w}) for w in (1, 4, 8, 32)} == {1: 32, 4: 16, 8: 8, 32: 2}
    given = ROWS.read_text().replace("BD=BD)", "BD=BD, num_warps=8 if D > 128 else 2)")
    assert "    warps = 8 if D > 128 else 2  # the launch's warps" in PersistentGrid().rewrite(given, ENTRY).source


@pytest.mark.parametrize("problem, entry, expect", [
    (EXAMPLES / "softmax.py", "softmax", f"for row in {LOOP}"),
    # `row = tl.program_id(0).to(tl.int64)`: the loop variable is an int in the interpreter
    (CORPUS / "rmsnorm_block_helper.py", "rms_norm", "row = tl.cast(tile_id, tl.int32).to(tl.int64)"),
])
def test_recipe_persistent_grid_stays_correct_on_other_row_and_block_kernels(problem, entry, expect, tmp_path):
    result = PersistentGrid().rewrite(problem.read_text(), entry)
    assert isinstance(result, Rewrite), result
    assert expect in result.source
    assert _kernels_loop(result.source)
    assert_correct(problem, result.source, tmp_path)


HELPER = '''@triton.jit
def _first_row():
    return tl.program_id(0) * 0


@triton.jit
def l2norm_fwd_kernel('''


@pytest.mark.parametrize("edit, why", [
    (("    i_t = tl.program_id(0)\n", "    i_t = tl.program_id(0) + tl.program_id(1)\n"),
     "axis other than a constant 0"),
    (("    i_t = tl.program_id(0)\n", "    i_t = tl.program_id(0)\n    j = tl.program_id(0)\n"), "more than once"),
    (("    i_t = tl.program_id(0)\n", "    i_t = tl.program_id(0)\n    if i_t >= 1 << 30:\n        return\n"),
     "returns early"),
    (("    i_t = tl.program_id(0)\n", "    i_t = tl.program_id(0) + _first_row()\n"), "calls _first_row"),
    (("[(T,)]", "[(T, 1)]"), "not 1-D"),
    (("[(T,)]", "[(8,)]"), "constant number of programs"),
    (("[(T,)]", "[lambda meta: (triton.cdiv(T, meta['ROWS']),)]"), "reads ROWS from the launch's meta-parameters"),
])
def test_recipe_persistent_grid_refuses_what_would_not_be_the_same_computation(edit, why):
    source = ROWS.read_text().replace("@triton.jit\ndef l2norm_fwd_kernel(", HELPER)
    assert why in refusal(PersistentGrid(), source, ENTRY, edit)


def test_recipe_persistent_grid_refuses_2d_grids_and_kernels_made_persistent():
    # (a tiled tl.dot kernel's 2-D grid is looped over: test_recipe_persistent_tiles.py)
    assert "axis other than" in PersistentGrid().rewrite((CORPUS / "embedding_out.py").read_text(), "embedding")
    once = PersistentGrid().rewrite(ROWS.read_text(), ENTRY).source
    assert "already loops over programs" in PersistentGrid().rewrite(once, ENTRY)


def test_recipe_persistent_grid_refuses_a_grid_already_sized_by_the_sm_count():
    # Liger's backward partials: `grid = (sm_count,)` with sm_count from
    # multi_processor_count (1 on CPU tensors): on a GPU the rewrite would start as many
    # programs as before, each taking one id (probe round 27: two such candidates a run).
    liger = FIXTURES / "problems" / "styles" / "liger_sm_partials.py"
    why = PersistentGrid().rewrite(liger.read_text(), "rms_norm_backward")
    assert why == "_rms_norm_backward_kernel: its number of programs is already sized by the SM count (sm_count)"


@pytest.mark.parametrize("problem, entry, tile", [
    (CORPUS / "relu_squared_positional.py", "relu_squared", "BLOCK_SIZE"),  # `lambda META`, a positional literal
    (CORPUS / "bias_gelu_residual_chain.py", "bias_gelu_residual", "BLOCK_SIZE"),  # one `meta` grid, two kernels
    (EXAMPLES / "col_sum.py", "col_sum", "BLOCK_N"),  # `grid = (triton.cdiv(n_cols, BLOCK_N),)`
])
def test_recipe_persistent_grid_leaves_programs_sized_by_a_launch_value_to_the_launch_search(problem, entry, tile):
    why = PersistentGrid().rewrite(problem.read_text(), entry)
    assert isinstance(why, str) and f"its number of programs follows {tile}, which its launch passes" in why


def test_recipe_persistent_grid_launches_are_captured_on_cpu_tensors_as_on_a_gpu(tmp_path):
    # The rewrite sizes its grid by the SM count on CUDA tensors; a capture on CPU tensors
    # (tensors saying they are on CUDA) once failed there with "Torch not compiled with CUDA
    # enabled", losing the rewrite's compile facts and its own launch-tuning turn.
    from tests.analysis.test_replay import capture

    path = tmp_path / "persistent.py"
    path.write_text(PersistentGrid().rewrite(ROWS.read_text(), ENTRY).source)
    captured = capture(path)
    assert sorted(captured) == ["rows=37, cols=50", "rows=8, cols=64"]
    for case, [launch] in captured.items():
        rows = int(case.split(",")[0].removeprefix("rows="))
        assert launch["grid"][0] == min(rows, 132 * 16)  # the GPU path: 132 SMs, 16 programs of 4 warps
