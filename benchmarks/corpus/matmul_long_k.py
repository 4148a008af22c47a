"""A matmul with a small output and a long reduction (C[M, N] = A[M, K] @ B[K, N], K >> M, N).

Mimics the weight-gradient and low-rank products of training code: few output tiles, each
walking a very long K, so most of the GPU idles however the tiles are sized. Tiles from
module constants, a 2-D grid, pointers advanced by BLOCK_K each step, fp16 in, fp32
accumulated, fp16 out.
"""

import torch
import triton
import triton.language as tl

ENTRY = "matmul_long_k"

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 64


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_long_k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _mm_kernel[grid](a, b, c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c


def reference(a, b):
    return torch.matmul(a.float(), b.float()).to(torch.float16)


def make_inputs(seed, device, M, N, K):
    g = torch.Generator(device=device).manual_seed(seed)
    # Scaled so that a long K keeps the sums inside fp16's range.
    a = (torch.randn(M, K, device=device, generator=g) / K ** 0.25).to(torch.float16)
    b = (torch.randn(K, N, device=device, generator=g) / K ** 0.25).to(torch.float16)
    return a, b


def FLOPS(M, N, K):
    return 2 * M * N * K


TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}
# The largest case: 1024 x 1024 x 131072 is 2.7e11 FLOPs (more than 4096^3 multiply-adds) and
# reads 512 MiB; its 16 x 16 output tiles of 64 are 256 programs, under two per SM of an H200.
SHAPES = [{"M": 1024, "N": 1024, "K": 131072}, {"M": 256, "N": 512, "K": 65536}]
TEST_SHAPES = [{"M": 48, "N": 40, "K": 1000}, {"M": 64, "N": 16, "K": 300}]
