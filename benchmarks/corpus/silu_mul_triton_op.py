"""SwiGLU's activation (`silu(gate) * up`, fp16) registered as a PyTorch operator with
`torch.library.triton_op`, the launch wrapped in `wrap_triton` so torch.compile can trace it, as
PyTorch's own tutorial on user-defined Triton kernels writes it. The block is a literal at the
launch and in its grid (128 elements, Triton's default 4 warps).
"""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

ENTRY = "silu_mul"


@triton.jit
def silu_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask).to(tl.float32)
    up = tl.load(up_ptr + offsets, mask=mask).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton_op("tritonforge_corpus::silu_mul", mutates_args={})
def silu_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(gate)
    n_elements = out.numel()
    wrap_triton(silu_mul_kernel)[(triton.cdiv(n_elements, 128),)](gate, up, out, n_elements, BLOCK_SIZE=128)
    return out


def reference(gate, up):
    g = gate.double()
    return (g * torch.sigmoid(g) * up.double()).to(gate.dtype)


def make_inputs(seed, device, tokens, hidden):
    g = torch.Generator(device=device).manual_seed(seed)
    gate = torch.randn(tokens, hidden, device=device, generator=g).half()
    up = torch.randn(tokens, hidden, device=device, generator=g).half()
    return gate, up


TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}
SHAPES = [{"tokens": 8192, "hidden": 14336}, {"tokens": 1024, "hidden": 14336}]
TEST_SHAPES = [{"tokens": 3, "hidden": 500}, {"tokens": 2, "hidden": 1432}]
