"""compile_offline / facts_from_compiled: sm_90 facts compiled here, with no GPU.

Kernels come from the `jit_kernels` / `jit_example` fixtures, which import them without
TRITON_INTERPRET, so these tests pass whether or not the session sets it. Meta tensors
stand in for GPU-sized inputs: nothing is allocated or launched.
"""

from __future__ import annotations

import json

import pytest
import torch
import triton

from tritonforge.analysis.compiled import (CompileFailure, compile_offline, facts_from_compiled,
                                          summarize_ptx, summarize_sass)
from tritonforge.analysis.launch_capture import LaunchRecord, capture_launches


def one_launch(launch) -> LaunchRecord:
    (rec,) = capture_launches(launch, ())
    return rec


def meta(*shape, dtype=torch.float32) -> torch.Tensor:
    return torch.empty(*shape, device="meta", dtype=dtype)


def test_example_matmul_big_tiles_use_wgmma(jit_example):
    mod = jit_example("matmul")
    a = meta(4096, 4096, dtype=torch.float16)
    rec = one_launch(lambda: mod.matmul_kernel[(32, 32)](
        a, a, a, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1,
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3))
    facts = compile_offline(rec)
    assert (facts.target, facts.num_warps, facts.num_stages) == ("sm_90a", 8, 3)
    assert facts.ptx.tensor_core.get("wgmma", 0) > 0
    assert facts.sass.tensor_core.get("HGMMA", 0) > 0
    assert facts.shared_bytes == 3 * (128 * 64 + 64 * 128) * 2  # 3 stages of fp16 A and B tiles
    assert facts.sass.async_copies.get(128, 0) > 0  # tiles stream in with 16-byte cp.async
    assert 0 < facts.registers <= 255 and not facts.spills
    json.dumps(facts.to_json())


def test_example_matmul_own_config_uses_tensor_cores(jit_example):
    mod = jit_example("matmul")
    a, b = torch.randn(4096, 4096).half(), torch.randn(4096, 4096).half()
    facts = compile_offline(one_launch(lambda: mod.matmul(a, b)))  # its 32x32x32, 4 warps, 2 stages
    assert (facts.num_warps, facts.num_stages) == (4, 2)
    assert facts.ptx.tensor_core.get("mma", 0) + facts.ptx.tensor_core.get("wgmma", 0) > 0
    assert facts.sass.tensor_core_total > 0


def test_oversized_block_spills(jit_kernels):
    x = meta(1 << 24)
    rec = one_launch(lambda: jit_kernels.reverse_product[(2048,)](x, x, x.numel(), BLOCK=8192, num_warps=1))
    facts = compile_offline(rec)
    assert facts.spills and facts.spill_store_bytes > 0 and facts.spill_load_bytes > 0
    assert facts.stack_bytes > 0
    assert facts.sass.local_stores > 0 and facts.sass.local_loads > 0
    assert facts.ptx.local_stores == 0  # the PTX asked for no local memory: ptxas spilled


def test_aligned_fp32_add_loads_128_bits(jit_kernels):
    x = meta(1 << 26)
    facts = compile_offline(one_launch(lambda: jit_kernels.add_kernel[(65536,)](x, x, x, x.numel(), BLOCK=1024)))
    assert set(facts.ptx.global_loads) == {128} and set(facts.sass.global_loads) == {128}
    assert set(facts.sass.global_stores) == {128}


def test_misaligned_pointer_loses_vectorization(jit_kernels):
    """The alignment attribute is what a real launch would get: an offset pointer is not 16-aligned."""
    base = torch.empty(4097)
    x = base[1:]
    rec = one_launch(lambda: jit_kernels.add_kernel[(4,)](x, x, x, 4096, BLOCK=1024))
    assert rec.arg("x").divisible16 is False
    facts = compile_offline(rec)
    assert set(facts.ptx.global_loads) == {32}


