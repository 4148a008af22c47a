"""Right output, but the kernel also writes the result over x (an undeclared in-place update)."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)
    tl.store(x_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
