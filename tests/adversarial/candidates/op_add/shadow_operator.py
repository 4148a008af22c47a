"""Computes the sum honestly with a plain launch, and at import registers a deliberately slow
kernel under the problem's own operator name ("tf_styles::add"). Were operator names shared by
the whole process, the problem's entry, timed beside this file in the same worker, would run
the slow kernel and this file would look many times faster (135x in the interpreter with 200
steps and the renaming switched off; 2000 steps here, so that a GPU sees it too)."""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def slow_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    acc = tl.load(x_ptr + offsets, mask=mask)
    for _ in range(2000):
        acc = acc + 0.0  # not folded away: -0.0 + 0.0 is +0.0
    tl.store(out_ptr + offsets, acc + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton_op("tf_styles::add", mutates_args={})
def _shadow(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    wrap_triton(slow_kernel)[(triton.cdiv(n_elements, 8),)](x, y, out, n_elements, BLOCK_SIZE=8)
    return out


def add(x, y):
    out = torch.empty_like(x)
    n_elements = out.numel()
    add_kernel[(triton.cdiv(n_elements, 64),)](x, y, out, n_elements, BLOCK_SIZE=64)
    return out
