"""Rewrite recipes (`-k recipe`): each on a kernel where it applies (the result correct in
Triton's interpreter) and on kernels where it must refuse, with the reason; the strategy that
offers them to the search."""

from __future__ import annotations

import re

import pytest

from tests.conftest import EXAMPLES, FIXTURES, ROOT
from tritonforge.commands.optimize import OptimizeOptions, optimize
from tritonforge.commands.session import Session, SessionOptions
from tritonforge.domain.candidate import Candidate
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.search.loop import SearchConfig
from tritonforge.store import RunStore
from tritonforge.strategies.base import SearchState
from tritonforge.strategies.recipes import RecipeStrategy, Rewrite
from tritonforge.strategies.recipes.tile_order import GroupedTileOrder
from tritonforge.worker.timing import TimingConfig

MM_2D = FIXTURES / "problems" / "styles" / "matmul_2d_grid.py"
MM_1D = FIXTURES / "problems" / "styles" / "matmul_1d_grid.py"
CPU = EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=1))


def test_recipe_tile_order_groups_a_2d_tiled_matmul_and_stays_correct(tmp_path):
    result = GroupedTileOrder().rewrite(MM_2D.read_text(), "mm")
    assert isinstance(result, Rewrite) and "groups of 8" in result.note
    assert "pid_n, pid_m = tl.swizzle2d(tl.program_id(1), tl.program_id(0)," in result.source
    assert len(result.source.splitlines()) == len(MM_2D.read_text().splitlines())  # lines keep their numbers
    path = tmp_path / "grouped.py"
    path.write_text(result.source)
    with Session(MM_2D, SessionOptions(evaluation=CPU)) as session:
        assert session.evaluator.evaluate(path).correct  # 11 x 3 tiles, a remainder group: every tile once


def test_recipe_tile_order_groups_a_1d_grid_split_by_floor_division_and_stays_correct(tmp_path):
    result = GroupedTileOrder().rewrite(MM_1D.read_text(), "mm")
    assert isinstance(result, Rewrite)
    assert "pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n," in result.source
    assert "num_pid_m, num_pid_n, 8)" in result.source
    path = tmp_path / "grouped.py"
    path.write_text(result.source)
    with Session(MM_1D, SessionOptions(evaluation=CPU)) as session:
        assert session.evaluator.evaluate(path).correct


def test_recipe_tile_order_refuses_a_1d_grid_whose_tile_rows_it_cannot_find():
    source = MM_1D.read_text().replace("    num_pid_m = tl.cdiv(M, BLOCK_M)\n", "")
    assert "number of tile rows" in GroupedTileOrder().rewrite(source, "mm")


def test_recipe_tile_order_rewrites_the_example_matmul():
    result = GroupedTileOrder().rewrite((EXAMPLES / "matmul.py").read_text(), "matmul")
    assert isinstance(result, Rewrite) and result.note.startswith("matmul_kernel:")


def test_recipe_tile_order_after_tma_groups_the_descriptor_kernel_too(tmp_path):
    """After tma the GPU cases launch the descriptor kernel and CPU tensors the pointer one:
    grouping only the first kernel of the file would time the GPU's code unchanged."""
    from tritonforge.strategies.recipes.tma import TensorDescriptorLoads

    path = EXAMPLES / "matmul.py"
    described = TensorDescriptorLoads().rewrite(path.read_text(), "matmul")
    result = GroupedTileOrder().rewrite(described.source, "matmul")
    assert isinstance(result, Rewrite) and result.note.startswith("matmul_kernel, matmul_kernel_tma:")
    assert result.source.count("tl.swizzle2d(tl.program_id(1), tl.program_id(0),") == 2
    out = tmp_path / "grouped.py"
    out.write_text(result.source)
    with Session(path, SessionOptions(evaluation=CPU)) as session:
        assert session.evaluator.evaluate(out).correct


@pytest.mark.parametrize("path, why", [
    (EXAMPLES / "vector_add.py", "no tl.dot"),
    (ROOT / "benchmarks" / "corpus" / "matmul_dtype_configs.py", "come neither from tl.program_id(0) and (1)"),
])
def test_recipe_tile_order_refuses_what_it_cannot_reorder(path, why):
    result = GroupedTileOrder().rewrite(path.read_text(), "x")
    assert isinstance(result, str) and why in result


def test_recipe_tile_order_refuses_a_kernel_that_reads_its_ids_again_or_is_grouped_already():
    source = MM_2D.read_text()
    again = source.replace("    acc = tl.zeros(", "    rm = rm + 0 * tl.program_id(0)\n    acc = tl.zeros(")
    assert "come neither from" in GroupedTileOrder().rewrite(again, "mm")
    grouped = GroupedTileOrder().rewrite(source, "mm").source
    assert "already reorders its tiles" in GroupedTileOrder().rewrite(grouped, "mm")


