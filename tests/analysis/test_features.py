"""Static kernel features read from source: the examples, and small kernels written here."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tritonforge.analysis.features import KernelFeatures, dot_dtypes_from_ttir, features_of_file, features_of_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _features(source: str) -> dict[str, KernelFeatures]:
    return features_of_source(textwrap.dedent(source))


def test_every_example_kernel_is_found_and_serialises():
    names = {f.stem: sorted(features_of_file(f)) for f in EXAMPLES.glob("*.py")}
    assert names["vector_add"] == ["add_kernel"]
    assert names["silu_mul"] == ["mul_kernel", "silu_kernel"]
    assert names["matmul"] == ["matmul_kernel"]
    for f in EXAMPLES.glob("*.py"):
        for feats in features_of_file(f).values():
            json.dumps(feats.to_json())  # plain JSON types only


def test_vector_add_example():
    k = features_of_file(EXAMPLES / "vector_add.py")["add_kernel"]
    assert [(op.masked, op.has_other, op.pointer) for op in k.loads] == [(True, False, "raw")] * 2
    assert len(k.stores) == 1 and k.stores[0].masked
    assert k.program_id_axes == [0]
    assert k.constexpr_params == ["BLOCK_SIZE"]
    assert k.loops == [] and k.dots == [] and k.reductions == []
    assert k.pointer_style == "raw"
    assert k.to_json()["summary"]["masked_loads"] == 2


def test_softmax_example_has_three_runtime_loops_and_two_reductions():
    k = features_of_file(EXAMPLES / "softmax.py")["softmax_kernel"]
    assert [(loop.kind, loop.static) for loop in k.loops] == [("range", False)] * 3
    assert all(op.masked and op.has_other for op in k.loads) and len(k.loads) == 3
    assert [(r.op, r.axis) for r in k.reductions] == [("max", "0"), ("sum", "0")]
    assert k.notable_ops["exp"] == 2 and k.notable_ops["maximum"] == 1


def test_matmul_example():
    k = features_of_file(EXAMPLES / "matmul.py")["matmul_kernel"]
    assert len(k.dots) == 1
    dot = k.dots[0]
    assert (dot.has_acc, dot.input_precision, dot.out_dtype) == (False, None, None)
    assert k.program_id_axes == [0, 1]
    # range(0, tl.cdiv(K, BLOCK_K)): K is a runtime argument.
    assert [(loop.kind, loop.static) for loop in k.loops] == [("range", False)]
    assert all(op.has_other for op in k.loads)
    assert k.notable_ops.get("cast") == 1  # acc.to(tl.float16)


def test_masked_and_unmasked_loads_are_told_apart():
    k = _features("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, q, n, B: tl.constexpr):
            offs = tl.arange(0, B)
            a = tl.load(p + offs)
            b = tl.load(p + offs, mask=offs < n)
            c = tl.load(p + offs, offs < n, 0.0)
            d = tl.load(p + offs, mask=None, cache_modifier=".cg", eviction_policy="evict_first", volatile=True)
            tl.store(q + offs, a + b + c + d)
            tl.store(q + offs, a, mask=offs < n, cache_modifier=".cs")
    """)["k"]
    assert [(op.line, op.masked, op.has_other) for op in k.loads] == [
        (8, False, False), (9, True, False), (10, True, True), (11, False, False)]
    assert (k.masked_loads, k.unmasked_loads) == (2, 2)
    hinted = k.loads[3]
    assert (hinted.cache_modifier, hinted.eviction_policy, hinted.volatile) == (".cg", "evict_first", "True")
    assert [(op.masked, op.cache_modifier) for op in k.stores] == [(False, None), (True, ".cs")]


