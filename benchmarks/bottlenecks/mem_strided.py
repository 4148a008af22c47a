"""Built to be memory-bound with uncoalesced access: one program per column of a
row-major matrix, so neighbouring threads read addresses a whole row apart."""
import torch
import triton
import triton.language as tl

ENTRY = "col_sums"


@triton.jit
def mem_strided(x, out, rows, cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for r in range(0, rows, BLOCK):
        idx = r + tl.arange(0, BLOCK)
        acc += tl.load(x + idx * cols + col, mask=idx < rows, other=0.0)
    tl.store(out + col, tl.sum(acc, axis=0))


def col_sums(x):
    rows, cols = x.shape
    out = torch.empty(cols, device=x.device, dtype=torch.float32)
    mem_strided[(cols,)](x, out, rows, cols, BLOCK=256)
    return out


def reference(x):
    return x.double().sum(0).float()


def make_inputs(seed, device, rows, cols):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(rows, cols, device=device, generator=g),)


TOLERANCE = {"atol": 1e-3, "rtol": 1e-4}
SHAPES = [{"rows": 8192, "cols": 8192}]
TEST_SHAPES = [{"rows": 300, "cols": 7}]
