"""The collapse_two_stage recipe (`-k recipe`): a partial-sums kernel and a one-program final
sum become one launch whose programs loop over the partials' ids and add one sum each
atomically; correct in Triton's interpreter (4 programs there, each taking many ids), and
refused wherever the final kernel is not exactly the sum of one partial per program."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.two_stage import CollapseTwoStage

TWO_STAGE = ROOT / "benchmarks" / "corpus" / "sum_squares_two_stage.py"
ENTRY = "sum_of_squares"


def test_recipe_collapse_two_stage_adds_partials_atomically_in_one_launch(tmp_path):
    result = CollapseTwoStage().rewrite(TWO_STAGE.read_text(), ENTRY)
    assert isinstance(result, Rewrite), result
    entry = result.source[result.source.index("def sum_of_squares"):result.source.index("def reference")]
    assert "final_sum_kernel[" not in entry and "out.zero_()" in entry
    kernel = result.source[result.source.index("def partial_sum_kernel"):result.source.index("@triton.jit\ndef final")]
    assert ("    program_sum = 0.0  # this program's share of the output (collapse_two_stage)\n"
            "    for pid in range(tl.program_id(0), N_PARTIALS, tl.num_programs(0)):  # ids strided\n") in kernel
    assert "        program_sum += tl.sum(x * x, axis=0)\n    tl.atomic_add(collapsed_out_ptr, program_sum)" in kernel
    assert "partial_sum_kernel[(collapse_programs,)](" in entry and "N_PARTIALS=n_partial_ids)" in entry
    assert_correct(TWO_STAGE, result.source, tmp_path)  # 4 and 274 partials over 4 programs


def test_recipe_collapse_two_stage_loops_over_an_id_used_as_an_object(tmp_path):
    # `pid.to(...)`: the interpreter's loop variable is a plain int, so the id is cast to a tensor.
    source = TWO_STAGE.read_text().replace("    offsets = pid * BLOCK_SIZE", "    offsets = pid.to(tl.int64) * BLOCK_SIZE")
    result = CollapseTwoStage().rewrite(source, ENTRY)
    assert isinstance(result, Rewrite), result
    assert "        pid = tl.cast(partial_id, tl.int32)\n" in result.source
    problem = tmp_path / "problem.py"
    problem.write_text(source)
    assert_correct(problem, result.source, tmp_path)


@pytest.mark.parametrize("edit, why", [
    (("final_sum_kernel[(1,)]", "final_sum_kernel[(2,)]"), "not launched on a grid of one program"),
    (("(partials, out, n_partials, BLOCK_SIZE=FINAL_BLOCK)", "(partials, out, n_partials - 1, BLOCK_SIZE=FINAL_BLOCK)"),
     "exactly one partial per program"),
    (("    return out\n", "    return out + partials[0] * 0\n"), "uses 'partials' after the final kernel"),
    (("tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))", "tl.store(partial_ptr + (pid + 1), tl.sum(x * x, axis=0))"),
     "stores its partial somewhere else"),
    (("acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=0.0)",
      "acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=1.0)"), "fill masked partials with zero"),
    (("offsets = start + tl.arange(0, BLOCK_SIZE)\n        acc", "offsets = start + 2 * tl.arange(0, BLOCK_SIZE)\n        acc"),
     "read each partial once"),
    (("    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)\n    x_ptr += 0\n"), "moves its parameter x_ptr"),
    (("offsets = pid * BLOCK_SIZE", "offsets = tl.program_id(0) * BLOCK_SIZE"), "reads tl.program_id more than once"),
])
def test_recipe_collapse_two_stage_refuses_what_is_not_one_sum_of_the_partials(edit, why):
    assert why in refusal(CollapseTwoStage(), TWO_STAGE.read_text(), ENTRY, edit)


def test_recipe_collapse_two_stage_refuses_elementwise_chains_and_single_launches():
    assert "is not 'acc = zeros" in CollapseTwoStage().rewrite((EXAMPLES / "silu_mul.py").read_text(), "silu_mul")
    assert "no two kernel launches in one block" in CollapseTwoStage().rewrite((EXAMPLES / "col_sum.py").read_text(), "col_sum")


def test_recipe_collapse_two_stage_reaches_launches_inside_a_device_context():
    # The launches inside `with torch.cuda.device(x.device):`, as CUDA-minded libraries write
    # them (the interpreter cannot run that block: this checks the rewrite only).
    source = TWO_STAGE.read_text().replace(
        "    partial_sum_kernel[", "    with torch.cuda.device(x.device):\n        partial_sum_kernel[").replace(
        "    final_sum_kernel[", "        final_sum_kernel[")
    result = CollapseTwoStage().rewrite(source, ENTRY)
    assert isinstance(result, Rewrite), result
    assert ("    with torch.cuda.device(x.device):\n        out.zero_()  # the programs' sums are added into it"
            " (collapse_two_stage)\n        n_partial_ids = n_partials") in result.source
    assert "        if out.is_cuda:\n            collapse_programs = min(" in result.source
    assert "        partial_sum_kernel[(collapse_programs,)](" in result.source
    assert "final_sum_kernel[" not in result.source[result.source.index("def sum_of_squares"):]
    compile(result.source, "rewritten", "exec")