def _state(best: Candidate) -> SearchState:
    return SearchState(problem_path=str(MM_2D), entry="mm", baseline_source=MM_2D.read_text(), best=best)


def test_recipe_strategy_offers_each_recipe_once_and_says_why_not():
    strategy = RecipeStrategy()
    embedding = ROOT / "benchmarks" / "corpus" / "embedding_out.py"
    assert strategy.applies(MM_2D.read_text(), "mm") and not strategy.applies(embedding.read_text(), "embedding")
    proposed = strategy.propose(_state(Candidate(MM_2D.read_text(), "baseline")), 4)
    assert [c.params["recipes"] for c in proposed] == [["split_k"], ["tile_order"], ["tma"]]
    grouped = proposed[1]
    assert grouped.origin == "recipes"
    then = strategy.propose(_state(grouped), 4)  # on the grouped file, the other recipes only
    assert [c.params["recipes"] for c in then] == [["tile_order", "split_k"], ["tile_order", "tma"]]
    assert strategy.describe_space()["not_applied"]["tile_order"] == "already in the best file"
    assert "fewer than two passes" in strategy.describe_space()["not_applied"]["row_one_pass"]
    [last] = strategy.propose(_state(then[0]), 4)  # grouped and split: the descriptors still apply
    assert last.params["recipes"] == ["tile_order", "split_k", "tma"]
    assert strategy.propose(_state(last), 4) == []


@pytest.mark.slow
def test_recipe_then_launch_values_in_one_run(tmp_path):
    options = OptimizeOptions(out=tmp_path / "run", evaluation=CPU,
                              search=SearchConfig(budget=4, minutes=None, per_round=4, patience=2))
    optimize(MM_2D, options)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        judged = {c.origin: ev["status"] for c, ev in store.judged()}
    assert judged.get("recipes") == "correct" and "launch_params" in judged


def _optimized(problem, tmp_path, budget=12) -> tuple[str, dict]:
    import json

    # Recipes, then launch values on what they made: one file as the result (no per-shape
    # dispatch). Five timed calls a case, and room for a second round: in the interpreter a
    # launch move can win a round on noise or on fewer programs, and the recipe then comes
    # again on the new best.
    steady = EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=5))
    options = OptimizeOptions(out=tmp_path / "run", evaluation=steady, strategies=["recipes", "launch_params"],
                              search=SearchConfig(budget=budget, minutes=None, per_round=6, patience=3))
    optimize(problem, options)
    return (tmp_path / "run" / "best.py").read_text(), json.loads((tmp_path / "run" / "summary.json").read_text())


