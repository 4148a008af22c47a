"""Correct, but its kernel unrolls 400 dependent loads with tl.static_range, and Triton's GPU
passes (make_ttgir) take minutes on that: 51 s at 250 and 86 s at 300 on a 2-core machine,
growing about as the cube. The interpreter compiles nothing, so there it is merely correct.
A random constexpr per import keeps a compile that did finish out of Triton's cache."""

import random

import torch
import triton
import triton.language as tl

_SALT = random.getrandbits(30)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, UNROLL: tl.constexpr,
               SALT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    junk = x
    for i in tl.static_range(UNROLL):
        junk = junk * 1.0001 + tl.load(x_ptr + (offsets + i) % n_elements, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask) + junk * 0.0, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 256),)
    add_kernel[grid](x, y, out, x.numel(), BLOCK_SIZE=256, UNROLL=400, SALT=_SALT)
    return out
