"""Mean of a 2-D fp32 tensor along its last dim, 8 x 8 tiles, inside `torch.cuda.device`.

Mimics a reduction kernel from a public operator library: each program owns BLOCK_M rows and
walks the columns BLOCK_N at a time, with both tile sizes fixed as module constants.
"""

import torch
import triton
import triton.language as tl

ENTRY = "mean_last_dim"

BLOCK_M = 8
BLOCK_N = 8


@triton.jit
def mean_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1) / N, mask=rows < M)


def mean_last_dim(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty(M, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, BLOCK_M),)
    with torch.cuda.device(x.device):
        mean_kernel[grid](x, out, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def reference(x):
    return x.double().mean(dim=-1).to(x.dtype)


def make_inputs(seed, device, M, N):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(M, N, device=device, generator=g) + 1.0,)


def BYTES(M, N):
    return 4 * (M * N + M)


SHAPES = [{"M": 32768, "N": 4096}, {"M": 4096, "N": 32768}]
TEST_SHAPES = [{"M": 20, "N": 100}, {"M": 9, "N": 257}]
