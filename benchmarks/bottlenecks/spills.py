"""Built to spill registers: a cumulative sum and a flip over 16384 elements held by one warp."""
import torch
import triton
import triton.language as tl

ENTRY = "scan_flip"


@triton.jit
def spills(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    s = tl.cumsum(v, axis=0)
    tl.store(out + offs, s * tl.flip(v, 0), mask=m)


def scan_flip(x):
    out = torch.empty_like(x)
    spills[(triton.cdiv(x.numel(), 16384),)](x, out, x.numel(), BLOCK=16384, num_warps=1)
    return out


def reference(x):
    blocks = x.double().view(-1, 16384)
    return (blocks.cumsum(1) * blocks.flip(1)).reshape(-1).float()


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


TOLERANCE = {"atol": 1e-2, "rtol": 1e-3}
SHAPES = [{"n": 1 << 24}]
TEST_SHAPES = [{"n": 16384}]
