"""Triton 3.6's interpreter under numpy 2: loops with runtime bounds run once the fix is in."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tritonforge import triton_hooks

SCRIPT = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from tritonforge import triton_hooks
installed = triton_hooks.install_interpreter_compat()

@triton.jit
def total(x, out, n, B: tl.constexpr):
    acc = tl.zeros((B,), tl.float32)
    for s in range(0, n, B):
        i = s + tl.arange(0, B)
        acc += tl.load(x + i, mask=i < n, other=0.0)
    tl.store(out, tl.sum(acc, 0))

x = torch.randn(1000); o = torch.empty(1)
total[(1,)](x, o, 1000, B=128)
assert torch.allclose(o, x.sum().reshape(1), atol=1e-4), (o, x.sum())
print("installed" if installed else "not needed")
"""


@pytest.mark.slow
def test_runtime_loop_bounds_run_in_the_interpreter():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ("installed" if triton_hooks.interpreter_compat_needed() else "not needed")