@pytest.mark.skipif(not triton.__version__.startswith("3.6."), reason="the H200 numbers are Triton 3.6.0's")
def test_matches_the_h200(jit_kernels):
    """Real values from the H200 (/work/shared/ncu-captures/timings.txt and matmul_tc.raw.csv):
    matmul_tc 128x128x64, 8 warps, 3 stages: 110 registers, 98304 B shared; mem_peak: 26 registers."""
    a = meta(4096, 4096, dtype=torch.float16)
    tc = compile_offline(one_launch(lambda: jit_kernels.matmul_tc[(32, 32)](
        a, a, a, 4096, 4096, 4096, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)))
    assert (tc.registers, tc.shared_bytes, tc.stack_bytes) == (110, 98304, 0)
    x = meta(1 << 26)
    peak = compile_offline(one_launch(lambda: jit_kernels.mem_peak[(65536,)](x, x, x, x.numel(), BLOCK=1024)))
    assert (peak.registers, peak.shared_bytes) == (26, 0)


def test_too_much_shared_memory_is_out_of_resources(jit_kernels):
    a = meta(4096, 4096, dtype=torch.float16)
    rec = one_launch(lambda: jit_kernels.matmul_tc[(16, 16)](
        a, a, a, 4096, 4096, 4096, BM=256, BN=256, BK=64, num_warps=8, num_stages=4))
    with pytest.raises(CompileFailure) as info:
        compile_offline(rec)
    assert info.value.kind == "out_of_resources"
    assert info.value.facts.shared_bytes > 232448


def test_compile_error_is_reported(jit_kernels):
    x = meta(64)
    with pytest.raises(CompileFailure) as info:
        compile_offline(one_launch(lambda: jit_kernels.never_compiles[(1,)](x, BLOCK=64)))
    assert info.value.kind == "compile_error"
    assert "BLOCK must be negative" in info.value.message


def test_interpreted_or_detached_records_are_unsupported(interp_kernels):
    x = torch.empty(64)
    rec = one_launch(lambda: interp_kernels.add_kernel[(1,)](x, x, x, 64, BLOCK=64))
    with pytest.raises(CompileFailure, match="TRITON_INTERPRET") as info:
        compile_offline(rec)
    assert info.value.kind == "unsupported"
    with pytest.raises(CompileFailure):
        compile_offline(LaunchRecord.from_json(rec.to_json()))


def test_record_from_json_compiles_with_its_kernel(jit_kernels):
    x = meta(1 << 20)
    rec = one_launch(lambda: jit_kernels.add_kernel[(1024,)](x, x, x, x.numel()))
    again = LaunchRecord.from_json(json.loads(json.dumps(rec.to_json())), kernel=jit_kernels.add_kernel)
    assert compile_offline(again).ptx.total == compile_offline(rec).ptx.total


PTX = """
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	ld.global.b16 %rs1, [ %rd2 + 0 ];
	st.global.v2.b32 [ %rd5 + 0 ], { %r17, %r18 };
	ld.param.b64 	%rd7, [k_param_0];
	cp.async.cg.shared.global [ %r25 + 0 ], [ %rd17 + 0 ], 0x10, %r26;
	cp.async.commit_group;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd1, %rd2, 1, 1, 1, 0, 1;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f1};
	bar.sync 	0;
	bar.warp.sync 	-1;
	st.local.b32 [%rd9], %r1;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
	.loc	1 10 25                         // k.py:10:25
"""

SASS = """
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;          /* 0x0000000402047981 */
        /*0010*/              @!P0 LDG.E R6, desc[UR4][R2.64] ;              /* 0x0000000402067981 */
        /*0020*/                   STG.E.64 desc[UR4][R2.64], R4 ;           /* 0x0000000402007986 */
        /*0030*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;  /* 0x00000000041879f0 */
        /*0040*/                   STL.64 [R1], R4 ;                         /* 0x0000000401007387 */
        /*0050*/                   LDL R4, [R1+0x8] ;                        /* 0x0000080001047983 */
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;             /* 0x0000000000007b1d */
        /*0070*/                   LDGSTS.E.BYPASS.128 [R5], desc[UR4][R2.64] ; /* 0x0000000002057fae */
        /*0080*/                   EXIT ;                                    /* 0x000000000000794d */
"""


def test_summarize_ptx():
    s = summarize_ptx(PTX)
    assert s.total == 13
    assert s.global_loads == {128: 1, 16: 1} and s.global_stores == {64: 1}
    assert s.tensor_core == {"wgmma": 1, "mma": 1}
    assert (s.barriers, s.local_stores, s.local_store_bytes, s.shared_loads) == (1, 1, 4, 1)
    assert s.async_copies == {128: 1}
    assert s.widest_global_load == 128


