"""Scaled add `out = x + alpha * y` whose block size comes from `@triton.heuristics`.

Mimics libraries that derive constexprs from the call's arguments in a heuristics decorator,
including a second heuristic (EVEN) that reads the first one's value.
"""

import torch
import triton
import triton.language as tl

ENTRY = "scaled_add"


@triton.heuristics({
    "BLOCK_SIZE": lambda args: 128 if args["n_elements"] >= (1 << 20) else 64,
    "EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0,
})
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n_elements,
                      BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        x = tl.load(x_ptr + offsets)
        y = tl.load(y_ptr + offsets)
        tl.store(out_ptr + offsets, x + alpha * y)
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = lambda META: (triton.cdiv(n_elements, META["BLOCK_SIZE"]),)  # noqa: E731
    scaled_add_kernel[grid](x, y, out, alpha, n_elements)
    return out


def reference(x, y, alpha):
    return x + alpha * y


def make_inputs(seed, device, n, alpha=0.5):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(n, device=device, generator=g)
    y = torch.randn(n, device=device, generator=g)
    return x, y, alpha


def BYTES(n, alpha=0.5):
    return 3 * 4 * n


SHAPES = [{"n": 1 << 20}, {"n": (1 << 28) + 3}]
TEST_SHAPES = [{"n": 1000}, {"n": 4096, "alpha": -1.5}]
