"""Logit soft-capping (`cap * tanh(x / cap)`) whose kernel is a static method of the class
that launches it.

Mimics libraries that keep a kernel and its launcher together in a class: the kernel is a
`@staticmethod @triton.jit` of the class, launched as `self._kernel[grid](...)` from
`__call__`, and the entry calls a module-level instance. The block and warps are literals at
the launch and in its grid.
"""

import torch
import triton
import triton.language as tl

ENTRY = "softcap"


class LogitSoftcap:
    def __init__(self, cap: float = 30.0):
        self.cap = cap

    @staticmethod
    @triton.jit
    def _kernel(x_ptr, out_ptr, n_elements, cap, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        # tanh(y) = 2 * sigmoid(2y) - 1, without libdevice
        y = cap * (2.0 * tl.sigmoid(2.0 * x / cap) - 1.0)
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(logits)
        n = logits.numel()
        self._kernel[(triton.cdiv(n, 128),)](logits, out, n, self.cap, BLOCK_SIZE=128, num_warps=1)
        return out


_softcap = LogitSoftcap(cap=30.0)


def softcap(logits: torch.Tensor) -> torch.Tensor:
    return _softcap(logits)


def reference(logits):
    x = logits.double()
    return (30.0 * torch.tanh(x / 30.0)).to(logits.dtype)


def make_inputs(seed, device, tokens, vocab):
    g = torch.Generator(device=device).manual_seed(seed)
    return ((torch.randn(tokens, vocab, device=device, generator=g) * 20).half(),)


def BYTES(tokens, vocab):
    return 2 * 2 * tokens * vocab


SHAPES = [{"tokens": 1024, "vocab": 256000}, {"tokens": 128, "vocab": 32000}]
TEST_SHAPES = [{"tokens": 3, "vocab": 200}, {"tokens": 2, "vocab": 77}]
