"""LaunchParamStrategy: neighbours first, steered by priors, findings and history; no repeats."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from types import SimpleNamespace

from tests.analysis.test_replay import captured_space
from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.analysis.launch_sites import SearchSpace, entry_of
from tritonforge.strategies.base import Candidate, Outcome, SearchState, Strategy, source_key
from tritonforge.strategies.launch import LaunchParamStrategy, check_assignment, rewrite

BLOCK, WARPS, STAGES = "add_kernel.BLOCK_SIZE", "add_kernel.num_warps", "add_kernel.num_stages"


def load(name: str) -> str:
    return (EXAMPLES / f"{name}.py").read_text()


def state_for(source: str, best: Candidate | None = None, history: list[Outcome] | None = None,
              findings: list | None = None, best_speedup: float = 1.0) -> SearchState:
    return SearchState(problem_path="problem.py", entry=entry_of(source), baseline_source=source,
                       best=best or Candidate(source, "baseline"), best_speedup=best_speedup,
                       history=history or [], findings=findings or [])


def child(parent: Candidate, changes: dict) -> Candidate:
    return Candidate(rewrite(parent.source, changes), "launch_params", params=changes, parent=parent.key)


def values(c: Candidate) -> dict:
    return SearchSpace.from_source(c.source, entry_of(c.source)).current


def ratio(a: int, b: int) -> float:
    return max(a, b) / min(a, b)


def test_first_proposals_are_neighbours_of_the_best_within_the_limit():
    source = load("vector_add")
    base = Candidate(source, "baseline")
    current = SearchSpace.from_source(source, "add").current
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(source), 4)
    leaps = {m.description for m in strategy.last_moves if m.kind == "leap"}
    assert len(got) == 4
    for c in got:
        assert c.origin == "launch_params" and c.parent == base.key
        assert values(c) == c.params and set(c.params) == set(current)  # the full assignment
        changed = {k for k in current if c.params[k] != current[k]}
        assert 1 <= len(changed) <= 2
        # Neighbours move x4 at most; a leap goes further, to a block sized for the hardware
        # (at most 64 elements per thread).
        if c.description in leaps:
            assert c.params[BLOCK] <= 64 * 32 * c.params[WARPS]
        else:
            assert all(ratio(c.params[k], current[k]) <= 4 for k in changed)
        ast.parse(c.source)
    # A 64-element block is tiny for a GPU: it grows first.
    assert got[0].params[BLOCK] > 64
    assert LaunchParamStrategy().propose(state_for(source), 0) == []


def test_num_stages_is_left_alone_where_there_is_no_loop_to_pipeline():
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(load("vector_add")), 50)
    assert got and all(c.params[STAGES] == 3 for c in got)
    assert any(m.status == "pruned" and "nothing to pipeline" in m.reason for m in strategy.last_moves)
    rms = LaunchParamStrategy().propose(state_for(load("rmsnorm")), 50)  # two loops over the row
    assert any(c.params["rmsnorm_kernel.num_stages"] != 3 for c in rms)


def test_descriptions_name_old_and_new_values():
    got = LaunchParamStrategy().propose(state_for(load("matmul")), 12)
    pattern = re.compile(r"^[A-Za-z_.]+ \d+->\d+(, [A-Za-z_.]+ \d+->\d+)*$")
    assert all(pattern.match(c.description) for c in got), [c.description for c in got]
    assert any(c.description.count("->") == 2 for c in got)  # moves of two values at once


def test_silu_mul_block_change_rewrites_the_one_shared_assignment():
    source = load("silu_mul")
    got = LaunchParamStrategy().propose(state_for(source), 1)
    assert got[0].description.startswith("BLOCK_SIZE 256->")
    diff = [(a, b) for a, b in zip(source.splitlines(), got[0].source.splitlines()) if a != b]
    assert [a.strip() for a, _ in diff] == ["BLOCK = 256"]


def test_2d_tiles_move_together():
    source = load("col_sum")
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(source), 50)
    tile_moves = [m for m in strategy.last_moves if m.kind == "tile"]
    assert tile_moves and all("BLOCK_M" in m.description and "BLOCK_N" in m.description for m in tile_moves)
    assert any(c.params["col_sum_kernel.BLOCK_M"] != 8 and c.params["col_sum_kernel.BLOCK_N"] != 16 for c in got)


def test_follows_a_direction_that_paid():
    source = load("vector_add")
    base = Candidate(source, "baseline")
    c128 = child(base, {BLOCK: 128})
    history = [Outcome(c128, "correct", speedup=1.6, faster=True)]
    got = LaunchParamStrategy().propose(state_for(source, c128, history, best_speedup=1.6), 3)
    assert got[0].params == {BLOCK: 256, WARPS: 4, STAGES: 3}
    assert got[0].parent == c128.key
    # It paid again: one more step the same way.
    c256 = got[0]
    history.append(Outcome(c256, "correct", speedup=2.1, faster=True))
    got = LaunchParamStrategy().propose(state_for(source, c256, history, best_speedup=2.1), 3)
    assert got[0].params[BLOCK] == 512


def test_stops_a_direction_that_got_slower():
    source = load("vector_add")
    base = Candidate(source, "baseline")
    c128 = child(base, {BLOCK: 128})
    c256 = child(c128, {BLOCK: 256})
    history = [Outcome(c128, "correct", speedup=1.6, faster=True), Outcome(c256, "correct", speedup=1.3)]
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(source, c128, history, best_speedup=1.6), 30)
    assert got and got[0].params[BLOCK] <= 128
    assert not any(c.params[BLOCK] >= 256 and c.params[WARPS] == 4 and c.params[STAGES] == 3 for c in got)
    assert any(m.status == "pruned" and "slower" in m.reason for m in strategy.last_moves)


def test_a_failed_value_is_not_approached_again_with_the_same_other_values():
    source = load("vector_add")
    base = Candidate(source, "baseline")
    c256 = child(base, {BLOCK: 256})
    history = [Outcome(c256, "compile_error", message="out of resources")]
    got = LaunchParamStrategy().propose(state_for(source, history=history), 30)
    assert got
    assert not any(c.params[BLOCK] >= 256 and c.params[WARPS] == 4 and c.params[STAGES] == 3 for c in got)


def test_a_tile_value_that_gave_wrong_results_is_not_approached_again_whatever_the_warps():
    # A row kernel whose one block must cover the row: 1024 -> 512 with 2 warps was wrong; 512
    # with 4 or 8 warps is as wrong (probe round 10 tried it twice more).
    source = rewrite(load("vector_add"), {BLOCK: 1024})
    base = Candidate(source, "baseline")
    wrong = child(base, {BLOCK: 512, WARPS: 2})
    history = [Outcome(wrong, "wrong", message="3984 of 4000 elements outside atol")]
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(source, history=history), 30)
    assert got and not any(c.params[BLOCK] <= 512 for c in got)
    assert any(m.status == "pruned" and "wrong" in m.reason for m in strategy.last_moves)


def test_findings_steer_the_first_move():
    source = rewrite(load("vector_add"), {BLOCK: 1024})  # a typical size: the prior alone is neutral

    def first(findings):
        return LaunchParamStrategy().propose(state_for(source, findings=findings), 1)[0].params

    grown = first([SimpleNamespace(kind="memory_bound_far_from_peak")])
    assert grown[BLOCK] > 1024
    for kind in ("register_spills", "launch_bound_tiny_grid"):
        p = first([{"kind": kind}])
        assert p[BLOCK] < 1024 or p[WARPS] > 4, kind


def test_never_repeats_and_runs_out():
    source = load("col_sum")
    strategy = LaunchParamStrategy()
    state = state_for(source)
    seen = {source_key(source)}
    for _ in range(60):
        got = strategy.propose(state, 5)
        if not got:
            break
        assert len(got) <= 5
        for c in got:
            assert c.key not in seen and not state.tried(c.key)
            seen.add(c.key)
            state.history.append(Outcome(c, "correct", speedup=1.0))
    else:
        raise AssertionError("the neighbourhood of a fixed best never ran out")
    assert len(seen) > 10


def test_infeasible_configurations_are_pruned_with_reasons():
    def hook(values):
        return values["matmul_kernel.BLOCK_M"] <= 64 or "BLOCK_M too large for this test"

    source = load("matmul")
    strategy = LaunchParamStrategy(feasible=hook)
    got = strategy.propose(state_for(source), 100)
    space = SearchSpace.from_source(source, "matmul")
    assert got and all(check_assignment(space, c.params, feasible=hook) is None for c in got)
    assert any(m.status == "pruned" and m.reason == "BLOCK_M too large for this test" for m in strategy.last_moves)
    add = LaunchParamStrategy()
    add.propose(state_for(load("vector_add")), 100)
    assert any(m.status == "pruned" and "idle or duplicated" in m.reason for m in add.last_moves)


AUTOTUNED = "import torch\nimport triton\nimport triton.language as tl\n" + textwrap.dedent('''
    ENTRY = "auto"

    @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4),
                              triton.Config({"BLOCK": 256}, num_warps=8, num_stages=2)], key=["n"])
    @triton.jit
    def auto_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    def auto(x):
        n = x.numel()
        out = torch.empty_like(x)
        auto_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out
    ''')


def test_autotuned_kernel_widens_its_config_list_then_pins():
    tid = "auto_kernel.autotune_configs"
    got = LaunchParamStrategy().propose(state_for(AUTOTUNED), 5)
    wider = got[0].params[tid]
    assert got[0].description.startswith(f"{tid}: 2 -> ") or got[0].description.startswith("autotune_configs: 2 -> ")
    assert wider[:2] == [{"BLOCK": 128, "num_warps": 4, "num_stages": 3},
                         {"BLOCK": 256, "num_warps": 8, "num_stages": 2}]
    assert len(wider) > 2 and len({json.dumps(c, sort_keys=True) for c in wider}) == len(wider)
    assert all(c["BLOCK"] >= 16 and c["num_warps"] * 32 * 64 >= c["BLOCK"] for c in wider)
    capped = LaunchParamStrategy(max_new_configs=3).propose(state_for(AUTOTUNED), 1)
    assert len(capped[0].params[tid]) == 5
    pins = [c.params[tid] for c in got[1:3]]
    assert sorted(len(p) for p in pins) == [1, 1]
    assert values(got[0])[tid][0].values() == {"BLOCK": 128}


def test_an_autotuner_that_prunes_its_configs_is_widened_never_pinned():
    # `prune_configs_by={"early_config_prune": ...}` (probe round 22) dropped the configs whose
    # BLOCK_N cannot hold the row; Triton runs a lone config without pruning, so a pin ran a
    # 256-wide tile on a 900-wide row and was judged wrong.
    pruned = AUTOTUNED.replace('key=["n"])', 'key=["n"],\n    prune_configs_by={"early_config_prune": lambda c, a, **k: c})')
    assert "prune_configs_by" in pruned
    tid = "auto_kernel.autotune_configs"
    got = LaunchParamStrategy().propose(state_for(pruned), 5)
    assert got and len(got[0].params[tid]) > 2  # widened
    assert all(len(c.params[tid]) > 1 for c in got if tid in c.params)


def test_space_description_shows_the_space_and_the_walk():
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(load("col_sum")), 3)
    d = json.loads(json.dumps(strategy.describe_space()))
    assert d["strategy"] == "launch_params"
    assert [t["id"] for t in d["tunables"]] == [
        "col_sum_kernel.BLOCK_M", "col_sum_kernel.BLOCK_N", "col_sum_kernel.num_warps", "col_sum_kernel.num_stages"]
    assert d["sites"][0]["kernel"] == "col_sum_kernel" and d["sites"][0]["grid_kind"] == "tuple"
    assert [m["order"] for m in d["moves"]] == list(range(len(d["moves"])))
    assert [m["description"] for m in d["moves"] if m["status"] == "proposed"] == [c.description for c in got]
    rings = [m["ring"] for m in d["moves"]]
    assert rings == sorted(rings)  # every neighbour before any two-step combination
    assert {m["status"] for m in d["moves"]} <= {"proposed", "pruned", "tried", "duplicate", "deferred"}
    assert d["on"] == source_key(load("col_sum"))  # the file the space was read from
    other = got[0]
    strategy.propose(state_for(load("col_sum"), best=other), 1)  # a rewrite's own turn, say
    assert strategy.describe_space()["on"] == other.key
    assert strategy.describe_space()["tunables"][0]["current"] == values(other)["col_sum_kernel.BLOCK_M"]


def test_is_a_strategy_and_gives_up_quietly_on_unreadable_files():
    strategy = LaunchParamStrategy()
    assert isinstance(strategy, Strategy) and strategy.name == "launch_params"
    broken = state_for(load("vector_add"))
    broken.best = Candidate("def add(:\n", "llm")
    assert strategy.propose(broken, 4) == []
    no_entry = state_for(load("vector_add"))
    no_entry.entry = "missing"
    assert strategy.propose(no_entry, 4) == []


def test_dot_kernels_get_whole_tile_presets_first():
    # From 32x32x32 tiles, no single x2 step reaches a tile that feeds the tensor cores well;
    # the first proposals change tile, warps and stages together, and all of them fit.
    from pathlib import Path

    from tritonforge.strategies.base import Candidate, SearchState
    from tritonforge.strategies.launch import DOT_PRESETS, LaunchParamStrategy

    src = (Path(__file__).resolve().parents[2] / "examples" / "matmul.py").read_text()
    state = SearchState(problem_path="examples/matmul.py", entry="matmul", baseline_source=src,
                        best=Candidate(src, "baseline"))
    first = LaunchParamStrategy().propose(state, 4)
    presets = {(p[0], p[1], p[2]) for p in DOT_PRESETS}
    tiles = [(c.params["matmul_kernel.BLOCK_M"], c.params["matmul_kernel.BLOCK_N"], c.params["matmul_kernel.BLOCK_K"])
             for c in first]
    assert len(first) == 4 and all(t in presets for t in tiles)
    assert any(c.params["matmul_kernel.num_warps"] == 8 for c in first)


def test_autotune_widening_keeps_one_row_tiles_of_a_kernel_without_tl_dot():
    source = AUTOTUNED.replace('{"BLOCK": 128}, num_warps=4', '{"BLOCK": 1}, num_warps=1').replace(
        '{"BLOCK": 256}, num_warps=8, num_stages=2', '{"BLOCK": 2}, num_warps=1')
    tid = "auto_kernel.autotune_configs"
    got = LaunchParamStrategy().propose(state_for(source), 1)
    wider = got[0].params[tid]  # BLOCK 1 and 2 are legal here: only a tl.dot dimension needs 16
    assert len(wider) > 2 and {"BLOCK": 4, "num_warps": 1, "num_stages": 3} in wider


def test_a_space_record_holds_plain_values_only():
    # A dtype constexpr replayed on a candidate's file (`tl.float16 if n > 1024 else tl.float32`)
    # has a replay value, not an int: the run store keeps records as JSON.
    from tritonforge.analysis.launch_sites.replay_values import Dotted
    from tritonforge.strategies.launch.strategy import plain

    assert plain(Dotted("tl.float32")) == "tl.float32"
    assert [plain(v) for v in (None, 3, 2.5, "x", True)] == [None, 3, 2.5, "x", True]


def test_autotune_widening_varies_a_split_factor_the_grid_reads_from_meta():
    # Probe round 24: an autotuned column sum's rows per program (a loop bound the META grid
    # divides by) was never varied by widening, only its tiles and warps.
    from tests.conftest import FIXTURES

    source = (FIXTURES / "problems" / "styles" / "split_rows_meta_grid.py").read_text()
    tid = "_bias_grad_kernel.autotune_configs"
    wider = LaunchParamStrategy().propose(state_for(source), 1)[0].params[tid]
    assert {c["ROWS_PER_PROG"] for c in wider} == {8, 16, 32}
    assert {"BLOCK_M": 8, "BLOCK_N": 32, "ROWS_PER_PROG": 32, "num_warps": 2, "num_stages": 3} in wider



def test_a_one_config_autotune_list_is_also_retuned_in_place():
    # A list of one is a fixed launch written as autotune: before, its only move was the
    # widening, so a round of four proposed one candidate and a run could end after two.
    from tests.conftest import FIXTURES

    source = (FIXTURES / "problems" / "styles" / "split_rows_meta_grid.py").read_text()
    tid = "_bias_grad_kernel.autotune_configs"
    got = LaunchParamStrategy().propose(state_for(source), 8)
    assert len(got) == 8 and len(got[0].params[tid]) > 1  # the widening first
    retuned = [c.params[tid] for c in got[1:]]
    assert all(len(r) == 1 for r in retuned)
    first = {"BLOCK_M": 8, "BLOCK_N": 32, "ROWS_PER_PROG": 16, "num_warps": 2, "num_stages": 3}
    moved = [[k for k in first if r[0][k] != first[k]] for r in retuned]
    assert all(len(m) == 1 for m in moved)  # one value each
    grown = [r[0][m[0]] > first[m[0]] for r, m in zip(retuned, moved)]
    assert grown == [True] * 5 + [False] * 2  # each value's growing step before any shrinking one
    assert {"BLOCK_M": 8, "BLOCK_N": 32, "ROWS_PER_PROG": 32, "num_warps": 2, "num_stages": 3} in [r[0] for r in retuned]
    assert got[1].description == "autotune_configs: BLOCK_M 8->16" or got[1].description.endswith(": BLOCK_M 8->16")
    assert rewrite_runs(got[1].source)


def rewrite_runs(source: str) -> bool:
    """The retuned file still parses and still holds one config."""
    tree = ast.parse(source)
    lists = [n for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == "configs"]
    return len(lists) == 1 and isinstance(lists[0].value, ast.List) and len(lists[0].value.elts) == 1


def test_a_pruned_one_config_autotune_list_is_not_retuned():
    # Triton runs a lone config without the pruner, as for pins.
    single = re.sub(r',\s*triton.Config\(\{"BLOCK": 256\}, num_warps=8, num_stages=2\)', "", AUTOTUNED)
    pruned = single.replace('key=["n"])', 'key=["n"],\n    prune_configs_by={"early_config_prune": lambda c, a, **k: c})')
    assert pruned.count("triton.Config(") == 1 and "prune_configs_by" in pruned
    tid = "auto_kernel.autotune_configs"
    assert len(LaunchParamStrategy().propose(state_for(single), 4)) > 1
    assert [len(c.params[tid]) > 1 for c in LaunchParamStrategy().propose(state_for(pruned), 4)] == [True]


def test_widening_a_list_moves_another_value_of_each_config():
    # Eight new configs a round, round-robin over the configs: each config's neighbours
    # start at another value, so a SPLIT_K listed last is widened in the first round too.
    from tests.conftest import FIXTURES

    source = (FIXTURES / "problems" / "styles" / "splitk_pre_hook_helper.py").read_text()
    tid = "_splitk_kernel.autotune_configs"
    got = LaunchParamStrategy().propose(state_for(source), 1)
    old, new = got[0].params[tid][:2], got[0].params[tid][2:]
    assert len(new) == 8
    moved = set()  # the value each new config moved from the config it neighbours
    for c in new:
        steps = [[k for k in c if c[k] != o[k]] for o in old]
        moved.update(next(s for s in steps if len(s) == 1))
    assert {"BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K"} <= moved
    assert all(c["SPLIT_K"] > 1 for c in new)


def test_a_guard_of_the_launching_function_rules_out_the_moves_that_break_it():
    # MiniMax lightning attention's `assert BLOCK % CBLOCK == 0` beside BLOCK = 64 (probe
    # round 27): CBLOCK 64 -> 128 was proposed and ended "error" in the entry's assert.
    source = (FIXTURES / "problems" / "styles" / "lightning_cblock.py").read_text()
    space = SearchSpace.from_source(source, entry_of(source))
    [site] = space.sites
    assert site.guards == ("BLOCK % CBLOCK == 0",)
    assert check_assignment(space, {"_qk_gate_kernel.CBLOCK": 128}) == \
        "_qk_gate_kernel (line 44) {BLOCK=64, CBLOCK=128, num_warps=4, num_stages=3}: qk_gate requires BLOCK % CBLOCK == 0"
    assert check_assignment(space, {"_qk_gate_kernel.CBLOCK": 32}) is None
    raising = source.replace("    assert BLOCK % CBLOCK == 0, \"BLOCK must be a multiple of CBLOCK\"\n",
                             "    if BLOCK % CBLOCK:\n        raise ValueError(BLOCK, CBLOCK)\n")
    [site] = SearchSpace.from_source(raising, entry_of(raising)).sites
    assert site.guards == ("not BLOCK % CBLOCK",)


def test_an_autotuned_launch_is_ruled_out_only_where_no_config_would_run_well():
    # fla's l2norm, configs num_warps 1-8 (probe round 27): BT 16 -> 32 was ruled out for its
    # num_warps=1 config (128 elements a thread), which the autotuner would time and pass over.
    space, _ = captured_space(FIXTURES / "problems" / "styles" / "fla_l2norm_autotune.py")
    bt, configs = space.by_id["l2norm_fwd_kernel.BT"], space.by_id["l2norm_fwd_kernel.autotune_configs"]
    assert check_assignment(space, {bt.id: 32}) is None and check_assignment(space, {bt.id: 128}) is None
    assert "{num_warps=1, num_stages=3}: 1024 elements per thread" in check_assignment(space, {bt.id: 256})
    # One config left (a pin): it must run well itself.
    assert "256 elements per thread" in check_assignment(space, {bt.id: 64, configs.id: configs.current[:1]})
