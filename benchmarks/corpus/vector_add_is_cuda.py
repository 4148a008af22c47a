"""Vector add with an `assert x.is_cuda and y.is_cuda` guard and a grid computed from META.

Mimics the entry of Triton's vector-add tutorial and the code copied from it: the guard at the
top, `grid = lambda meta: ...`, and the block size kept as a module constant.
"""

import torch
import triton
import triton.language as tl

ENTRY = "add"

BLOCK_SIZE = 64


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and y.is_cuda
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return output


def reference(x, y):
    return x + y


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.rand(n, device=device, generator=g), torch.rand(n, device=device, generator=g)


def BYTES(n):
    return 3 * 4 * n


SHAPES = [{"n": 98432}, {"n": 1 << 28}]
TEST_SHAPES = [{"n": 1000}, {"n": 98432 // 64}]
