"""Gradient clipping's scale step over one flat fp16 buffer that holds a whole model's gradients.

Mimics optimizer and clipping code that flattens a model's parameters into one contiguous
buffer and launches a single 1-D kernel over it, every access masked by `offsets < n_elements`.
The element count is the model's parameter count, which is rarely a multiple of 16: GPT-2
small with its output bias has 124,490,065, ResNet-50 has 25,557,032.
"""

import torch
import triton
import triton.language as tl

ENTRY = "clip_scale_"


@triton.jit
def _scale_kernel(grad_ptr, out_ptr, clip_coef, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    g = tl.load(grad_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (g * clip_coef).to(tl.float16), mask=mask)


def clip_scale_(flat_grads: torch.Tensor, clip_coef: float) -> torch.Tensor:
    """The gradients times `clip_coef` (min(1, max_norm / total_norm), computed by the caller)."""
    out = torch.empty_like(flat_grads)
    n_elements = flat_grads.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    _scale_kernel[grid](flat_grads, out, clip_coef, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def reference(flat_grads, clip_coef):
    return (flat_grads.float() * clip_coef).half()


def make_inputs(seed, device, n, clip_coef=0.37):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.randn(n, device=device, generator=g, dtype=torch.float16), clip_coef


def BYTES(n, clip_coef=0.37):
    return 2 * 2 * n


SHAPES = [{"n": 25_557_032}, {"n": 124_490_065}]
TEST_SHAPES = [{"n": 1000}, {"n": 4096, "clip_coef": 1.0}, {"n": 5003}]
