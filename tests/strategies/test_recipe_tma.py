"""The tma recipe (`-k recipe`): a tiled matmul gets a copy that loads A and B through tensor
descriptors, launched where both operands' layouts allow one and the original kernel where
not; both paths correct in Triton's interpreter (which emulates the descriptors' zero
padding of partial tiles), and refused where the loads would not provably be the same."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.analysis.launch_sites import SearchSpace
from tritonforge.strategies.launch.rewrite import rewrite
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.tma import TensorDescriptorLoads

MATMUL = ROOT / "examples" / "matmul.py"
CORPUS = ROOT / "benchmarks" / "corpus"


def rewritten(source: str, entry: str) -> str:
    result = TensorDescriptorLoads().rewrite(source, entry)
    assert isinstance(result, Rewrite), result
    return result.source


def only(path: str, source: str) -> str:
    """`source` with the other path of the dispatch raising: judged correct only if every test
    case takes `path` ("descriptors" or "fallback")."""
    head, tail = source.split("    if use_tma:\n")
    if path == "descriptors":
        fallback = "    else:\n        raise RuntimeError('fallback')\n"
        return head + "    if use_tma:\n" + tail.replace("    else:\n", fallback, 1)
    return head + "    if use_tma:\n        raise RuntimeError('descriptors')\n" + tail


def test_recipe_tma_loads_the_example_matmul_through_descriptors_and_stays_correct(tmp_path):
    # Its test cases (48 x 40 x 72 and 64 x 32 x 16 in tiles of 32) have partial tiles along
    # M and K: the descriptors' zero padding stands in for the masks.
    source = rewritten(MATMUL.read_text(), "matmul")
    assert "def matmul_kernel_tma(a_desc, b_desc, c_ptr," in source
    assert "a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])" in source
    assert "b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])" in source
    assert source.count("a_ptrs += BLOCK_K * stride_ak") == 1  # the original kernel's only
    assert "a_desc = TensorDescriptor(a, [M, K], [a.stride(0), a.stride(1)], [BLOCK_M, BLOCK_K])" in source
    assert "b_desc = TensorDescriptor(b, [K, N], [b.stride(0), b.stride(1)], [BLOCK_K, BLOCK_N])" in source
    assert "matmul_kernel_tma[grid](a_desc, b_desc, c, M, N, K," in source
    assert "from triton.tools.tensor_descriptor import TensorDescriptor" in source
    assert_correct(MATMUL, source, tmp_path)
    assert_correct(MATMUL, only("descriptors", source), tmp_path)
    with pytest.raises(AssertionError):  # the check above can fail: the descriptors are used
        assert_correct(MATMUL, only("fallback", source), tmp_path)


@pytest.mark.parametrize("problem, entry, load", [
    # Offsets made in the loop from its K offset, strides left out (1) or a size: no advances.
    (FIXTURES / "problems" / "styles" / "matmul_1d_grid.py", "mm", "a = a_desc.load([pid_m * BLOCK_M, k0])"),
    # Its second test case (K = 300 in fp16, rows of 600 bytes) takes the original kernel.
    (CORPUS / "matmul_long_k.py", "matmul_long_k", "a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])"),
    # Grouped 1-D grid, blocks from a per-dtype config dict; an fp32 test case too.
    (CORPUS / "matmul_dtype_configs.py", "matmul", "a = a_desc.load([pid_m * BLOCK_SIZE_M, k * BLOCK_SIZE_K])"),
])
def test_recipe_tma_applies_to_matmuls_written_differently_and_stays_correct(problem, entry, load, tmp_path):
    source = rewritten(problem.read_text(), entry)
    assert load in source
    assert_correct(problem, source, tmp_path)


def test_recipe_tma_keeps_a_meta_grid_and_the_launch_block_values(tmp_path):
    problem = FIXTURES / "problems" / "styles" / "matmul_2d_grid.py"
    meta = problem.read_text().replace(
        "    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))\n",
        "    grid = lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))\n")
    source = rewritten(meta, "mm")
    # The launch's literal blocks become names that both launches and the descriptors read.
    assert "    block_m, block_n, block_k = 16, 16, 16\n" in source
    assert "a_desc = TensorDescriptor(a, [M, K], [K, 1], [block_m, block_k])" in source
    assert "mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)" in source
    assert_correct(problem, only("descriptors", source), tmp_path)


def test_recipe_tma_reads_unmasked_tiles_within_the_tensor_and_passes_descriptors_by_keyword(tmp_path):
    # Unmasked loads: the descriptor takes the tensor's own extent, once its strides are known
    # to be the kernel's. Its test case (176 x 48 x 32 in tiles of 16) has whole tiles only.
    problem = FIXTURES / "problems" / "styles" / "matmul_2d_grid.py"
    text = problem.read_text()
    for mask in (", mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)",
                 ", mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)",
                 ("mm_kernel[grid](a, b, c, M, N, K,", "mm_kernel[grid](a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K,")):
        old, new = mask if isinstance(mask, tuple) else (mask, ")")
        assert old in text
        text = text.replace(old, new)
    source = rewritten(text, "mm")
    assert "a_desc = TensorDescriptor(a, [a.shape[0], a.shape[1]], [K, 1], [block_m, block_k])" in source
    assert "a.dim() == 2 and tuple(a.stride()) == (K, 1)" in source
    assert "mm_kernel_tma[grid](a_desc=a_desc, b_desc=b_desc, c_ptr=c," in source
    assert_correct(problem, only("descriptors", source), tmp_path)


def test_recipe_tma_stays_consistent_under_a_later_launch_parameter_move(tmp_path):
    # A move of the (square) block literal rewrites the grid, both launches and the
    # descriptors' block shapes together.
    problem = FIXTURES / "problems" / "styles" / "matmul_2d_grid.py"
    source = rewritten(problem.read_text(), "mm")
    space = SearchSpace.from_source(source, "mm")
    block = next(t.id for t in space.by_id.values() if t.free and t.id.endswith(".BLOCK_M"))
    moved = rewrite(source, {block: 32}, "mm")
    assert "    block_m, block_n, block_k = 32, 32, 32\n" in moved
    assert "grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))" in moved
    assert_correct(problem, only("descriptors", moved), tmp_path)


@pytest.mark.parametrize("edit", [
    # K = 50 in fp16: rows of 100 bytes, not 16-byte aligned.
    ('TEST_SHAPES = [{"M": 48, "N": 40, "K": 72}, {"M": 64, "N": 32, "K": 16}]',
     'TEST_SHAPES = [{"M": 48, "N": 40, "K": 50}, {"M": 33, "N": 24, "K": 50}]'),
    # B a transposed view: contiguous along K, not along its last dim.
    ("    b = torch.randn(K, N, device=device, generator=g, dtype=torch.float16)\n",
     "    b = torch.randn(N, K, device=device, generator=g, dtype=torch.float16).t()\n"),
], ids=["unaligned_rows", "transposed_view"])
def test_recipe_tma_falls_back_to_the_original_kernel_where_the_layout_does_not_allow(edit, tmp_path):
    text = MATMUL.read_text()
    assert edit[0] in text
    problem = tmp_path / "matmul_variant.py"
    problem.write_text(text.replace(edit[0], edit[1]))
    source = rewritten(problem.read_text(), "matmul")
    assert_correct(problem, only("fallback", source), tmp_path)


@pytest.mark.parametrize("edit, why", [
    (("b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
      "b_ptrs = b_ptr + offs_k[:, None] + offs_n[None, :] * stride_bn"), "transposed descriptor load is not in this"),
    (("b.stride(0), b.stride(1), c.stride(0)", "b.stride(1), b.stride(0), c.stride(0)"), "'b_ptr' is read transposed"),
    (("(offs_k[None, :] < k_left), other=0.0)", "(offs_k[None, :] < k_left), other=1.0)"), "fills with 1.0, not zero"),
    (("(offs_k[None, :] < k_left), other=0.0)", "(offs_k[None, :] < k_left))"), "fills with nothing, not zero"),
    (("(offs_k[None, :] < k_left), other", "(offs_k[None, :] < K), other"), "does not bound its offsets"),
    (("(offs_m[:, None] < M) & (offs_k", "(offs_m[:, None] <= M) & (offs_k"), "is not bounds of its tile offsets"),
    (("a_ptrs += BLOCK_K * stride_ak", "a_ptrs += 2 * BLOCK_K * stride_ak"), "advances by 2 * BLOCK_K * stride_ak"),
    (("offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", "offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M"),
     "are not start + tl.arange(0, BLOCK)"),
    (("a_ptrs = a_ptr + offs_m[:, None] * stride_am", "a_ptrs = a_ptr + offs_m[:, None] * stride_am * 2"),
     "not of the form x_ptr + offs_r"),
    (("a_ptrs += BLOCK_K * stride_ak\n", "a_ptrs += BLOCK_K * stride_ak\n        tl.store(c_ptr, a_ptr)\n"),
     "'a_ptr' is used besides its tile load"),
])
def test_recipe_tma_refuses_loads_that_would_not_be_the_same_tile(edit, why):
    assert why in refusal(TensorDescriptorLoads(), MATMUL.read_text(), "matmul", edit)


@pytest.mark.parametrize("problem, entry, why", [
    (ROOT / "examples" / "vector_add.py", "vector_add", "no tl.dot"),
    (ROOT / "examples" / "softmax.py", "softmax", "no tl.dot"),
    (CORPUS / "matvec_autotune.py", "matvec", "set in a pre_hook"),
])
def test_recipe_tma_refuses_kernels_without_a_product_or_with_tuned_blocks(problem, entry, why):
    result = TensorDescriptorLoads().rewrite(problem.read_text(), entry)
    assert isinstance(result, str) and why in result, result


def test_recipe_tma_refuses_a_file_rewritten_already():
    once = rewritten(MATMUL.read_text(), "matmul")
    assert "already has a tensor-descriptor copy" in TensorDescriptorLoads().rewrite(once, "matmul")
