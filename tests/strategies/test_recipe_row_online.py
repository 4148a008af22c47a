"""The row_online recipe (`-k recipe`): a row kernel's max pass and sum-of-exp pass merged into
one online pass; correct in Triton's interpreter (rows of several blocks, a partial last one,
rows starting with whole blocks of -inf), composed with row_one_pass either way round, and
refused, with the reason, where merging would not be the same computation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes import row_one_pass
from tritonforge.strategies.recipes.row_one_pass import RowOnePass
from tritonforge.strategies.recipes.row_online import RowOnline

SOFTMAX = EXAMPLES / "softmax.py"
CROSS_ENTROPY = ROOT / "benchmarks" / "corpus" / "cross_entropy_vocab.py"

# Per-lane accumulators, exp2 with a log2(e) factor, the term set in a local under tl.where;
# the last two rows of 300 columns start with 70 columns of -inf (a whole first block), past
# the first 4096 elements, whose sum tells the evaluator that two seeds' inputs differ.
LANES = '''
import torch
import triton
import triton.language as tl

ENTRY = "softmax"


@triton.jit
def softmax_lanes_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    base = x_ptr + tl.program_id(0) * stride
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for off in range(0, n_cols, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(base + idx, mask=idx < n_cols, other=float("-inf"))
        lane_max = tl.maximum(lane_max, v)
    m = tl.max(lane_max, axis=0)
    lane_sum = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        mask = idx < n_cols
        v = tl.load(base + idx, mask=mask, other=float("-inf"))
        p = tl.where(mask, tl.exp2((v - m) * 1.4426950408889634), 0.0)
        lane_sum += p
    total = tl.sum(lane_sum, axis=0)
    for off in range(0, n_cols, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(base + idx, mask=idx < n_cols, other=float("-inf"))
        y = tl.exp2((v - m) * 1.4426950408889634) / total
        tl.store(out_ptr + tl.program_id(0) * stride + idx, y, mask=idx < n_cols)


def softmax(x):
    out = torch.empty_like(x)
    softmax_lanes_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=64)
    return out


def reference(x):
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


def make_inputs(seed, device, rows, cols):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(rows, cols, device=device, generator=g) * 3
    if cols > 100:
        x[-2:, :70] = float("-inf")
    return (x,)


SHAPES = [{"rows": 4096, "cols": 8192}]
TEST_SHAPES = [{"rows": 16, "cols": 300}, {"rows": 5, "cols": 40}]
'''

# The corpus cross-entropy (already online) written as a max pass and a sum pass.
TWO_PASS = """    for start in range(0, V, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < V, other=-float("inf"))
        running_max = tl.maximum(running_max, tl.max(x, axis=0))
    for start in range(0, V, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < V, other=-float("inf"))
        running_sum += tl.sum(tl.exp(x - running_max), axis=0)
"""


def _loops(source: str) -> int:
    """`for` loops in the file's kernels (the host code has none)."""
    return sum(isinstance(n, ast.For) for n in ast.walk(ast.parse(source)))


