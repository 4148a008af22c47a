"""capture_launches: what an entry launches, recorded on CPU without running a kernel."""

from __future__ import annotations

import json

import pytest
import torch
import triton

from tritonforge.analysis import launch_capture as lc
from tritonforge.analysis.launch_capture import LaunchRecord, capture_launches
from tritonforge.problem.module import ProblemModule

from .conftest import EXAMPLES


def first_case_args(name: str) -> tuple[ProblemModule, tuple]:
    pm = ProblemModule(EXAMPLES / f"{name}.py")
    return pm, pm.make_args(pm.cases()[0][0], 0, "cpu")


def test_matmul_example_at_its_first_shape():
    pm, args = first_case_args("matmul")
    (rec,) = capture_launches(pm.entry, args)
    assert rec.kernel_name == "matmul_kernel"
    assert rec.grid == (128, 128, 1)  # 4096 / 32 each way
    assert (rec.num_warps, rec.num_stages, rec.num_ctas) == (4, 2, 1)
    assert rec.constexprs == {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}
    a = rec.arg("a_ptr")
    assert (a.kind, a.dtype, a.shape, a.strides) == ("tensor", "float16", (4096, 4096), (4096, 1))
    assert a.triton_type == "*fp16" and a.aligned16 and a.divisible16
    assert (rec.arg("K").value, rec.arg("K").triton_type, rec.arg("K").divisible16) == (4096, "i32", True)
    # The JIT turns an int equal to 1 into a constant: so must the record.
    assert (rec.arg("stride_ak").kind, rec.arg("stride_ak").triton_type) == ("int", "constexpr")
    # Either mode: the session's TRITON_INTERPRET decides what ProblemModule imported.
    assert rec.interpreted == (type(rec.kernel).__name__ == "InterpretedFunction")


def test_softmax_example_at_its_first_shape():
    pm, args = first_case_args("softmax")
    (rec,) = capture_launches(pm.entry, args)
    assert rec.kernel_name == "softmax_kernel"
    assert rec.grid == (16384, 1, 1)
    assert (rec.num_warps, rec.num_stages) == (4, 3)  # Triton's defaults: the entry passes none
    assert rec.constexprs == {"BLOCK": 128}
    assert rec.arg("n_cols").value == 8192
    assert [a.name for a in rec.args] == ["x_ptr", "out_ptr", "n_cols", "stride_x", "stride_out", "BLOCK"]
    launch_line = next(i for i, line in enumerate((EXAMPLES / "softmax.py").read_text().splitlines(), 1)
                       if "softmax_kernel[(n_rows,)](" in line)
    assert rec.line == launch_line  # the file's line that made the launch, the call's column, its function
    assert (rec.col, rec.caller, rec.grid_callable) == (4, "softmax", False)


def test_record_round_trips_through_json():
    pm, args = first_case_args("matmul")
    (rec,) = capture_launches(pm.entry, args)
    data = json.loads(json.dumps(rec.to_json()))
    assert "kernel" not in data
    back = LaunchRecord.from_json(data)
    assert back == rec  # the kernel field takes no part in equality
    assert back.kernel is None and back.arg("a_ptr").shape == (4096, 4096)


def test_nothing_runs_and_triton_is_restored(jit_kernels):
    run_before = triton.runtime.jit.JITFunction.run
    x = torch.ones(4096)
    out = torch.zeros(4096)

    def entry():
        jit_kernels.add_kernel[(4,)](x, x, out, 4096)
        raise ValueError("entry failed after its launch")

    with pytest.raises(ValueError):
        capture_launches(entry, ())
    assert triton.runtime.jit.JITFunction.run is run_before
    assert torch.count_nonzero(out) == 0  # the launch was skipped, not run


def test_grid_lambda_sees_bound_args_and_constexpr_defaults(jit_kernels):
    x = torch.empty(10_000)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    (rec,) = capture_launches(lambda: jit_kernels.add_kernel[grid](x, x, x, x.numel()), ())
    assert rec.grid == (10, 1, 1)  # BLOCK defaults to 1024
    assert seen["BLOCK"] == 1024 and seen["x"] is x
    assert rec.constexprs == {"BLOCK": 1024}


