"""Row log-softmax of fp16 logits over a vocabulary-sized last dim, three passes per row.

Mimics the log-softmax kernels that LLM sampling and loss code carries for vocabularies too
long to hold a row in registers: one program per row walks the row in chunks three times
(a vector running maximum, then a vector sum of `exp2`, then the write), with the chunk from
`min(next_power_of_2(n_cols), 4096)` and the warps from a conditional on it. The row is read
three times for one write.
"""

import torch
import triton
import triton.language as tl

ENTRY = "log_softmax"


@triton.jit
def _log_softmax_fwd(logits_ptr, out_ptr, stride_row, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    logits_ptr += row_idx * stride_row
    out_ptr += row_idx * stride_row
    offsets = tl.arange(0, BLOCK_SIZE)

    m_vec = tl.full([BLOCK_SIZE], float("-inf"), dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + offsets
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_vec = tl.maximum(m_vec, x)
    m = tl.max(m_vec, axis=0)

    s_vec = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + offsets
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        s_vec += tl.exp2((x - m) * 1.4426950408889634)
    lse = m + tl.log2(tl.sum(s_vec, axis=0)) * 0.6931471805599453

    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + offsets
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(out_ptr + cols, (x - lse).to(out_ptr.dtype.element_ty), mask=cols < n_cols)


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    assert logits.ndim == 2 and logits.stride(-1) == 1
    n_rows, n_cols = logits.shape
    out = torch.empty_like(logits)
    BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 4096)
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    _log_softmax_fwd[(n_rows,)](logits, out, logits.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return out


def reference(logits):
    return torch.log_softmax(logits.double(), dim=-1).to(logits.dtype)


def make_inputs(seed, device, rows, vocab):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(rows, vocab, device=device, generator=g, dtype=torch.float32).mul_(4).half(),)


# fp16 outputs of magnitude up to ~25: one half-precision step there is 0.0156.
TOLERANCE = {"atol": 2e-2, "rtol": 2e-3}


def BYTES(rows, vocab):
    return 2 * 2 * rows * vocab  # each logit read once and its log-probability written once


SHAPES = [{"rows": 2048, "vocab": 128256}, {"rows": 8192, "vocab": 32000}]
TEST_SHAPES = [{"rows": 3, "vocab": 5000}, {"rows": 2, "vocab": 300}]