@pytest.mark.slow
def test_recipe_search_reads_a_three_pass_softmax_row_once(tmp_path):
    import ast

    # Rows of many blocks: the interpreter's time follows the steps of a row's loops, and on
    # 300 columns a larger block (3 steps a pass) raced the recipe (1.76x against its 1.78x
    # in one run); on 2000, one load against sixteen blocks at 128 or two at 1024 a pass.
    problem = tmp_path / "softmax.py"
    shapes = 'TEST_SHAPES = [{"rows": 5, "cols": 300},'
    problem.write_text((EXAMPLES / "softmax.py").read_text().replace(shapes, shapes.replace("300", "2000")))
    assert '"cols": 2000}' in problem.read_text()
    best, summary = _optimized(problem, tmp_path)
    assert "row_one_pass" in summary["best"]["recipes"], summary["best"]
    branch = next(n for n in ast.walk(ast.parse(best)) if isinstance(n, ast.If) and ast.unparse(n.test) == "ROW_ONE_PASS")
    loads = [n for s in branch.body for n in ast.walk(s) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load"]
    assert len(loads) == 1  # the baseline loads each row three times


@pytest.mark.slow
def test_recipe_search_makes_a_two_kernel_chain_one_launch(tmp_path):
    from tests.strategies.test_recipe_fuse_elementwise import CHAIN, ENTRY, launches_in

    # Blocks that already cover the test shapes in one program: in the interpreter a run's time
    # follows its number of programs, so growing the blocks from 1024 would race the fusion
    # (and won it on CI at 48bd69f, ending with two launches).
    problem = tmp_path / CHAIN.name
    problem.write_text(CHAIN.read_text().replace("BLOCK_SIZE=1024)", "BLOCK_SIZE=4096)"))
    assert problem.read_text().count("BLOCK_SIZE=4096)") == 2
    best, summary = _optimized(problem, tmp_path)
    assert "fuse_elementwise" in summary["best"]["recipes"], summary["best"]
    assert launches_in(best, ENTRY) == 1
    # The last round searched the fused file, whose lines are not the problem's.
    basis = summary["launch_parameters"]["basis"]
    assert re.search(r"on candidate `(\w+)` \(line numbers are those of candidates/\1\.py\)$", basis), basis


def test_recipe_lineage_survives_launch_moves_and_names_what_changes_rounding():
    from tritonforge.strategies.recipes import recipes_in

    base = Candidate("base", "baseline")
    fused = Candidate("fused", "recipes", params={"recipes": ["fuse_elementwise"]}, parent=base.key)
    one_pass = Candidate("one pass", "recipes", params={"recipes": ["fuse_elementwise", "row_one_pass"]},
                         parent=fused.key)
    tuned = Candidate("tuned", "launch_params", params={"x.BLOCK": 1024}, parent=one_pass.key)
    found = recipes_in(tuned, [base, fused, one_pass, tuned])
    assert sorted(found) == ["fuse_elementwise", "row_one_pass"]
    assert found["fuse_elementwise"] == "" and "one block" in found["row_one_pass"]
    assert recipes_in(Candidate("other", "launch_params", parent=base.key), [base]) == {}
    split = Candidate("split", "recipes", params={"recipes": ["split_k"]}, parent=base.key)
    both = Candidate("per shape", "per_shape", params={"by": "x.numel()", "versions": [split.key]}, parent=tuned.key)
    assert sorted(recipes_in(both, [base, fused, one_pass, tuned, split])) == [
        "fuse_elementwise", "row_one_pass", "split_k"]


def test_recipe_order_follows_the_diagnosis_when_the_best_was_profiled():
    from tritonforge.diagnosis.model import Finding
    from tritonforge.strategies.recipes.strategy import RECIPES, by_findings

    recipes = [cls() for cls in RECIPES]
    # Without a profile the recipes keep their own order: each reads the source itself.
    assert by_findings(recipes, []) == (recipes, {})
    tiny = Finding(kind="launch_bound_tiny_grid", title="Tiny launch", score=0.9, evidence={})
    thrash = Finding(kind="l2_thrashing", title="L2 thrashing", score=0.4, evidence={})
    order, pointed = by_findings(recipes, [thrash, tiny])
    names = [r.name for r in order]
    # The strongest finding's recipes first (a tiny grid: collapse the two stages, split K),
    # then the weaker finding's, then the rest, none dropped.
    assert names[:2] == ["collapse_two_stage", "split_k"]
    assert set(names[2:4]) == {"row_one_pass", "tile_order"}
    assert sorted(names) == sorted(r.name for r in recipes)
    assert pointed["tile_order"] == ["l2_thrashing"] and pointed["split_k"] == ["launch_bound_tiny_grid"]


def test_recipe_row_one_pass_waits_where_no_case_takes_its_register_path():
    # log_softmax_vocab's rows are 128256 and 32000 long, past the 16384 held in registers:
    # the one-pass path would never run, so the candidate would time the original again.
    from tritonforge.analysis.launch_capture import ArgRecord, LaunchRecord

    path = ROOT / "benchmarks" / "corpus" / "log_softmax_vocab.py"
    source = path.read_text()

    def captured(*n_cols: int) -> dict:
        return {f"case {n}": [LaunchRecord("_log_softmax_fwd", (8, 1, 1), [ArgRecord("n_cols", "int", "i32", value=n)],
                                           8, 3, 1).to_json()] for n in n_cols}

    state = SearchState(problem_path=str(path), entry="log_softmax", baseline_source=source,
                        best=Candidate(source, "baseline"), captured=captured(128256, 32000))
    strategy = RecipeStrategy()
    proposed = {c.params["recipes"][-1] for c in strategy.propose(state, 20)}
    why = strategy.describe_space()["not_applied"]["row_one_pass"]
    assert "row_one_pass" not in proposed and {"row_online", "reverse_pass"} <= proposed
    assert "every case launches _log_softmax_fwd with more (32000, 128256)" in why
    state.captured = captured(128256, 5000)  # one case's rows fit
    assert "row_one_pass" in {c.params["recipes"][-1] for c in RecipeStrategy().propose(state, 20)}


def test_recipe_strategy_leaves_a_kernel_no_case_launches():
    # A long-row path beside the one the shapes take (probe round 12): three row recipes
    # rewrote only the looped kernel, and each candidate timed the same code again.
    from tests.analysis.test_replay import capture

    path = FIXTURES / "problems" / "styles" / "row_kernel_by_width.py"
    source = path.read_text()
    strategy = RecipeStrategy()
    state = SearchState(problem_path=str(path), entry="softmax", baseline_source=source,
                        best=Candidate(source, "baseline"), captured=capture(path))
    proposed = [c.params["recipes"][-1] for c in strategy.propose(state, 8)]
    why_not = strategy.describe_space()["not_applied"]
    for name in ("row_one_pass", "row_online", "reverse_pass"):
        assert name not in proposed
        assert why_not[name] == "it edits only _softmax_looped_kernel, which no case launches"
    assert "rows_per_program" in proposed  # the kernel the cases launch is still rewritten
