"""2-D transpose whose tiles and warps are the fields of a module-level frozen dataclass.

Mimics code that keeps launch settings in a config object: `CONFIG = TileConfig(...)` with
fields given by keyword and one left at its default, read as `CONFIG.block_m` both at the
launch and in the grid. The 16 x 16 tiles move 64-byte rows of fp32 each way.
"""

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

ENTRY = "transpose"


@dataclass(frozen=True)
class TileConfig:
    block_m: int
    block_n: int
    num_warps: int = 4


CONFIG = TileConfig(block_m=16, block_n=16)


@triton.jit
def _transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[None, :] * stride_om + rm[:, None], tile, mask=mask)


def transpose(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, CONFIG.block_m), triton.cdiv(N, CONFIG.block_n))
    _transpose_kernel[grid](x, out, M, N, x.stride(0), out.stride(0),
                            BLOCK_M=CONFIG.block_m, BLOCK_N=CONFIG.block_n, num_warps=CONFIG.num_warps)
    return out


def reference(x):
    return x.t().contiguous()


def make_inputs(seed, device, M, N):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(M, N, device=device, generator=g),)


def BYTES(M, N):
    return 2 * 4 * M * N


SHAPES = [{"M": 8192, "N": 8192}, {"M": 16384, "N": 2050}]
TEST_SHAPES = [{"M": 40, "N": 70}, {"M": 33, "N": 17}]