def test_autotuned_kernel_records_every_config(tuned_kernels):
    x = torch.empty(1000)
    launch = lambda: tuned_kernels.add_tuned[lambda m: (triton.cdiv(1000, m["BLOCK"]),)](x, x, x, 1000)
    recs = capture_launches(launch, ())
    assert [r.autotune_config_index for r in recs] == [0, 1]
    assert [r.grid[0] for r in recs] == [8, 2]
    assert [(r.num_warps, r.num_stages) for r in recs] == [(4, 3), (8, 2)]
    assert [r.constexprs["BLOCK"] for r in recs] == [128, 512]
    configs = recs[0].autotune_configs
    assert [c["kwargs"] for c in configs] == [{"BLOCK": 128}, {"BLOCK": 512}]
    json.dumps([r.to_json() for r in recs])


def test_meta_tensors_are_enough(jit_kernels):
    x = torch.empty(1 << 26, device="meta")  # 256 MB that is never allocated
    (rec,) = capture_launches(lambda: jit_kernels.add_kernel[(65536,)](x, x, x, x.numel()), ())
    assert rec.arg("x").device == "meta" and rec.arg("x").triton_type == "*fp32"


def test_interpreter_kernels_capture_and_execute(interp_kernels):
    from triton.runtime.interpreter import InterpretedFunction

    assert isinstance(interp_kernels.add_kernel, InterpretedFunction)
    x, y = torch.randn(3000), torch.randn(3000)
    out = torch.zeros(3000)
    launch = lambda: interp_kernels.add_kernel[lambda m: (triton.cdiv(3000, m["BLOCK"]),)](x, y, out, 3000)
    (skipped,) = capture_launches(launch, ())
    assert skipped.interpreted and skipped.grid == (3, 1, 1)
    assert torch.count_nonzero(out) == 0
    (ran,) = capture_launches(launch, (), execute=True)
    assert ran.to_json() == skipped.to_json()
    torch.testing.assert_close(out, x + y)


def test_specialization_matches_the_jit_binder(jit_kernels):
    """Our record's types and alignment attributes equal what Triton's own binder computes."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    kernel = jit_kernels.add_kernel
    binder = create_function_from_signature(kernel.signature, kernel.params, make_backend(GPUTarget("cuda", 90, 32)))
    base = torch.empty(64)
    for args in [(base, base, base, 1024), (base[1:], base, base[2:], 1000), (base, base, base, 1)]:
        (rec,) = capture_launches(lambda: kernel[(1,)](*args, BLOCK=64), ())
        _, specialization, _ = binder(*args, BLOCK=64)
        want = [(ty, attr if isinstance(attr, str) else None) for ty, attr in specialization[:4]]
        assert [(a.triton_type, a.spec_attr) for a in rec.args[:4]] == want
        assert rec.arg("n").triton_type == ("constexpr" if args[3] == 1 else "i32")


def test_do_not_specialize_is_honoured(jit_kernels):
    x = torch.empty(64)
    (rec,) = capture_launches(lambda: jit_kernels.add_kernel_dns[(1,)](x, x, x, 1, BLOCK=64), ())
    assert (rec.arg("n").triton_type, rec.arg("n").divisible16) == ("i32", None)  # not folded to a constant


@pytest.mark.parametrize("value", [1, 16, 17, 0, -5, 2**31, 2**63 + 1, 1.5, True, None])
def test_fallback_specializer_agrees_with_triton(value):
    native = lc._native_specializer()
    if native is None:
        pytest.skip("this Triton has no native specializer to compare with")
    for specialize in (True, False):
        for align in (True, False):
            assert lc._fallback_specialize(value, False, specialize, align) == native(value, False, specialize, align)


def test_fallback_specializer_agrees_on_tensors():
    native = lc._native_specializer()
    if native is None:
        pytest.skip("this Triton has no native specializer to compare with")
    t = torch.empty(8, dtype=torch.float16)
    for arg in (t, t[1:], torch.empty(4, dtype=torch.bfloat16), torch.empty(4, dtype=torch.bool)):
        assert lc._fallback_specialize(arg, False, True, True) == native(arg, False, True, True)
