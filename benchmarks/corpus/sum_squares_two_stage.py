"""Sum of squares of a 1-D fp32 tensor in two stages: per-chunk partial sums, then one final pass.

Mimics two-kernel reductions in public code: the first kernel writes one partial per program,
the second (a single program) loops over the partials; both block sizes are module constants.
"""

import torch
import triton
import triton.language as tl

ENTRY = "sum_of_squares"

PARTIAL_BLOCK = 256
FINAL_BLOCK = 1024


@triton.jit
def partial_sum_kernel(x_ptr, partial_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def final_sum_kernel(partial_ptr, out_ptr, n_partials, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK_SIZE):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def sum_of_squares(x: torch.Tensor) -> torch.Tensor:
    n_elements = x.numel()
    n_partials = triton.cdiv(n_elements, PARTIAL_BLOCK)
    partials = torch.empty(n_partials, device=x.device, dtype=torch.float32)
    out = torch.empty((), device=x.device, dtype=torch.float32)
    partial_sum_kernel[(n_partials,)](x, partials, n_elements, BLOCK_SIZE=PARTIAL_BLOCK)
    final_sum_kernel[(1,)](partials, out, n_partials, BLOCK_SIZE=FINAL_BLOCK)
    return out


def reference(x):
    return (x.double() ** 2).sum().to(torch.float32)


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


def BYTES(n):
    return 4 * n


SHAPES = [{"n": 1 << 24}, {"n": 1 << 28}]
TEST_SHAPES = [{"n": 1000}, {"n": 70001}]
