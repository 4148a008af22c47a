"""The hints recipe (`-k recipe`): 1-D streaming kernels drop their bounds masks in every
program whose block is full (the body written twice, under a test of the program's block),
and their one-time loads get evict_first; correct in Triton's interpreter on sizes that
divide the block and sizes that do not, still correct after the launch search moves the
block, refused on other kernels, and compiled for sm_90 with 16-byte loads where the mask
had left 2-byte ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from tests.analysis.conftest import load
from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.analysis.compiled import compile_offline
from tritonforge.analysis.launch_capture import capture_launches
from tritonforge.strategies.launch.rewrite import rewrite as move_launch
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.hints import Hints

CORPUS = ROOT / "benchmarks" / "corpus"
VECTOR_ADD = EXAMPLES / "vector_add.py"
FULL = "    if tl.program_id(0) * BLOCK_SIZE + BLOCK_SIZE <= n_elements:  # every lane in bounds: no masks (hints)\n"


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


def test_recipe_hints_vector_add_drops_masks_in_full_blocks(tmp_path):
    source = _hinted(VECTOR_ADD, "add")
    assert FULL in source and "\n    else:\n" in source
    assert 'x = tl.load(x_ptr + offsets, mask=None, eviction_policy="evict_first")' in source
    assert "tl.store(out_ptr + offsets, x + y, mask=None)" in source
    assert 'x = tl.load(x_ptr + offsets, mask=mask, eviction_policy="evict_first")' in source  # the last block
    assert "add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK)\n" in source  # the host is unchanged
    shapes = '[{"n": 1000}, {"n": 4096}, {"n": 4099}]'  # 4096 is 64 blocks of 64
    assert_correct(_problem(tmp_path, VECTOR_ADD, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_on_fp16_and_an_odd_size_compiles_full_blocks_to_16_byte_loads(tmp_path):
    # A flat fp16 buffer of a model's gradients, 124,490,065 elements (test sizes 1000, 4096, 5003).
    # A mask on an n the compiler cannot prove a multiple of 16 leaves each lane 2-byte loads.
    path = CORPUS / "grad_scale_flat_fp16.py"
    hinted = tmp_path / "hinted" / path.name
    hinted.parent.mkdir()
    hinted.write_text(_hinted(path, "clip_scale_"))
    assert_correct(path, hinted.read_text(), tmp_path)
    grads = torch.empty(124_490_065, device="meta", dtype=torch.float16)
    widths = []
    for file in (path, hinted):
        module = load(file, interpret=False)
        (record,) = capture_launches(lambda: module.clip_scale_(grads, 0.5), ())
        widths.append(sorted(compile_offline(record).ptx.global_loads))
    assert widths == [[16], [16, 128]]  # bits: the masked tail keeps 2-byte loads, full blocks load 16 bytes


def test_recipe_hints_leaves_a_literal_positional_block_where_the_launch_wrote_it(tmp_path):
    path = CORPUS / "relu_squared_positional.py"
    source = _hinted(path, "relu_squared")
    assert "relu_squared_kernel[grid](x, out, n, 128)" in source
    assert "if tl.program_id(0) * BLOCK_SIZE + BLOCK_SIZE <= n_elements:" in source
    shapes = '[{"n": 1000}, {"n": 4096}]'
    assert_correct(_problem(tmp_path, path, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_two_kernels_keep_the_reused_bias_load_cached(tmp_path):
    path = CORPUS / "bias_gelu_residual_chain.py"  # test sizes 2100 and 3072 (3 blocks of 1024)
    source = _hinted(path, "bias_gelu_residual")
    assert source.count(FULL) == 2
    assert "tl.load(bias_ptr + offsets % n_cols, mask=None)\n" in source  # read by every row: no evict_first
    assert "tl.load(bias_ptr + offsets % n_cols, mask=mask)\n" in source
    assert_correct(path, source, tmp_path)


def test_recipe_hints_autotuned_block(tmp_path):
    path = CORPUS / "swiglu_autotune_one.py"  # test sizes 2100 and 1024 (8 blocks of 128)
    source = _hinted(path, "swiglu")
    assert FULL in source and "heuristics" not in source
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
    assert '"BLOCK_SIZE": lambda args' in source and FULL in source
    assert_correct(path, source, tmp_path)


@pytest.mark.parametrize("path, entry, tunable, value, moved", [
    (VECTOR_ADD, "add", "add_kernel.BLOCK_SIZE", 128, "    BLOCK = 128\n"),
    (CORPUS / "relu_squared_positional.py", "relu_squared", "relu_squared_kernel.BLOCK_SIZE", 32,
     "relu_squared_kernel[grid](x, out, n, 32)"),
])
def test_recipe_hints_stays_correct_after_the_launch_search_moves_the_block(tmp_path, path, entry, tunable,
                                                                           value, moved):
    source = move_launch(_hinted(path, entry), {tunable: value}, entry)
    assert moved in source
    # 4160 is 65 blocks of 64 but not a multiple of 128: the test of a full block reads the block moved.
    shapes = '[{"n": 1000}, {"n": 4096}, {"n": 4160}]'
    assert_correct(_problem(tmp_path, path, shapes), _with_shapes(source, shapes), tmp_path)


def test_recipe_hints_stays_correct_on_a_grid_with_programs_past_the_end(tmp_path):
    # Programs beyond the last block fail the test of a full block and keep their masks.
    wide = VECTOR_ADD.read_text().replace("grid = (triton.cdiv(n_elements, BLOCK),)",
                                          "grid = (4 * triton.cdiv(n_elements, BLOCK),)")
    shapes = '[{"n": 1000}, {"n": 4096}]'
    path = tmp_path / "problem"
    path.mkdir()
    assert_correct(_problem(path, VECTOR_ADD, shapes),
                   _with_shapes(_hinted(VECTOR_ADD, "add", wide), shapes), tmp_path)


def test_recipe_hints_reaches_a_kernel_launched_inside_a_device_context():
    # The interpreter cannot run `with torch.cuda.device(...)`: this checks the rewrite only.
    source = _hinted(CORPUS / "gelu_device_context.py", "gelu")
    assert FULL in source
    assert "        gelu_kernel[grid](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)" in source


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
    once = _hinted(VECTOR_ADD, "add")
    twice = Hints().rewrite(once, "add")
    assert isinstance(twice, str) and "already hinted: a load or store sets eviction_policy" in twice
    split_only = Hints().rewrite(once.replace(', eviction_policy="evict_first"', ""), "add")
    assert "already switched off under `if tl.program_id(0) * BLOCK_SIZE + BLOCK_SIZE <= n_elements`" in split_only


@pytest.mark.parametrize("edit, why", [
    (("mask = offsets < n_elements", "mask = offsets <= n_elements"), "a mask is not offsets < n"),
    (("mask = offsets < n_elements", "mask = offsets < n_elements - 1"), "a mask is not offsets < n"),
    (("offsets = pid * BLOCK_SIZE + tl.arange", "offsets = pid * 2 * BLOCK_SIZE + tl.arange"),
     "offsets are not tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"),
    (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets, mask=mask, cache_modifier='.cg')"),
     "already hinted"),
    (("    mask = offsets < n_elements", "    n_elements = n_elements - 1\n    mask = offsets < n_elements"),
     "the kernel reassigns n_elements"),
    (("    mask = offsets < n_elements", "    if pid < 0:\n        return\n    mask = offsets < n_elements"),
     "returns early"),
])
def test_recipe_hints_refuses_a_vector_add_it_cannot_prove(edit, why):
    assert why in refusal(Hints(), VECTOR_ADD.read_text(), "add", edit)
