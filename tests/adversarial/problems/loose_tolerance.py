"""Scales a vector by 1e-3. Its outputs are about 1e-3 in size while TOLERANCE allows 1e-2, so
an output of all zeros passes a plain allclose: the evaluator must notice that this tolerance
cannot tell a right answer from none."""

import torch
import triton
import triton.language as tl

ENTRY = "scale"


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 1e-3, mask=mask)


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def reference(x):
    return x * 1e-3


def make_inputs(seed, device, n):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(n, device=device, generator=g),)


TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}
SHAPES = [{"n": 1 << 24}]
TEST_SHAPES = [{"n": 1000}, {"n": 4099}]
