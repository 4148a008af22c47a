"""A right answer that also overwrites its input `x`, and on its first call swaps the code
of the worker's mutation check (its module found by a name built at run time) for one that
finds nothing. The function keeps its identity; its code does not."""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_then_clobber_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
    tl.store(x_ptr + offsets, y, mask=mask)


def _nothing(*args, **kwargs):
    return None


def _bend() -> None:
    checks = sys.modules.get("triton" + "forge.worker.compare")
    if checks is not None:
        getattr(checks, "mutated").__code__ = _nothing.__code__


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    _bend()
    out = torch.empty_like(x)
    add_then_clobber_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out
