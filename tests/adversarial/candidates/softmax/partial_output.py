"""A real kernel that normalizes only the first half of the rows and writes zeros in the rest."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = tl.where(row < n_rows // 2, e / tl.sum(e, axis=0), 0.0)
    tl.store(out_ptr + row * stride + cols, y, mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, out, n_rows, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return out
