"""Column sums of an fp32 matrix with tiny 8 x 16 tiles.

Each program owns 16 columns and walks down all rows 8 at a time: 64-byte row segments,
a long serial loop per program, and few programs when the matrix is narrow.
"""

import torch
import triton
import triton.language as tl

ENTRY = "col_sum"


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < n_cols)


def col_sum(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty(n_cols, device=x.device, dtype=torch.float32)
    BLOCK_N = 32
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    col_sum_kernel[grid](x, out, n_rows, n_cols, x.stride(0), BLOCK_M=256, BLOCK_N=BLOCK_N)
    return out


def reference(x):
    return x.double().sum(dim=0).float()


def make_inputs(seed, device, rows, cols):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(rows, cols, device=device, generator=g),)


# fp32 sums over up to 65536 rows: allow for a different summation order.
TOLERANCE = {"atol": 1e-3, "rtol": 1e-4}
SHAPES = [{"rows": 32768, "cols": 8192}, {"rows": 4096, "cols": 65536}]
TEST_SHAPES = [{"rows": 37, "cols": 50}, {"rows": 130, "cols": 16}]
