"""Embedding lookup written the `out=` way: the entry fills a caller-provided `out` and returns it.

Mimics library entries with an output argument (declared in OUTPUTS) that also hand the same
tensor back, with a 2-D grid of token blocks by hidden-dim blocks set from local variables.
"""

import torch
import triton
import triton.language as tl

ENTRY = "embedding"
OUTPUTS = ["out"]


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n_tokens, dim,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ids = tl.load(ids_ptr + tokens, mask=tokens < n_tokens, other=0)
    mask = (tokens[:, None] < n_tokens) & (cols[None, :] < dim)
    rows = tl.load(weight_ptr + ids[:, None] * dim + cols[None, :], mask=mask)
    tl.store(out_ptr + tokens[:, None].to(tl.int64) * dim + cols[None, :], rows, mask=mask)


def embedding(ids: torch.Tensor, weight: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_tokens = ids.numel()
    dim = weight.shape[1]
    BLOCK_M = 4
    BLOCK_N = 64
    grid = (triton.cdiv(n_tokens, BLOCK_M), triton.cdiv(dim, BLOCK_N))
    embedding_kernel[grid](ids, weight, out, n_tokens, dim, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def reference(ids, weight, out):
    torch.index_select(weight, 0, ids, out=out)
    return out


def make_inputs(seed, device, tokens, vocab, dim):
    g = torch.Generator(device=device).manual_seed(seed)
    ids = torch.randint(0, vocab, (tokens,), device=device, generator=g)
    weight = torch.randn(vocab, dim, device=device, generator=g)
    out = torch.zeros(tokens, dim, device=device)
    return ids, weight, out


def BYTES(tokens, vocab, dim):
    return 2 * 4 * tokens * dim + 8 * tokens


SHAPES = [{"tokens": 8192, "vocab": 32000, "dim": 4096}, {"tokens": 32768, "vocab": 128256, "dim": 2048}]
TEST_SHAPES = [{"tokens": 10, "vocab": 50, "dim": 100}, {"tokens": 33, "vocab": 7, "dim": 64}]
