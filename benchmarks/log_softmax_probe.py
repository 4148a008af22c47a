"""What a two-pass (online) row log-softmax can reach on vocabulary-sized rows, before a recipe
is built for it: benchmarks/corpus/log_softmax_vocab.py ended at 58% of copy bandwidth at
2048 x 128256 fp16 (session 10), with its 256 KB rows read twice from DRAM.

    python3 benchmarks/log_softmax_probe.py OUT.json

Variants, each timed with triton.testing.do_bench (median) and checked against torch:
- `form`: the running maximum per chunk (`chunk`: a reduction across the program in every
  iteration, as the row_online recipe writes it) or per lane (`lane`: elementwise in the loop,
  one reduction after it);
- `reverse`: the write pass walks the row from its end, where the first pass just read, so
  that more of its reads may still be in L2;
- `grid`: one program per row, or a persistent grid of that many programs striding over the rows
  (fewer rows in flight: more of each row still in L2 when it is read again).
A measurement for choosing a rewrite, not a claim about the search.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@triton.jit
def _lsm(x_ptr, out_ptr, stride, n_rows, n_cols, BLOCK: tl.constexpr, LANE: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * stride
        m_vec = tl.full([BLOCK], float("-inf"), tl.float32)
        s_vec = tl.zeros([BLOCK], tl.float32)
        m_run = tl.max(m_vec, axis=0)
        for off in range(0, n_cols, BLOCK):
            cols = off + offs
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            if LANE:
                m_new = tl.maximum(m_vec, x)
                ref = tl.where(m_new == float("-inf"), 0.0, m_new)
                s_vec = s_vec * tl.exp2((m_vec - ref) * 1.4426950408889634) + tl.exp2((x - ref) * 1.4426950408889634)
                m_vec = m_new
            else:
                m_new = tl.maximum(m_run, tl.max(x, axis=0))
                s_vec = s_vec * tl.exp2((m_run - m_new) * 1.4426950408889634) + tl.exp2((x - m_new) * 1.4426950408889634)
                m_run = m_new
        if LANE:
            m = tl.max(m_vec, axis=0)
            s = tl.sum(tl.where(m_vec == float("-inf"), 0.0, s_vec * tl.exp2((m_vec - m) * 1.4426950408889634)), axis=0)
        else:
            m = m_run
            s = tl.sum(s_vec, axis=0)
        lse = m + tl.log2(s) * 0.6931471805599453
        n_chunks = tl.cdiv(n_cols, BLOCK)
        for i in range(0, n_chunks):
            c = n_chunks - 1 - i if REVERSE else i
            cols = c * BLOCK + offs
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            tl.store(out_ptr + base + cols, (x - lse).to(out_ptr.dtype.element_ty), mask=cols < n_cols)


def launch(x: torch.Tensor, block: int, warps: int, lane: bool, reverse: bool, programs: int | None) -> torch.Tensor:
    out = torch.empty_like(x)
    grid = (min(programs, x.shape[0]) if programs else x.shape[0],)
    _lsm[grid](x, out, x.stride(0), x.shape[0], x.shape[1], BLOCK=block, LANE=lane, REVERSE=reverse,
               num_warps=warps)
    return out


def variants(sms: int) -> list[dict]:
    rows = [dict(block=b, warps=w, lane=ln, reverse=r, programs=None)
            for b, w, ln, r in itertools.product((4096, 8192), (8, 16), (False, True), (False, True))]
    persistent = [dict(block=8192, warps=w, lane=True, reverse=r, programs=k * sms)
                  for w, r, k in itertools.product((8, 16), (False, True), (1, 2, 4))]
    return rows + persistent


def main() -> None:
    out_path = Path(sys.argv[1])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d %H:%M:%S"), "sms": sms, "shapes": {}}
    bench = (lambda f: triton.testing.do_bench(f, warmup=25, rep=100, return_mode="median"))
    for rows, vocab in ((2048, 128256), (8192, 32000)):
        x = torch.randn(rows, vocab, device="cuda", dtype=torch.float32).mul_(4).half()
        want = torch.log_softmax(x.float(), dim=-1)
        nbytes = 2 * x.numel() * x.element_size()
        copy_ms = bench(lambda: x.clone())
        shape = {"bytes": nbytes, "copy_ms": copy_ms, "torch_ms": bench(lambda: torch.log_softmax(x, dim=-1)),
                 "variants": []}
        result["shapes"][f"{rows}x{vocab}"] = shape
        for v in variants(sms):
            try:
                err = (launch(x, **v).float() - want).abs().max().item()
                ms = bench(lambda: launch(x, **v))
                shape["variants"].append({**v, "ms": ms, "fraction_of_copy": copy_ms / ms, "max_abs_err": err})
            except Exception as e:  # one variant that does not compile must not cost the others
                shape["variants"].append({**v, "error": f"{type(e).__name__}: {e}"[:300]})
            out_path.write_text(json.dumps(result, indent=1))
        best = max((v for v in shape["variants"] if "ms" in v), key=lambda v: v["fraction_of_copy"])
        print(f"{rows}x{vocab}: copy {copy_ms:.4f} ms, best {best}", flush=True)


if __name__ == "__main__":
    main()
