"""Matrix-vector product y = A @ x under a multi-config `@triton.autotune` keyed on (M, N).

Mimics libraries that autotune over a short list of configs, here all with small tiles: each
program owns BLOCK_M rows and walks the columns BLOCK_N at a time.
"""

import torch
import triton
import triton.language as tl

ENTRY = "matvec"


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=2),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 64}, num_warps=4),
    ],
    key=["M", "N"],
)
@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, N, stride_am, stride_an,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :] * stride_an,
                    mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
        acc += a.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=rows < M)


def matvec(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    M, N = a.shape
    y = torch.empty(M, device=a.device, dtype=a.dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]),)  # noqa: E731
    matvec_kernel[grid](a, x, y, M, N, a.stride(0), a.stride(1))
    return y


def reference(a, x):
    return (a.double() @ x.double()).to(a.dtype)


def make_inputs(seed, device, M, N, dtype="float16"):
    g = torch.Generator(device=device).manual_seed(seed)
    dt = getattr(torch, dtype)
    a = torch.randn(M, N, device=device, generator=g, dtype=dt)
    x = torch.randn(N, device=device, generator=g, dtype=dt)
    return a, x


def BYTES(M, N, dtype="float16"):
    size = torch.finfo(getattr(torch, dtype)).bits // 8
    return size * (M * N + N + M)


def FLOPS(M, N, dtype="float16"):
    return 2 * M * N


SHAPES = [{"M": 16384, "N": 16384}, {"M": 8192, "N": 16384, "dtype": "float32"}]
TEST_SHAPES = [{"M": 40, "N": 100, "dtype": "float32"}, {"M": 64, "N": 48, "dtype": "float32"}]
