"""Built to be tensor-core bound: fp16 4096^3 matmul, 128x128x64 tiles, 8 warps, 3 stages."""
import torch
import triton
import triton.language as tl

ENTRY = "mm"


@triton.jit
def matmul_tc(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]),
                      tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)
    matmul_tc[(M // 128, N // 128)](a, b, c, M, N, K, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    return c


def reference(a, b):
    return (a.float() @ b.float()).half()


def make_inputs(seed, device, M, N, K):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(M, K, device=device, generator=g, dtype=torch.float16),
            torch.randn(K, N, device=device, generator=g, dtype=torch.float16))


SHAPES = [{"M": 4096, "N": 4096, "K": 4096}]
TEST_SHAPES = [{"M": 128, "N": 128, "K": 128}]
