"""An autotuned kernel for the analysis tests, apart from sample_kernels.py because Triton 3.3's
Autotuner asks the GPU driver for a benchmarker when the decorator runs."""

import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 512}, num_warps=8, num_stages=2),
    ],
    key=["n"],
)
@triton.jit
def add_tuned(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
