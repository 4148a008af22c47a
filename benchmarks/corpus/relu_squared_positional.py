"""Squared ReLU with its block size passed positionally and a grid computed from META.

Mimics call sites that pass constexprs by position (`kernel[grid](x, out, n, 128)`) and let
the grid lambda read the block size back from the launch's arguments.
"""

import torch
import triton
import triton.language as tl

ENTRY = "relu_squared"


@triton.jit
def relu_squared_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0)
    tl.store(out_ptr + offsets, x * x, mask=mask)


def relu_squared(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)  # noqa: E731
    relu_squared_kernel[grid](x, out, n, 128)
    return out


def reference(x):
    return torch.relu(x) ** 2


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


def BYTES(n):
    return 2 * 4 * n


SHAPES = [{"n": 1 << 22}, {"n": 1 << 28}]
TEST_SHAPES = [{"n": 1000}, {"n": 3000}]
