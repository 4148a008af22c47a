"""How far launch parameters alone can take the matmul example: its own kernel, unchanged,
timed at 8192^3 fp16 for a few whole-tile configurations, against torch.matmul.

    python3 benchmarks/matmul_probe.py OUT.json

This bounds what the launch-parameter search can reach on examples/matmul.py; it is a
measurement, not a claim about the search.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import triton

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from tritonforge.problem.module import import_file  # noqa: E402

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
CONFIGS = [(64, 128, 64, 4, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
           (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4)]


def main() -> None:
    out = Path(sys.argv[1])
    mod = import_file(ROOT / "examples" / "matmul.py", "probe_matmul")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    want = torch.matmul(a, b)
    flops = 2 * M * N * K

    def bench(fn) -> float:
        return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")

    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "torch_matmul_ms": bench(lambda: torch.matmul(a, b)), "configs": []}
    result["torch_tflops"] = flops / result["torch_matmul_ms"] / 1e9
    for bm, bn, bk, warps, stages in CONFIGS:
        grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))

        def call():
            mod.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                    c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                    num_warps=warps, num_stages=stages)
        row = {"config": [bm, bn, bk, warps, stages]}
        try:
            call()
            row["max_abs_err"] = float((c.float() - want.float()).abs().max())
            row["ms"] = bench(call)
            row["tflops"] = flops / row["ms"] / 1e9
            row["fraction_of_torch"] = row["tflops"] / result["torch_tflops"]
        except Exception as e:  # out of resources for this config
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(json.dumps(row), flush=True)
        result["configs"].append(row)
    out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
