"""Row-broadcast bias add whose tile sizes are module-level `tl.constexpr` globals.

Mimics kernels that keep their tiles as globals read inside the kernel body (Triton lets a
kernel read a global only as `tl.constexpr(...)`), with the host's grid reading `.value` of
the same globals: nothing about the tile is passed at the launch.
"""

import torch
import triton
import triton.language as tl

ENTRY = "add_bias"

TILE_M = tl.constexpr(4)
TILE_N = tl.constexpr(32)


@triton.jit
def _add_bias_kernel(x_ptr, b_ptr, out_ptr, M, N, stride_m):
    rows = tl.program_id(0) * TILE_M + tl.arange(0, TILE_M)
    cols = tl.program_id(1) * TILE_N + tl.arange(0, TILE_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride_m + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + cols, mask=cols < N)
    tl.store(out_ptr + offs, x + b[None, :], mask=mask)


def add_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    grid = (triton.cdiv(M, TILE_M.value), triton.cdiv(N, TILE_N.value))
    _add_bias_kernel[grid](x, bias, out, M, N, x.stride(0))
    return out


def reference(x, bias):
    return x + bias


def make_inputs(seed, device, rows, cols):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(rows, cols, device=device, generator=g).half()
    return x, torch.randn(cols, device=device, generator=g).half()


def BYTES(rows, cols):
    return 2 * (2 * rows * cols + cols)


SHAPES = [{"rows": 16384, "cols": 8192}, {"rows": 4096, "cols": 3000}]
TEST_SHAPES = [{"rows": 37, "cols": 100}, {"rows": 64, "cols": 64}]
