"""What is left above the matmul example's best on Hopper: its session-16 best (tensor-descriptor
loads, 128x256x64 tiles, 8 warps, 3 stages) against variants a recipe could make of it, at
4096^3 and 8192^3 fp16, with torch.matmul in the same process.

    python3 benchmarks/matmul_variants.py OUT.json [--rounds 3]

Variants: 4 stages; grouped tile order (tl.swizzle2d, as the tile_order recipe writes it);
the output stored through a descriptor too (whole tile, or two halves to fit the shared
memory of 4 stages); a persistent grid (one program per SM looping over grouped tiles, as
Triton's persistent-matmul tutorial does), with and without a flattened loop. Each variant
is checked against torch.matmul before it is timed (triton.testing.do_bench, median), and
variants and torch.matmul are timed in alternating rounds so drift of the clock or the
power limit falls on all alike. A variant that does not compile or is wrong is recorded
with its error, not timed. This is a measurement that guides a recipe, not a claim about
the search.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def tma_tiles(a_desc, b_desc, c_ptr, c_desc, M, N, K, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP: tl.constexpr, STORE: tl.constexpr):
    """One program per tile on a 2-D grid; STORE 0: pointer store, 1: descriptor, 2: two halves."""
    if GROUP > 0:
        pid_n, pid_m = tl.swizzle2d(tl.program_id(1), tl.program_id(0), tl.num_programs(1), tl.num_programs(0),
                                    GROUP)
    else:
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc += tl.dot(a, b)
    _store(acc, c_ptr, c_desc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N, STORE)


@triton.jit
def _store(acc, c_ptr, c_desc, M, N, stride_cm, stride_cn, pid_m, pid_n,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STORE: tl.constexpr):
    if STORE == 0:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    elif STORE == 1:
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
    else:
        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
        left, right = tl.split(halves)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(tl.float16))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(tl.float16))


@triton.jit
def tma_persistent(a_desc, b_desc, c_ptr, c_desc, M, N, K, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP: tl.constexpr, STORE: tl.constexpr, FLATTEN: tl.constexpr):
    """As many programs as SMs, each looping over tiles in groups of GROUP tile rows."""
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    per_group = GROUP * n_n
    for tile in tl.range(tl.program_id(0), n_m * n_n, tl.num_programs(0), flatten=FLATTEN):
        first_m = (tile // per_group) * GROUP
        rows = min(n_m - first_m, GROUP)
        pid_m = first_m + (tile % per_group) % rows
        pid_n = (tile % per_group) // rows
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        _store(acc, c_ptr, c_desc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N, STORE)


# name: (persistent, BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, group, store, flatten)
VARIANTS = {
    "s16_best": (False, 128, 256, 64, 8, 3, 0, 0, False),
    "stages4": (False, 128, 256, 64, 8, 4, 0, 0, False),
    "grouped": (False, 128, 256, 64, 8, 3, 8, 0, False),
    "grouped_stages4": (False, 128, 256, 64, 8, 4, 8, 0, False),
    "grouped_tma_store": (False, 128, 256, 64, 8, 3, 8, 1, False),
    "grouped_halves_stages4": (False, 128, 256, 64, 8, 4, 8, 2, False),
    "persistent": (True, 128, 256, 64, 8, 3, 8, 1, False),
    "persistent_halves_stages4": (True, 128, 256, 64, 8, 4, 8, 2, False),
    "persistent_flat": (True, 128, 256, 64, 8, 3, 8, 1, True),
    "persistent_128x128_stages4": (True, 128, 128, 64, 4, 4, 8, 1, False),
}


def launcher(name: str, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    persistent, bm, bn, bk, warps, stages, group, store, flatten = VARIANTS[name]
    M, K = a.shape
    N = b.shape[1]
    a_desc = TensorDescriptor(a, [M, K], [a.stride(0), 1], [bm, bk])
    b_desc = TensorDescriptor(b, [K, N], [b.stride(0), 1], [bk, bn])
    c_desc = TensorDescriptor(c, [M, N], [c.stride(0), 1], [bm, bn // 2 if store == 2 else bn])
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    common = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP=group, STORE=store, num_warps=warps, num_stages=stages)
    if persistent:
        return lambda: tma_persistent[(min(sms, tiles),)](a_desc, b_desc, c, c_desc, M, N, K, c.stride(0), 1,
                                                          FLATTEN=flatten, **common)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    return lambda: tma_tiles[grid](a_desc, b_desc, c, c_desc, M, N, K, c.stride(0), 1, **common)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="4096,8192")
    args = parser.parse_args()
    # TensorDescriptor's host side needs an allocator for descriptors made on the device (none here,
    # but a variant that made one would fail without it).
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d %H:%M:%S"), "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        torch.manual_seed(0)
        a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        b = torch.randn(size, size, device="cuda", dtype=torch.float16)
        want = torch.matmul(a, b)
        runs, errors = {"torch.matmul": lambda: torch.matmul(a, b)}, {}
        for name in VARIANTS:
            c = torch.empty_like(want)
            try:
                fn = launcher(name, a, b, c)
                fn()
                torch.cuda.synchronize()
                err = ((c.float() - want.float()).abs().max() / want.float().abs().max()).item()
                if not err < 1e-2:
                    raise AssertionError(f"wrong: max error {err:.3g} of the largest output")
                runs[name] = fn
            except Exception as exc:  # noqa: BLE001 - recorded, the probe goes on with the others
                errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, fn in runs.items():
                times[name].append(triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))
        flops = 2 * size ** 3
        ref = statistics.median(times["torch.matmul"])
        rows = {name: {"ms": statistics.median(ts), "rounds_ms": ts, "tflops": flops / statistics.median(ts) / 1e9,
                       "of_torch_matmul": ref / statistics.median(ts)} for name, ts in times.items()}
        result["sizes"][str(size)] = {"variants": rows, "errors": errors}
        args.out.write_text(json.dumps(result, indent=1))  # after each size: a machine taken back keeps what ran
        for name, row in sorted(rows.items(), key=lambda kv: kv[1]["ms"]):
            print(f"{size}^3 {name:28s} {row['ms']:.4f} ms {row['tflops']:.0f} TFLOP/s {row['of_torch_matmul']:.3f}",
                  flush=True)
        for name, why in errors.items():
            print(f"{size}^3 {name:28s} {why}", flush=True)


if __name__ == "__main__":
    main()
