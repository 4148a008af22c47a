"""Built to be launch-bound by a tiny grid: one program reduces the whole vector."""
import torch
import triton
import triton.language as tl

ENTRY = "total"


@triton.jit
def tiny_grid(x, out, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(x + idx, mask=idx < n, other=0.0)
    tl.store(out, tl.sum(acc, axis=0))


def total(x):
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    tiny_grid[(1,)](x, out, x.numel(), BLOCK=1024)
    return out


def reference(x):
    return x.double().sum().reshape(1).float()


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


TOLERANCE = {"atol": 1e-2, "rtol": 1e-4}
SHAPES = [{"n": 1 << 24}]
TEST_SHAPES = [{"n": 5000}]
