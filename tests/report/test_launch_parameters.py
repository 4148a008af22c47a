"""The launch parameters a run reports: each value, where it comes from, whether the search
may move it and why not; in summary.json, report.md and the console."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from tests.conftest import FIXTURES
from tritonforge.analysis.launch_sites import SearchSpace
from tritonforge.commands.optimize import OptimizeOptions, optimize
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.report.console import not_moved_text
from tritonforge.report.launch_parameters import launch_parameters, markdown_table, not_moved
from tritonforge.search.loop import NOTHING_TO_TUNE, SearchConfig
from tritonforge.strategies.launch.strategy import space_record
from tritonforge.worker.timing import TimingConfig

PROBLEMS = FIXTURES / "problems"
STYLES = PROBLEMS / "styles"


def _section(name: str, entry: str, moves: list[dict] | None = None) -> dict:
    record = space_record(SearchSpace.from_source((PROBLEMS / name).read_text(), entry))
    record["moves"] = moves or []
    return launch_parameters(record, "round 1's search space, on the baseline")


def _params(section: dict) -> dict[str, dict]:
    [site] = section["sites"]
    return {p["parameter"]: p for p in site["parameters"]}


def test_each_parameter_says_where_it_comes_from_and_why_it_stayed():
    pruned = {"order": 0, "description": "num_stages 3->4", "kind": "step", "ring": 1, "score": 0.0,
              "status": "pruned", "reason": "_scale_kernel has no loop: num_stages has nothing to pipeline"}
    section = _section("unmovable_block.py", "scale", [pruned])
    assert section["sites"][0]["kernel"] == "_scale_kernel" and section["sites"][0]["function"] == "scale"
    p = _params(section)
    assert p["BLOCK"]["free"] is False and "argument 'block' of the entry scale()" in p["BLOCK"]["why_not_moved"]
    assert p["num_warps"]["free"] is False and "4 if block < 2048 else 8" in p["num_warps"]["from"]
    stages = p["num_stages"]
    assert stages["free"] is True and stages["value"] == 3 and "Triton's default" in stages["from"]
    assert stages["why_not_moved"].startswith("every move was ruled out") and "no loop" in stages["why_not_moved"]
    assert "_scale_kernel.BLOCK = set at run time (argument 'block' of the entry scale())" in not_moved(section)


def test_a_free_value_with_a_move_proposed_is_not_listed_as_not_moved():
    proposed = {"order": 0, "description": "BLOCK_SIZE 128->256, num_warps 4->8", "kind": "step", "ring": 2,
                "score": 1.0, "status": "proposed", "reason": ""}
    section = _section("plain_add.py", "scale_add", [proposed])
    p = _params(section)
    assert p["BLOCK"]["free"] and p["num_warps"]["free"]
    assert p["num_warps"]["why_not_moved"] is None  # moved by the proposed move
    assert p["BLOCK"]["why_not_moved"] == "no move of it was considered in the last round"


def test_a_value_says_why_its_own_moves_were_ruled_out_before_a_joint_moves_reason():
    def pruned(description: str, reason: str) -> dict:
        return {"order": 0, "description": description, "kind": "step", "ring": 1, "score": 0.0,
                "status": "pruned", "reason": reason}
    few = "0.12 elements per thread (< 0.25): idle or duplicated threads"
    moves = [pruned("num_warps 4->8", few), pruned("num_warps 4->8, num_stages 3->4", "no loop: nothing to pipeline")]
    section = _section("plain_add.py", "scale_add", moves)
    assert _params(section)["num_warps"]["why_not_moved"] == f"every move was ruled out: {few}"


def test_report_table_and_console_list():
    section = _section("unmovable_env.py", "scale")
    table = "\n".join(markdown_table(section))
    assert "## Launch parameters" in table and "| launch | parameter | value | free |" in table
    assert "config[\"block\"]" in table and "| num_stages | set at run time | no |" in table
    assert "No Triton launch" in "\n".join(markdown_table({"basis": "", "sites": []}))
    imported = {"basis": "", "sites": [], "unreached": {"axpy_kernel": "imported from _kernels: only kernels ..."}}
    assert "axpy_kernel is imported from _kernels" in "\n".join(markdown_table(imported))
    console = Console(width=200, record=True)
    console.print(not_moved_text({"improved": False, "launch_parameters": section}, most=2))
    text = console.export_text()
    assert text.startswith("not moved:") and "_scale_kernel.BLOCK = set at run time" in text
    assert "and 1 more" in text
    assert not_moved_text({"improved": True, "launch_parameters": section}) is None
    none_found = not_moved_text({"improved": False, "launch_parameters": {"basis": "", "sites": []}})
    assert none_found is not None and "no Triton launch was found" in none_found.plain
    said = not_moved_text({"improved": False, "launch_parameters": imported})
    assert said is not None and said.plain.startswith("not moved: no launch site in the problem file: axpy_kernel is")


def _options(out, budget=3) -> OptimizeOptions:
    return OptimizeOptions(out=out, evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)),
                           search=SearchConfig(budget=budget, minutes=None, per_round=3, patience=3))


@pytest.mark.slow
def test_optimize_with_nothing_movable_says_why(tmp_path):
    # Launch values only: the hints recipe would rewrite this kernel's masks.
    options = _options(tmp_path / "run")
    options.strategies = ["launch_params"]
    outcome = optimize(PROBLEMS / "unmovable_env.py", options)
    s = json.loads(outcome.files["summary"].read_text())
    assert s["candidates_tried"] == 0 and s["stop_reason"] == NOTHING_TO_TUNE
    section = s["launch_parameters"]
    assert section["basis"] == "round 1's search space, on the baseline"
    block = _params(section)["BLOCK"]
    assert block["free"] is False and block["why_not_moved"]
    report = outcome.files["report"].read_text()
    assert "## Launch parameters" in report and "| `_scale_kernel` (line" in report
    assert NOTHING_TO_TUNE in report


@pytest.mark.slow
def test_a_computed_value_moves_once_captured_and_the_callers_value_says_why_not(tmp_path):
    # Statically num_warps = `4 if block < 2048 else 8` is not free (see above); once the run has
    # captured the baseline's launch, the branch the case took is rewritten. BLOCK stays the caller's.
    outcome = optimize(PROBLEMS / "unmovable_block.py", _options(tmp_path / "run"))
    s = json.loads(outcome.files["summary"].read_text())
    assert s["candidates_tried"] >= 1
    p = _params(s["launch_parameters"])
    assert p["num_warps"]["free"] is True and "computed at run time" in p["num_warps"]["from"]
    assert p["BLOCK"]["free"] is False and "argument 'block' of the entry" in p["BLOCK"]["why_not_moved"]
    # The value the launch received (the caller's, not the file's): shown, not moved.
    assert "| BLOCK | 64 | no | argument 'block' of the entry" in outcome.files["report"].read_text()


@pytest.mark.slow
def test_a_strategy_left_out_of_the_run_says_why_part_by_part(tmp_path):
    # Probe round 12: with no recipe applying, the recipe strategy was dropped before round 1
    # and its refusals were nowhere in the run.
    outcome = optimize(STYLES / "json_config.py", _options(tmp_path / "run", budget=1))
    s = json.loads(outcome.files["summary"].read_text())
    why = s["not_applied"]["recipes"]
    assert why["persistent_grid"] == "_row_sumsq_kernel: its launch passes arguments with * or **"
    assert set(why) >= {"row_one_pass", "split_k", "hints"}
    assert "Not run: `recipes`, which has nothing for this file (row_one_pass: " in outcome.files["report"].read_text()


@pytest.mark.slow
def test_recipes_that_ran_still_say_why_the_others_did_not(tmp_path):
    # Probe round 24: once one recipe applied, the others' refusals were only in the store.
    outcome = optimize(FIXTURES.parent.parent / "examples" / "softmax.py", _options(tmp_path / "run", budget=1))
    s = json.loads(outcome.files["summary"].read_text())
    assert "recipes" not in s["not_applied"]
    refused = s["recipes_refused"]
    assert "row_one_pass" not in refused and refused["tile_order"] == "softmax_kernel: no tl.dot: not a tiled product"
    report = outcome.files["report"].read_text()
    assert "Recipes not applied to the problem as given: " in report and "tile_order: softmax_kernel: no tl.dot" in report