def _problem(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def _two_pass_cross_entropy() -> str:
    # torch.cuda.device refuses CPU tensors: the interpreter's launch goes under torch.device.
    source = CROSS_ENTROPY.read_text().replace("torch.cuda.device(logits.device)", "torch.device(logits.device)")
    start = source.index("    for start in range(0, V, BLOCK_SIZE):")
    end = source.index("    target = tl.load")
    return source[:start] + TWO_PASS + source[end:]


def test_recipe_row_online_reads_a_three_pass_softmax_row_twice(tmp_path):
    source = SOFTMAX.read_text()  # 300 columns in blocks of 128: three blocks, the last partial
    result = RowOnline().rewrite(source, "softmax")
    assert isinstance(result, Rewrite), result
    assert "2 passes over the row instead of 3" in result.note
    assert (_loops(source), _loops(result.source)) == (3, 2)
    assert "denom = denom * tl.exp(row_max - online_ref) + tl.sum(tl.exp(x - online_ref), axis=0)" in result.source
    assert_correct(SOFTMAX, result.source, tmp_path)


def test_recipe_row_online_reads_a_two_pass_cross_entropy_row_once(tmp_path):
    problem = _problem(tmp_path, "cross_entropy_two_pass.py", _two_pass_cross_entropy())
    result = RowOnline().rewrite(problem.read_text(), "cross_entropy")
    assert isinstance(result, Rewrite), result
    assert (_loops(problem.read_text()), _loops(result.source)) == (2, 1)
    assert_correct(problem, result.source, tmp_path)  # 300 and 1000 columns in blocks of 256


def test_recipe_row_online_reads_a_vocab_log_softmax_row_twice(tmp_path):
    # fp16 logits, vector maximum and exp2 sum, the chunk from a capped next_power_of_2.
    path = ROOT / "benchmarks" / "corpus" / "log_softmax_vocab.py"
    result = RowOnline().rewrite(path.read_text(), "log_softmax")
    assert isinstance(result, Rewrite), result
    assert (_loops(path.read_text()), _loops(result.source)) == (3, 2)
    assert_correct(path, result.source, tmp_path)  # 5000 columns in blocks of 4096, and 300


@pytest.mark.parametrize("variant", [
    (),  # vector maximum, vector sum
    (("    lane_sum = tl.zeros([BLOCK], dtype=tl.float32)", "    lane_sum = 0.0"),  # vector maximum, scalar sum
     ("        lane_sum += p", "        lane_sum += tl.sum(p, axis=0)"),
     ("    total = tl.sum(lane_sum, axis=0)", "    total = lane_sum")),
    (("    lane_max = tl.full([BLOCK], float(\"-inf\"), tl.float32)", "    m = float(\"-inf\")"),  # scalar maximum,
     ("        lane_max = tl.maximum(lane_max, v)", "        m = tl.maximum(m, tl.max(v, axis=0))"),  # vector sum
     ("    m = tl.max(lane_max, axis=0)\n", "")),
])
def test_recipe_row_online_merges_lane_accumulators_and_exp2_and_keeps_leading_inf_rows_finite(tmp_path, variant):
    source = LANES
    for old, new in variant:
        assert old in source
        source = source.replace(old, new, 1)
    problem = _problem(tmp_path, "softmax_lanes.py", source)
    result = RowOnline().rewrite(source, "softmax")
    assert isinstance(result, Rewrite), result
    assert (_loops(source), _loops(result.source)) == (3, 2)
    assert "already share one pass (online)" in RowOnline().rewrite(result.source, "softmax")
    assert_correct(problem, result.source, tmp_path)


def test_recipe_row_online_merges_the_loops_row_one_pass_keeps_for_long_rows(tmp_path, monkeypatch):
    # A cap of 64 columns: 300 columns take the merged loops, 64 the one-pass path.
    monkeypatch.setattr(row_one_pass, "CAP", 64)
    once = RowOnePass().rewrite(SOFTMAX.read_text(), "softmax").source
    result = RowOnline().rewrite(once, "softmax")
    assert isinstance(result, Rewrite), result
    assert (_loops(once), _loops(result.source)) == (3, 2)
    assert "ROW_ONE_PASS=n_cols <= row_block" in result.source
    assert_correct(SOFTMAX, result.source, tmp_path)


def test_recipe_row_online_then_row_one_pass_holds_the_merged_pass_too(tmp_path, monkeypatch):
    monkeypatch.setattr(row_one_pass, "CAP", 64)
    online = RowOnline().rewrite(SOFTMAX.read_text(), "softmax").source
    both = RowOnePass().rewrite(online, "softmax")
    assert isinstance(both, Rewrite) and "1 later load reuse" in both.note
    assert_correct(SOFTMAX, both.source, tmp_path)


@pytest.mark.parametrize("path, why", [
    (CROSS_ENTROPY, "already share one pass (online)"),
    (EXAMPLES / "vector_add.py", "fewer than two passes over a row"),
    (EXAMPLES / "rmsnorm.py", "no pass over the row keeps a running maximum"),
    (ROOT / "benchmarks" / "corpus" / "layernorm_pow2_cap.py", "no pass over the row keeps a running maximum"),
])
def test_recipe_row_online_refuses_a_kernel_without_a_max_and_a_sum_pass(path, why):
    result = RowOnline().rewrite(path.read_text(), "x")
    assert isinstance(result, str) and why in result


PER_LANE_ONLINE = """
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m_i, x)
        l_i = l_i * tl.exp(m_i - m_new) + tl.exp(x - m_new)
        m_i = m_new
    m = tl.max(m_i, axis=0)
    total = tl.sum(l_i * tl.exp(m_i - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(y_ptr + row * stride + cols, tl.exp(x - m) / total, mask=cols < n_cols)


def softmax(x, y):
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=256)
"""


def test_recipe_row_online_says_a_per_lane_online_pass_is_online_already():
    # Probe round 24 (FlagGems-style, `m_new = tl.maximum(m_i, x)` per lane): refused as having
    # "no running maximum", the right outcome for the wrong reason.
    assert "already share one pass (online)" in RowOnline().rewrite(PER_LANE_ONLINE, "softmax")


def test_recipe_row_online_refuses_a_file_it_already_rewrote():
    once = RowOnline().rewrite(SOFTMAX.read_text(), "softmax").source
    assert "already share one pass (online)" in RowOnline().rewrite(once, "softmax")


MAX_LINE = "        row_max = tl.maximum(row_max, tl.max(x, axis=0))\n"
SUM_LINE = "        denom += tl.sum(tl.exp(x - row_max), axis=0)\n"


@pytest.mark.parametrize("edit, why", [
    ((SUM_LINE, "        denom += tl.sum(x * x, axis=0)\n"), "does not sum exp(x - max)"),
    ((SUM_LINE, "        denom += tl.sum(tl.exp(x) - row_max, axis=0)\n"), "does not sum exp(x - max)"),
    ((SUM_LINE, "        denom += tl.sum(tl.exp(x - row_max) * x, axis=0)\n"), "does not sum exp(x - max)"),
    ((SUM_LINE, "        denom += tl.sum(tl.exp(x - row_max), axis=0)\n        tl.store(out_row + cols, x)\n"),
     "its sum pass writes memory"),
    ((MAX_LINE, MAX_LINE + "        tl.store(out_row + cols, x, mask=cols < n_cols)\n"),
     "a pass before the last writes memory"),
    (("    denom = 0.0\n    for start in range(0, n_cols, BLOCK):",
      "    denom = 0.0\n    for start in range(0, stride_x, BLOCK):"), "different bounds"),
    (("    denom = 0.0\n", "    denom = 1.0\n"), "does not start from zero"),
    (("    denom = 0.0\n", "    denom = 0.0\n    x_row = x_row + 1\n"), "exponentiates something other"),
    ((SUM_LINE, "        x = x * 2.0\n" + SUM_LINE), "exponentiates something other"),
    ((MAX_LINE, MAX_LINE + "        big = tl.sum(tl.where(x > 0, 1.0, 0.0), axis=0)\n"), "also computes big"),
])
def test_recipe_row_online_refuses_what_would_not_be_the_same_computation(edit, why):
    source = SOFTMAX.read_text()
    if "big" in edit[1]:  # what the max pass also computes is read after it
        source = source.replace("/ denom, mask", "/ denom + big * 0.0, mask")
    assert why in refusal(RowOnline(), source, "softmax", edit)