def test_summarize_sass():
    s = summarize_sass(SASS)
    assert s.total == 9
    assert s.global_loads == {128: 1, 32: 1} and s.global_stores == {64: 1}
    assert s.tensor_core == {"HGMMA": 1}
    assert (s.local_stores, s.local_store_bytes, s.local_loads, s.local_load_bytes) == (1, 8, 1, 4)
    assert s.barriers == 1 and s.async_copies == {128: 1}


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def gpu_launches(mod):
    x = torch.randn(1 << 20, device="cuda")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    return {
        "add": lambda: mod.add_kernel[(1024,)](x, x, x, x.numel()),
        "add_misaligned": lambda: mod.add_kernel[(1023,)](x[1:], x, x, x.numel() - 1),
        "matmul_tc": lambda: mod.matmul_tc[(32, 32)](a, a, a, 4096, 4096, 4096, BM=128, BN=128, BK=64,
                                                      num_warps=8, num_stages=3),
        "spill": lambda: mod.reverse_product[(128,)](x, x, x.numel(), BLOCK=8192, num_warps=1),
    }


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", ["add", "add_misaligned", "matmul_tc", "spill"])
def test_runtime_facts_equal_offline_facts(jit_kernels, name):
    launch = gpu_launches(jit_kernels)[name]
    kernels = []
    (rec,) = capture_launches(lambda: kernels.append(launch()), (), execute=True)
    torch.cuda.synchronize()
    runtime = facts_from_compiled(kernels[0])
    offline = compile_offline(rec)
    assert runtime.source == "runtime" and offline.source == "offline"
    assert (runtime.registers, runtime.shared_bytes, runtime.stack_bytes) == (
        offline.registers, offline.shared_bytes, offline.stack_bytes)
    assert runtime.ptx == offline.ptx and runtime.sass == offline.sass
    assert kernels[0].n_spills * 4 == offline.stack_bytes


@pytest.mark.gpu
@needs_gpu
def test_autotuner_on_gpu_records_the_chosen_launch(tuned_kernels):
    x = torch.randn(1 << 20, device="cuda")
    tuner = tuned_kernels.add_tuned
    recs = capture_launches(lambda: tuner[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, x, x, x.numel()),
                            (), execute=True)
    assert len(recs) == 1  # the timing runs are not the entry's launches
    assert recs[0].autotune_config_index == tuner.configs.index(tuner.best_config)
    assert recs[0].constexprs["BLOCK"] == tuner.best_config.kwargs["BLOCK"]


def test_stage_moves_wait_for_a_kernel_whose_compiled_code_pipelines_a_load(jit_example):
    # Compiled for sm_90, rmsnorm's loops of plain loads have no asynchronous copy at 3 stages
    # (nor, checked by hand, any PTX difference from 1 to 4 stages): the launch search leaves
    # num_stages alone. The matmul's tl.dot operands stream in with cp.async: it moves them.
    from tests.strategies.test_launch_search import load as example_source
    from tests.strategies.test_launch_search import state_for
    from tritonforge.strategies.launch import LaunchParamStrategy

    x, w = torch.randn(8, 256).half(), torch.randn(256).half()
    rms = compile_offline(one_launch(lambda: jit_example("rmsnorm").rmsnorm(x, w, 1e-6)))
    assert rms.num_stages == 3 and not rms.ptx.async_copies and not rms.ptx.bulk_copies
    state = state_for(example_source("rmsnorm"))
    state.launch_facts = [rms.to_json()]
    strategy = LaunchParamStrategy()
    got = strategy.propose(state, 50)
    assert got and all(c.params["rmsnorm_kernel.num_stages"] == 3 for c in got)
    assert any(m.status == "pruned" and "no asynchronous copy" in m.reason for m in strategy.last_moves)

    a = torch.randn(64, 64).half()
    mm = compile_offline(one_launch(lambda: jit_example("matmul").matmul(a, a)))
    assert mm.ptx.async_copies or mm.ptx.bulk_copies
    state = state_for(example_source("matmul"))
    state.launch_facts = [mm.to_json()]
    assert any(c.params["matmul_kernel.num_stages"] != mm.num_stages for c in LaunchParamStrategy().propose(state, 50))
