"""The hints recipe (`-k recipe`): 1-D streaming kernels drop their bounds masks under a
constexpr flag the launch sets from `n % BLOCK == 0`, and their one-time loads get
evict_first; correct in Triton's interpreter on sizes that divide the block and sizes that do
not, still correct after the launch search moves the block, and refused on other kernels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.launch.rewrite import rewrite as move_launch
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.hints import Hints

CORPUS = ROOT / "benchmarks" / "corpus"
VECTOR_ADD = EXAMPLES / "vector_add.py"


def _with_shapes(text: str, shapes: str) -> str:
    return re.sub(r"^TEST_SHAPES = .*$", f"TEST_SHAPES = {shapes}", text, count=1, flags=re.M)


def _problem(tmp_path: Path, path: Path, shapes: str) -> Path:
    """A copy of the problem whose test sizes are `shapes`: the files' own sizes do not all
    divide the block, and the unmasked path must run too."""
    out = tmp_path / path.name
    out.write_text(_with_shapes(path.read_text(), shapes))
    return out


def _hinted(path: Path, entry: str, source: str | None = None) -> str:
    result = Hints().rewrite(source or path.read_text(), entry)
    assert isinstance(result, Rewrite), result
    compile(result.source, "rewritten", "exec")
    return result.source


def test_recipe_hints_vector_add_drops_masks_when_the_block_divides(tmp_path):
    source = _hinted(VECTOR_ADD, "add")
    assert "add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK, EVEN=n_elements % BLOCK == 0)" in source
    assert "BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):" in source
    assert 'tl.load(x_ptr + offsets, mask=None if EVEN else mask, eviction_policy="evict_first")' in source
    assert "tl.store(out_ptr + offsets, x + y, mask=None if EVEN else mask)" in source
    shapes = '[{"n": 1000}, {"n": 4096}, {"n": 4099}]'  # 4096 is 64 blocks of 64
    assert_correct(_problem(tmp_path, VECTOR_ADD, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_puts_a_literal_positional_block_in_a_local_the_flag_reads(tmp_path):
    path = CORPUS / "relu_squared_positional.py"
    source = _hinted(path, "relu_squared")
    assert "    block = 128  # the block" in source
    assert "relu_squared_kernel[grid](x, out, n, block, EVEN=n % block == 0)" in source
    shapes = '[{"n": 1000}, {"n": 4096}]'
    assert_correct(_problem(tmp_path, path, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_two_kernels_keep_the_reused_bias_load_cached(tmp_path):
    path = CORPUS / "bias_gelu_residual_chain.py"  # test sizes 2100 and 3072 (3 blocks of 1024)
    source = _hinted(path, "bias_gelu_residual")
    assert "BLOCK_SIZE=block, EVEN=n_elements % block == 0)" in source
    assert "BLOCK_SIZE=block_, EVEN=n_elements % block_ == 0)" in source
    assert "tl.load(bias_ptr + offsets % n_cols, mask=None if EVEN else mask)\n" in source  # read by every row
    assert_correct(path, source, tmp_path)


def test_recipe_hints_autotuned_block_gets_its_flag_from_an_inner_heuristic(tmp_path):
    path = CORPUS / "swiglu_autotune_one.py"  # test sizes 2100 and 1024 (8 blocks of 128)
    source = _hinted(path, "swiglu")
    assert ('@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})\n'
            "@triton.jit\n") in source
    assert "swiglu_kernel[grid](gate, up, out, n_elements)" in source
    assert_correct(path, source, tmp_path)


def test_recipe_hints_block_from_heuristics(tmp_path):
    path = CORPUS / "scaled_add_heuristics.py"  # test sizes 1000 and 4096 (64 blocks of 64)
    masked = path.read_text().replace(
        '    "EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0,\n', "").replace(
        "BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):", "BLOCK_SIZE: tl.constexpr):")
    body = masked[masked.index("    if EVEN:"):masked.index("\n\n\ndef scaled_add")]
    plain = "\n".join(line[4:] for line in body.splitlines()[body.splitlines().index("    else:") + 1:])
    masked = masked.replace(body, plain)
    assert "if EVEN" not in masked and "EVEN: tl.constexpr" not in masked
    source = _hinted(path, "scaled_add", masked)
    assert '"BLOCK_SIZE": lambda args' in source and '@triton.heuristics({"EVEN": lambda args' in source
    assert_correct(path, source, tmp_path)


@pytest.mark.parametrize("path, entry, tunable, value, moved", [
    (VECTOR_ADD, "add", "add_kernel.BLOCK_SIZE", 128, "    BLOCK = 128\n"),
    (CORPUS / "relu_squared_positional.py", "relu_squared", "relu_squared_kernel.BLOCK_SIZE", 32, "block = 32  #"),
])
def test_recipe_hints_stays_correct_after_the_launch_search_moves_the_block(tmp_path, path, entry, tunable,
                                                                           value, moved):
    source = move_launch(_hinted(path, entry), {tunable: value}, entry)
    assert moved in source
    # 4160 is 65 blocks of 64 but not a multiple of 128: a flag frozen at the old block would be wrong.
    shapes = '[{"n": 1000}, {"n": 4096}, {"n": 4160}]'
    assert_correct(_problem(tmp_path, path, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_reaches_a_launch_inside_a_device_context():
    # The interpreter cannot run `with torch.cuda.device(...)`: this checks the rewrite only.
    source = _hinted(CORPUS / "gelu_device_context.py", "gelu")
    assert ("        gelu_kernel[grid](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4, "
            "EVEN=n_elements % BLOCK_SIZE == 0)") in source


@pytest.mark.parametrize("name, entry, why", [
    ("softmax.py", "softmax", "loops inside the kernel"),
    ("matmul.py", "matmul", "uses tl.dot"),
    ("rmsnorm.py", "rmsnorm", "loops inside the kernel"),
])
def test_recipe_hints_refuses_examples_that_do_not_stream(name, entry, why):
    result = Hints().rewrite((EXAMPLES / name).read_text(), entry)
    assert isinstance(result, str) and why in result


def test_recipe_hints_refuses_a_kernel_already_hinted():
    assert "masks are already switched off under the constexpr 'EVEN'" in Hints().rewrite(
        (CORPUS / "scaled_add_heuristics.py").read_text(), "scaled_add")
    twice = Hints().rewrite(_hinted(VECTOR_ADD, "add"), "add")
    assert isinstance(twice, str) and "already hinted: a load or store sets eviction_policy" in twice


@pytest.mark.parametrize("edit, why", [
    (("mask = offsets < n_elements", "mask = offsets <= n_elements"), "a mask is not offsets < n"),
    (("mask = offsets < n_elements", "mask = offsets < n_elements - 1"), "a mask is not offsets < n"),
    (("offsets = pid * BLOCK_SIZE + tl.arange", "offsets = pid * 2 * BLOCK_SIZE + tl.arange"),
     "offsets are not tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"),
    (("grid = (triton.cdiv(n_elements, BLOCK),)", "grid = (triton.cdiv(n_elements, 32),)"),
     "grid does not divide by the block"),
    (("grid = (triton.cdiv(n_elements, BLOCK),)", "grid = (triton.cdiv(x.numel() + 1, BLOCK),)"),
     "its grid divides x.numel() + 1, not the n_elements"),
    (("grid = (triton.cdiv(n_elements, BLOCK),)", "grid = (4 * triton.cdiv(n_elements, BLOCK),)"),
     "grid is not (triton.cdiv(n, BLOCK),)"),
    (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets, mask=mask, cache_modifier='.cg')"),
     "already hinted"),
    (("    mask = offsets < n_elements", "    n_elements = n_elements - 1\n    mask = offsets < n_elements"),
     "the kernel reassigns n_elements"),
])
def test_recipe_hints_refuses_a_vector_add_it_cannot_prove(edit, why):
    assert why in refusal(Hints(), VECTOR_ADD.read_text(), "add", edit)
