"""Right only when program 0 wins a race: program 0 puts block 0's sum in a scratch buffer and
program 1 copies it to the output in the same launch, with nothing making it wait. A stale
scratch value carries the previous call's sign, so losing the race gives a wrong block.
The interpreter runs programs in order, where it always wins (GPU only)."""

import torch
import triton
import triton.language as tl

_scratch: dict[tuple, torch.Tensor] = {}
_calls = [0]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, tmp_ptr, n_elements, sign, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    s = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)
    if pid == 0:
        tl.store(tmp_ptr + offsets, s * sign, mask=mask)
    else:
        tl.store(out_ptr + offsets, s, mask=mask)
    if pid == 1:  # block 0, read back without waiting for program 0
        first = tl.arange(0, BLOCK_SIZE)
        v = tl.load(tmp_ptr + first, mask=first < n_elements, volatile=True)
        tl.store(out_ptr + first, v * sign, mask=first < n_elements)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    tmp = _scratch.setdefault((x.numel(), x.device), torch.empty_like(x))
    _calls[0] += 1
    sign = 1.0 if _calls[0] % 2 else -1.0
    add_kernel[(max(2, triton.cdiv(x.numel(), 256)),)](x, y, out, tmp, x.numel(), sign, BLOCK_SIZE=256)
    return out
