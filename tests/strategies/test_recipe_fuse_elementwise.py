"""The fuse_elementwise recipe (`-k recipe`): two elementwise launches joined through a
temporary become one kernel, correct in Triton's interpreter; refused where the fused kernel
would not compute the same thing."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.fuse_elementwise import FuseElementwise

CHAIN = ROOT / "benchmarks" / "corpus" / "bias_gelu_residual_chain.py"
ENTRY = "bias_gelu_residual"


def launches_in(source: str, entry: str) -> int:
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == entry)
    return sum(1 for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))


@pytest.mark.parametrize("problem, entry", [(CHAIN, ENTRY), (EXAMPLES / "silu_mul.py", "silu_mul")])
def test_recipe_fuse_elementwise_makes_one_launch_of_two_and_stays_correct(tmp_path, problem, entry):
    result = FuseElementwise().rewrite(problem.read_text(), entry)
    assert isinstance(result, Rewrite) and "no longer written" in result.note, result
    assert launches_in(problem.read_text(), entry) == 2 and launches_in(result.source, entry) == 1
    assert_correct(problem, result.source, tmp_path)


def test_recipe_fuse_elementwise_keeps_the_store_when_the_entry_uses_the_temporary_after():
    source = CHAIN.read_text().replace("    return out\n", "    out.add_(h - h)\n    return out\n", 1)
    result = FuseElementwise().rewrite(source, ENTRY)
    assert isinstance(result, Rewrite) and "no longer written" not in result.note
    fused = result.source[result.source.index("def _bias_gelu_kernel__"):]
    assert "tl.store(h_ptr + offsets, h, mask=mask)" in fused


@pytest.mark.parametrize("edit, why", [
    (("    _scaled_residual_kernel[grid]", "    h.mul_(1.0)\n    _scaled_residual_kernel[grid]"), "'h' is used between"),
    (("_scaled_residual_kernel[grid](h, residual, out", "_scaled_residual_kernel[grid](h, residual, x"),
     "writes 'x', which the first reads"),
    (("    _scaled_residual_kernel[grid]", "    _scaled_residual_kernel[(triton.cdiv(n_elements, 1024),)]"),
     "different grids"),
    (("h = tl.load(h_ptr + offsets, mask=mask)", "h = tl.load(h_ptr + (offsets + 1), mask=mask)"),
     "at another index"),
    (("    r = tl.load(res_ptr", "    r = tl.sum(tl.load(h_ptr + offsets, mask=mask)) + tl.load(res_ptr"),
     "not elementwise"),
    (("tl.store(out_ptr + offsets, r + alpha * h, mask=mask)", "tl.store(out_ptr + offsets, r + alpha * h)"),
     "stores under another mask"),
])
def test_recipe_fuse_elementwise_refuses_what_would_change_the_result(edit, why):
    assert why in refusal(FuseElementwise(), CHAIN.read_text(), ENTRY, edit)


def test_recipe_fuse_elementwise_refuses_a_two_stage_reduction_and_a_single_launch():
    corpus = ROOT / "benchmarks" / "corpus"
    assert "not elementwise (tl.sum)" in FuseElementwise().rewrite(
        (corpus / "sum_squares_two_stage.py").read_text(), "sum_of_squares")
    assert "no two kernel launches in one block" in FuseElementwise().rewrite((EXAMPLES / "vector_add.py").read_text(), "add")


def test_recipe_fuse_elementwise_reaches_launches_inside_a_with_block(tmp_path):
    source = CHAIN.read_text().replace(
        "    _bias_gelu_kernel[grid](", "    with torch.no_grad():\n        _bias_gelu_kernel[grid](").replace(
        "    _scaled_residual_kernel[grid](", "        _scaled_residual_kernel[grid](")
    result = FuseElementwise().rewrite(source, ENTRY)
    assert isinstance(result, Rewrite), result
    assert "    with torch.no_grad():\n        _bias_gelu_kernel__scaled_residual_kernel[grid](" in result.source
    assert launches_in(result.source, ENTRY) == 1
    assert_correct(CHAIN, result.source, tmp_path)


def test_recipe_fuse_elementwise_runs_both_bodies_on_the_first_block_when_a_launch_move_split_them(tmp_path):
    source = CHAIN.read_text().replace("(h, residual, out, alpha, n_elements, BLOCK_SIZE=1024)",
                                       "(h, residual, out, alpha, n_elements, BLOCK_SIZE=256)")
    result = FuseElementwise().rewrite(source, ENTRY)
    assert isinstance(result, Rewrite), result
    launch = next(line for line in result.source.splitlines() if "_bias_gelu_kernel__" in line and "[grid]" in line)
    assert "BLOCK_SIZE=1024" in launch and "BLOCK_SIZE_2" not in launch
    assert_correct(CHAIN, result.source, tmp_path)
