"""L2 normalisation of many short fp32 rows (attention heads, say), one program per row.

Mimics the row-normalisation kernels of public linear-attention libraries: the grid is one
program per row, the block is `triton.next_power_of_2` of the row length (so one program
cannot take more rows), the row length is a constexpr, and the kernel moves its pointer
arguments to its row (`x += i_t * D`). With rows of 64 or 256 elements each program does
very little, and a million of them are launched.
"""

import torch
import triton
import triton.language as tl

ENTRY = "l2norm_rows"


@triton.jit
def l2norm_fwd_kernel(x, y, eps, D: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    x += i_t * D
    y += i_t * D
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + o_d, mask=m_d, other=0.0).to(tl.float32)
    b_var = tl.sum(b_x * b_x, axis=0)
    b_y = b_x / tl.sqrt(b_var + eps)
    tl.store(y + o_d, b_y.to(y.dtype.element_ty), mask=m_d)


def l2norm_rows(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    x_shape_og = x.shape
    x = x.reshape(-1, x.shape[-1])
    if x.stride(-1) != 1:
        x = x.contiguous()
    T, D = x.shape
    y = torch.empty_like(x)
    BD = triton.next_power_of_2(D)
    l2norm_fwd_kernel[(T,)](x, y, eps, D=D, BD=BD)
    return y.view(x_shape_og)


def reference(x, eps):
    x64 = x.double()
    return (x64 / torch.sqrt((x64 * x64).sum(dim=-1, keepdim=True) + eps)).to(x.dtype)


def make_inputs(seed, device, rows, cols):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.randn(rows, cols, device=device, generator=g), 1e-6


def BYTES(rows, cols):
    return 4 * 2 * rows * cols  # each row read once and written once


SHAPES = [{"rows": 1 << 20, "cols": 64}, {"rows": 1 << 18, "cols": 256}]
TEST_SHAPES = [{"rows": 37, "cols": 50}, {"rows": 8, "cols": 64}]
