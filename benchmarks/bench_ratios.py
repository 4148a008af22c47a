"""The two ratio claims of the optimize issue, measured in one process on the GPU:

- vector_add best.py against a large torch device-to-device copy (bytes read + written);
- matmul best.py against torch.matmul at the largest shape (8192^3 fp16).

    python3 benchmarks/bench_ratios.py RUNS_DIR OUT.json
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


def bench(fn) -> float:
    # do_bench flushes L2 before each repetition; ask for the median explicitly.
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


def main() -> None:
    runs, out = Path(sys.argv[1]), Path(sys.argv[2])
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    src = torch.randn(1 << 28, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    copy_ms = bench(lambda: dst.copy_(src))
    copy_bw = 2 * src.numel() * 4 / (copy_ms * 1e-3)
    result["copy"] = {"bytes_moved": 2 * src.numel() * 4, "ms": copy_ms, "bytes_per_s": copy_bw}
    del src, dst

    n = 1 << 27
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    for label, path in (("baseline", ROOT / "examples" / "vector_add.py"), ("best", runs / "vector_add" / "best.py")):
        if path.exists():
            add = getattr(import_file(path, f"bench_{label}"), "add")
            assert torch.equal(add(x, y), x + y)
            ms = bench(lambda: add(x, y))
            bw = 3 * n * 4 / (ms * 1e-3)
            result[f"vector_add_{label}"] = {"ms": ms, "bytes_per_s": bw, "fraction_of_copy": bw / copy_bw}
    del x, y

    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    torch_ms = bench(lambda: torch.matmul(a, b))
    result["torch_matmul"] = {"ms": torch_ms, "tflops": 2 * M * N * K / (torch_ms * 1e-3) / 1e12}
    want = torch.matmul(a.float(), b.float())
    for label, path in (("baseline", ROOT / "examples" / "matmul.py"), ("best", runs / "matmul" / "best.py")):
        if path.exists():
            mm = getattr(import_file(path, f"bench_mm_{label}"), "matmul")
            err = (mm(a, b).float() - want).abs().max().item()
            ms = bench(lambda: mm(a, b))
            result[f"matmul_{label}"] = {"ms": ms, "tflops": 2 * M * N * K / (ms * 1e-3) / 1e12,
                                         "fraction_of_torch": torch_ms / ms, "max_abs_err": err}
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
