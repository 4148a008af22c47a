"""Per-row cross-entropy loss over fp32 logits with a vocabulary-sized last dim.

Mimics the loss kernels of LLM training libraries: one program per row, an online logsumexp
over the vocabulary in fixed chunks, and the launch inside `torch.cuda.device(logits.device)`.
"""

import torch
import triton
import triton.language as tl

ENTRY = "cross_entropy"


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, stride, V, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * stride
    running_max = -float("inf")
    running_sum = 0.0
    for start in range(0, V, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < V, other=-float("inf"))
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    target = tl.load(target_ptr + row)
    target_logit = tl.load(row_ptr + target)
    tl.store(loss_ptr + row, tl.log(running_sum) + running_max - target_logit)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    n_rows, V = logits.shape
    loss = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
    BLOCK_SIZE = 256
    num_warps = 4
    with torch.cuda.device(logits.device):
        cross_entropy_kernel[(n_rows,)](logits, target, loss, logits.stride(0), V,
                                        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.double(), target, reduction="none").float()


def make_inputs(seed, device, rows, vocab):
    g = torch.Generator(device=device).manual_seed(seed)
    logits = torch.randn(rows, vocab, device=device, generator=g) * 4
    target = torch.randint(0, vocab, (rows,), device=device, generator=g)
    return logits, target


def BYTES(rows, vocab):
    return 4 * rows * vocab + 12 * rows


SHAPES = [{"rows": 4096, "vocab": 32000}, {"rows": 2048, "vocab": 128256}]
TEST_SHAPES = [{"rows": 4, "vocab": 300}, {"rows": 3, "vocab": 1000}]
