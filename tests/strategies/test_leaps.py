"""Long jumps of the launch search: tiles sized from the hardware, several doublings at once."""

from __future__ import annotations

import math
from pathlib import Path

from tritonforge.analysis.launch_sites import SearchSpace, entry_of
from tritonforge.strategies.base import Candidate, CaseResult, Outcome, SearchState
from tritonforge.strategies.launch import HardwareLimits, LaunchParamStrategy, check_assignment, rewrite
from tritonforge.strategies.launch.leaps import Outlook, leaps

ROOT = Path(__file__).resolve().parents[2]
FAR = (ROOT / "tests" / "fixtures" / "problems" / "far_optimum.py").read_text()
BM, BN, WARPS = "row_mean_kernel.BLOCK_M", "row_mean_kernel.BLOCK_N", "row_mean_kernel.num_warps"


def state_for(source: str, cases: list[CaseResult] | None = None, floors: dict | None = None,
              history: list[Outcome] | None = None, gpu: dict | None = None) -> SearchState:
    return SearchState(problem_path="p.py", entry=entry_of(source), baseline_source=source,
                       best=Candidate(source, "baseline"), best_cases=cases or [], floors_ms=floors or {},
                       history=history or [], gpu=gpu or {})


def case(label: str, ms: float = 1.0) -> CaseResult:
    return CaseResult(case=label, status="correct", median_ms=ms, baseline_ms=ms, speedup=1.0)


def space_of(source: str) -> SearchSpace:
    return SearchSpace.from_source(source, entry_of(source))


def test_a_tiny_tile_leaps_several_doublings_along_its_loop_first():
    strategy = LaunchParamStrategy()
    got = strategy.propose(state_for(FAR), 6)
    first = got[0].params
    assert first[BM] == 8 and first[BN] >= 128  # 16x the tile in one move, the grid untouched
    records = {m.description: m for m in strategy.last_moves}
    assert records[got[0].description].kind == "leap"
    # The same leap with twice the warps (and twice the tile) comes right behind it.
    assert any(c.params[WARPS] == 8 and c.params[BN] >= 256 for c in got[:3])
    space = space_of(FAR)
    assert all(check_assignment(space, c.params) is None for c in got)


def test_a_small_grid_asks_for_more_elements_per_program():
    # 64 rows in programs of 8 fill 8 of 132 SMs: each program must carry the SM's bytes in
    # flight alone, up to the 64 elements per thread the registers allow.
    outlook = Outlook.from_state(state_for(FAR, cases=[case("M=64, N=2048")]))
    assert outlook.sizes == ({"M": 64, "N": 2048},)
    moves = leaps(space_of(FAR), HardwareLimits(), outlook, set())
    tiles = {(m.changes.get(BM, (8, 8))[1], m.changes[BN][1]) for m in moves}
    assert (8, 1024) in tiles  # 8192 elements at 4 warps


def test_grid_dims_shrink_while_loop_dims_grow_and_the_grid_keeps_its_waves():
    source = rewrite(FAR, {BM: 64})
    outlook = Outlook.from_state(state_for(source, cases=[case("M=4096, N=4096")], gpu={"sm_count": 132}))
    moves = leaps(space_of(source), HardwareLimits(), outlook, set())
    shapes = {(m.changes.get(BM, (64, 64))[1], m.changes[BN][1]) for m in moves}
    assert (16, 512) in shapes  # BLOCK_M down x4, BLOCK_N up x64: 256 programs instead of 64
    assert all(m.changes.get(BM, (64, 64))[1] <= 64 for m in moves)  # never fewer programs
    small = Outlook.from_state(state_for(SCALE, cases=[case("n=65536")]))
    assert leaps(space_of(SCALE), HardwareLimits(), small, set()) == []  # 1024 programs -> 64: < 2 waves
    large = Outlook.from_state(state_for(SCALE, cases=[case("n=67108864")]))
    grown = leaps(space_of(SCALE), HardwareLimits(), large, set())
    assert any(m.changes["scale_kernel.BLOCK"][1] >= 1024 for m in grown)


SCALE = """import torch
import triton
import triton.language as tl

ENTRY = "scale"


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x):
    n = x.numel()
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
    return out
"""


def test_far_from_the_floor_leaps_and_joint_moves_lead_even_after_history():
    best = Candidate(rewrite(FAR, {BN: 16}), "launch_params", parent=Candidate(FAR, "baseline").key)
    history = [Outcome(best, "correct", speedup=1.5, faster=True)]
    label = "M=64, N=2048"

    def first_moves(fraction: float | None):
        state = state_for(FAR, cases=[case(label, 1.0)], history=history,
                          floors={label: fraction} if fraction else {})
        state.best, state.best_speedup = best, 1.5
        strategy = LaunchParamStrategy()
        got = strategy.propose(state, 3)
        kinds = {m.description: m.kind for m in strategy.last_moves}
        return [kinds[c.description] for c in got]

    far = first_moves(0.05)
    assert far[0] == "leap" and all(len(k) and k != "step" for k in far)
    assert "leap" not in first_moves(None)  # BLOCK_N was studied: x2 steps along what paid
    near = first_moves(0.7)
    assert "leap" not in near


def test_dot_kernels_get_presets_not_leaps():
    matmul = (ROOT / "examples" / "matmul.py").read_text()
    assert leaps(space_of(matmul), HardwareLimits(), Outlook(), set()) == []
    assert math.isclose(Outlook().sm_count, 132)


def test_a_leap_never_narrows_the_innermost_dim_below_a_line():
    # Column sums: rows are the loop, columns (contiguous, innermost) the grid. Shrinking the
    # columns 16 -> 4 to keep the grid's waves read 16-byte segments of each row.
    source = (ROOT / "examples" / "col_sum.py").read_text()
    outlook = Outlook.from_state(state_for(source, cases=[case("rows=32768, cols=8192")], gpu={"sm_count": 132}))
    moves = leaps(space_of(source), HardwareLimits(), outlook, set())
    assert moves and all(m.changes.get("col_sum_kernel.BLOCK_N", (16, 16))[1] >= 16 for m in moves)
    assert any(m.changes["col_sum_kernel.BLOCK_M"][1] >= 64 for m in moves)  # the loop dim still leaps


def test_a_leap_no_literal_edit_reaches_is_left_out_not_raised():
    # layernorm_function_apply's block is min(cap, next_power_of_2(N)): on rows of 1000 no edit
    # of the file's literals gives a block beyond 1024, whatever the leap asks for.
    from tritonforge.analysis.launch_capture import capture_launches
    from tritonforge.problem.module import ProblemModule

    path = ROOT / "benchmarks" / "corpus" / "layernorm_function_apply.py"
    pm = ProblemModule(path)
    captured = {c.label: [r.to_json() for r in capture_launches(pm.entry, pm.make_args(c, 0, "cpu"),
                                                                 execute=False, stand_ins=True)]
                for c in pm.cases()[1]}
    source = path.read_text()
    labels = list(captured)
    state = state_for(source, cases=[case(labels[-1], 1.0)], floors={labels[-1]: 0.01})
    state.captured = captured  # its last case is the dominant one
    strategy = LaunchParamStrategy()
    got = strategy.propose(state, 8)
    assert got and all(c.params for c in got)
    assert not any(m.kind == "leap" and "BLOCK" in str(m.changes) for m in strategy.last_moves
                   if m.status == "proposed")
