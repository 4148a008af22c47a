"""Control: a flat fp32 copy whose launch settings are already the usual good ones.

Mimics the plain streaming kernels of tutorials and libraries (1024 elements per program,
four warps); a tuner should leave it as fast as it is.
"""

import torch
import triton
import triton.language as tl

ENTRY = "copy"


@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def copy(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    copy_kernel[grid](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def reference(x):
    return x.clone()


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


def BYTES(n):
    return 2 * 4 * n


SHAPES = [{"n": 1 << 24}, {"n": 1 << 28}]
TEST_SHAPES = [{"n": 1000}, {"n": 5000}]