def test_block_pointers():
    k = _features("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(a, out, M, N, s, BM: tl.constexpr, BN: tl.constexpr):
            src = tl.make_block_ptr(a, (M, N), (s, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for _ in tl.range(0, N, BN, num_stages=3, loop_unroll_factor=2):
                acc += tl.load(src, boundary_check=(0, 1), padding_option="zero")
                src = tl.advance(src, (0, BN))
            dst = tl.make_block_ptr(out, (M, N), (s, 1), (0, 0), (BM, BN), (1, 0))
            tl.store(dst, acc)
            tl.store(tl.advance(dst, (BM, 0)), acc, boundary_check=(0,))
    """)["k"]
    assert k.pointer_style == "block_ptr"
    load = k.loads[0]
    assert (load.pointer, load.masked, load.boundary_check) == ("block_ptr", True, "(0, 1)")
    assert load.padding_option == "zero"
    assert [(op.pointer, op.masked) for op in k.stores] == [("block_ptr", False), ("block_ptr", True)]
    loop = k.loops[0]
    assert (loop.kind, loop.static, loop.num_stages, loop.loop_unroll_factor) == ("tl.range", False, "3", "2")


def test_tensor_descriptors_and_notable_ops():
    k = _features("""
        import triton.language as tl
        from triton import jit

        @jit
        def k(a_desc, b_ptr, M, BM: tl.constexpr):
            d = tl.make_tensor_descriptor(b_ptr, shape=[M, 64], strides=[64, 1], block_shape=[BM, 64])
            x = a_desc.load([0, 0])
            d.store([0, 0], tl.where(x > 0, tl.exp(x), x))
            tl.debug_barrier()
            tl.device_assert(M > 0)
            tl.atomic_add(b_ptr, 1.0, mask=M > 0, sem="relaxed")
            tl.atomic_cas(b_ptr, 0.0, 1.0)
    """)["k"]
    assert k.pointer_style == "tensor_descriptor"
    assert [op.pointer for op in k.loads + k.stores] == ["tensor_descriptor"] * 2
    assert {"where", "exp", "debug_barrier", "device_assert"} <= set(k.notable_ops)
    assert [(a.op, a.masked, a.sem) for a in k.atomics] == [("atomic_add", True, "relaxed"),
                                                           ("atomic_cas", False, None)]


def test_autotuned_kernel_and_loop_bounds():
    feats = _features("""
        import triton
        import triton.language as tl

        UNROLL = 4

        @triton.autotune(configs=[triton.Config({"BM": 64}), triton.Config({"BM": 128})], key=["M", "N"])
        @triton.heuristics(values={"EVEN": lambda args: args["M"] % 64 == 0})
        @triton.jit(do_not_specialize=["M"])
        def tuned(x, M, N, BM: tl.constexpr, EVEN: tl.constexpr):
            HALF = BM // 2
            acc = tl.zeros((BM,), dtype=tl.float32)
            for i in tl.static_range(UNROLL):
                acc += i
            for j in range(0, 8, 2):
                acc += j
            for j in range(0, HALF):
                acc += j
            for j in range(0, M, BM):
                acc += j
            n = 0
            while n < N:
                n += 1
            tl.store(x + tl.arange(0, BM) + tl.num_programs(0), acc.sum(axis=0) + tl.max(acc, 0))

        def not_a_kernel(x):
            return x
    """)
    assert list(feats) == ["tuned"]
    k = feats["tuned"]
    assert k.decorators == ["triton.autotune", "triton.heuristics", "triton.jit"]
    assert (k.autotune_configs, k.autotune_key, k.heuristics) == (2, ["M", "N"], ["EVEN"])
    assert k.jit_kwargs == {"do_not_specialize": "['M']"}
    assert k.constexpr_params == ["BM", "EVEN"]
    assert [(loop.kind, loop.static, loop.trip_count) for loop in k.loops] == [
        ("static_range", True, 4),  # a module constant
        ("range", True, 4),  # literals: range(0, 8, 2)
        ("range", True, None),  # HALF = BM // 2: constexpr, value unknown here
        ("range", False, None),  # M is a runtime argument
        ("while", False, None),
    ]
    assert k.has_runtime_loop and k.uses_num_programs and k.num_programs_axes == [0]
    assert [(r.op, r.method_form) for r in k.reductions] == [("sum", True), ("max", False)]


def test_jitted_helpers_are_followed():
    feats = _features("""
        import triton
        import triton.language as tl

        @triton.jit
        def _mul(a, b):
            return a * b

        @triton.jit
        def row_dot(p, offs, n):
            x = tl.load(p + offs, mask=offs < n, other=0.0)
            return tl.reduce(x * x, 0, _mul)

        @triton.jit
        def kernel(p, out, n, B: tl.constexpr):
            pid = tl.program_id(0)
            s = row_dot(p + pid * n, tl.arange(0, B), n)
            tl.store(out + pid, s)
    """)
    k = feats["kernel"]
    assert k.callees == ["row_dot", "_mul"]  # _mul is passed as tl.reduce's combine function
    assert [(op.function, op.masked) for op in k.loads] == [("row_dot", True)]
    assert [r.op for r in k.reductions] == ["reduce"]
    assert feats["row_dot"].called_by == ["kernel"] and feats["_mul"].called_by == ["row_dot"]
    assert k.called_by == []
    assert feats["row_dot"].program_id_axes == [] and k.program_id_axes == [0]


# Lines of real Triton 3.6 output (matmul_kernel, fp16, 64x64x32 tiles, compiled offline for sm_90).
_TTIR = """\
    %acc_53 = tt.dot %a_45, %b_52, %acc_37, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32> loc(#loc98)
    %c = tt.dot %x, %y, %z, inputPrecision = tf32 : tensor<128x64xf8E4M3FN> * tensor<64x128xf8E4M3FN> -> tensor<128x128xf32> loc(#loc3)
    %d = tt.dot_scaled %x scale %xs, %y scale %ys, %z lhs = e2m1 rhs = e2m1 {fastMath = false} : tensor<128x32xi8>, tensor<128x2xi8> * tensor<64x128xi8>, tensor<128x2xi8> -> tensor<128x128xf32>
"""
_TTGIR = """\
    %acc_66 = ttng.warp_group_dot %a_59, %b_65, %arg13 {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<64x32xf16, #shared, #smem> * !ttg.memdesc<32x64xf16, #shared1, #smem> -> tensor<64x64xf32, #mma> loc(#loc98)
    %acc_67:3 = ttng.warp_group_dot_wait %acc_66, %a_59, %b_65 {pendings = 0 : i32} : tensor<64x64xf32, #mma>, !ttg.memdesc<64x32xf16, #shared, #smem>, !ttg.memdesc<32x64xf16, #shared1, #smem> loc(#loc98)
"""


def test_dot_dtypes_from_ttir_literal():
    assert dot_dtypes_from_ttir(_TTIR) == [("fp16", "fp16", "fp32"), ("fp8e4nv", "fp8e4nv", "fp32")]
    assert dot_dtypes_from_ttir(_TTGIR) == [("fp16", "fp16", "fp32")]
    assert dot_dtypes_from_ttir("tt.return loc(#loc)") == []


def test_dot_dtypes_from_offline_sm90_compile():
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    from tritonforge.problem.module import import_file

    kernel = import_file(EXAMPLES / "matmul.py", "features_test").matmul_kernel
    if not isinstance(kernel, JITFunction):
        pytest.skip("TRITON_INTERPRET is set: kernels are not compilable here")
    ints = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]
    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp16", **{n: "i32" for n in ints},
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    src = ASTSource(kernel, signature=signature, constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    assert dot_dtypes_from_ttir(compiled.asm["ttir"]) == [("fp32", "fp32", "fp32")]
