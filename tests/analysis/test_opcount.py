"""FLOP counts from Triton's interpreter checked against counts done by hand.

Counting needs TRITON_INTERPRET=1 before kernels are decorated, so every count runs in a
subprocess started with that environment; one subprocess counts all the cases and prints
them as JSON, whatever the test session's own environment is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # counts FLOPs by running every example in the interpreter

ROOT = Path(__file__).resolve().parents[2]

_COUNT_SCRIPT = textwrap.dedent('''
    import json
    from pathlib import Path

    import torch
    import triton
    import triton.language as tl
    from triton.runtime import interpreter

    from tritonforge.analysis.opcount import count_flops
    from tritonforge.problem.module import import_file

    EXAMPLES = Path("{examples}")

    def example(name):
        return import_file(EXAMPLES / f"{{name}}.py", "opcount_test")

    @triton.jit
    def special_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, tl.exp(x) * 2.0 + tl.sqrt(x))

    @triton.jit
    def sigmoid_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.sigmoid(tl.load(x_ptr + offs)))

    @triton.jit
    def dot_kernel(a_ptr, c_ptr, PRECISION: tl.constexpr):
        r = tl.arange(0, 16)
        a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
        acc = tl.dot(a, a, input_precision=PRECISION)
        tl.store(c_ptr + r[:, None] * 16 + r[None, :], acc * 0.5)

    @triton.jit
    def triangle_kernel(x_ptr):
        pid = tl.program_id(0)
        acc = tl.zeros((16,), tl.float32)
        for _ in range(0, pid + 1):
            acc += 1.0
        tl.store(x_ptr + pid * 16 + tl.arange(0, 16), acc)

    @triton.autotune(configs=[triton.Config({{"BLOCK": 32}}), triton.Config({{"BLOCK": 128}})], key=["n"])
    @triton.jit
    def tuned_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * x, mask=offs < n)

    counts = {{}}
    add = example("vector_add")
    n = 1 << 20
    counts["add"] = count_flops(add.add, (torch.ones(n), torch.ones(n)))
    softmax = example("softmax")
    counts["softmax"] = count_flops(softmax.softmax, softmax.make_inputs(0, "cpu", rows=64, cols=1024))
    matmul = example("matmul")
    counts["matmul"] = count_flops(matmul.matmul, matmul.make_inputs(0, "cpu", M=4096, N=4096, K=4096))
    silu = example("silu_mul")
    counts["silu_mul"] = count_flops(silu.silu_mul, silu.make_inputs(0, "cpu", rows=8, cols=256))
    rms = example("rmsnorm")
    counts["rmsnorm"] = count_flops(rms.rmsnorm, rms.make_inputs(0, "cpu", rows=4, cols=512))
    x, y = torch.rand(4096) + 1, torch.empty(4096)
    counts["special"] = count_flops(lambda: special_kernel[(32,)](x, y, BLOCK=128), ())
    counts["sigmoid"] = count_flops(lambda: sigmoid_kernel[(32,)](x, y, BLOCK=128), ())
    a, c = torch.randn(16, 16), torch.empty(16, 16)
    counts["dot_tf32"] = count_flops(lambda: dot_kernel[(1,)](a, c, PRECISION="tf32"), ())
    counts["dot_ieee"] = count_flops(lambda: dot_kernel[(1,)](a, c, PRECISION="ieee"), ())
    tri = torch.empty(5 * 16)
    counts["triangle"] = count_flops(lambda: triangle_kernel[(5,)](tri), ())
    t = torch.ones(1000)
    counts["tuned"] = count_flops(lambda: tuned_kernel[lambda m: (triton.cdiv(1000, m["BLOCK"]),)](t, 1000), ())

    # Hooks are gone afterwards: a plain interpreted launch runs every program again.
    xs, ys = torch.randn(1000), torch.randn(1000)
    full = add.add(xs, ys)
    after = {{
        "builder_patched": [k for k in vars(interpreter.interpreter_builder) if k.startswith("create")],
        "full_run_correct": bool(torch.equal(full, xs + ys)),
    }}
    print(json.dumps({{"counts": {{k: v.to_json() for k, v in counts.items()}}, "after": after}}))
''')

_ERROR_SCRIPT = textwrap.dedent('''
    import os
    from pathlib import Path

    import torch

    from tritonforge.analysis.opcount import InterpreterRequired, count_flops
    from tritonforge.problem.module import import_file

    add = import_file(Path("{examples}") / "vector_add.py", "opcount_error_test")
    x = torch.ones(128)
    for label in ("without", "too_late"):
        if label == "too_late":
            os.environ["TRITON_INTERPRET"] = "1"  # after add_kernel was decorated for the GPU
        try:
            count_flops(add.add, (x, x))
            print(label, "no error")
        except InterpreterRequired as e:
            print(label, e)
''')


def _run(script: str, tmp_path: Path, interpret: bool) -> str:
    path = tmp_path / "script.py"
    path.write_text(script.format(examples=ROOT / "examples"))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = _run(_COUNT_SCRIPT, tmp_path_factory.mktemp("opcount"), interpret=True)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def counts(result: dict) -> dict:
    return result["counts"]


def test_vector_add_is_one_flop_per_element(counts):
    n = 1 << 20  # 16384 programs of 64 elements, one fadd each
    c = counts["add"]
    assert (c["total"], c["elementwise"], c["special"], c["reductions"]) == (n, n, 0, 0)
    assert c["dot_flops_by_dtype"] == {}
    launch = c["per_kernel"][0]
    assert launch["name"] == "add_kernel" and launch["grid"] == [n // 64, 1, 1]
    assert launch["sampled_programs"] == [[0, 0, 0], [8192, 0, 0], [16383, 0, 0]]


def test_softmax_is_seven_per_element_plus_two_scalar_ops_per_block(counts):
    rows, cols, block = 64, 1024, 128
    blocks = cols // block  # 8 blocks of 128 per row, three passes over them
    # pass 1: max reduction (1/elem);        plus tl.maximum(row_max, block max): 1 scalar op per block
    # pass 2: x - max, exp, sum (3/elem);    plus denom += block sum: 1 scalar op per block
    # pass 3: x - max, exp, / denom (3/elem)
    per_row = 7 * cols + 2 * blocks
    c = counts["softmax"]
    assert c["total"] == rows * per_row == 459_776
    assert c["special"] == rows * 2 * cols  # two exps per element
    assert c["reductions"] == rows * 2 * cols  # max and sum
    assert c["elementwise"] == rows * (3 * cols + 2 * blocks)  # two subs, one div, two scalar ops per block


def test_matmul_dot_flops_at_gpu_size(counts):
    m = n = k = 4096
    c = counts["matmul"]
    assert c["dot_flops_by_dtype"] == {"fp16": 2 * m * n * k}
    # acc += tl.dot(a, b) is folded into the dot's accumulator (as Triton's compiler does): no adds.
    assert c["elementwise"] == 0 and c["total"] == 2 * m * n * k
    launch = c["per_kernel"][0]
    assert launch["grid"] == [m // 32, n // 32, 1] and len(launch["sampled_programs"]) == 3


def test_silu_mul_two_kernels(counts):
    n = 8 * 256
    # silu: a / (1 + exp(-a)): negation, add, divide (3 elementwise) and exp (1 special); mul: 1
    c = counts["silu_mul"]
    assert [k["name"] for k in c["per_kernel"]] == ["silu_kernel", "mul_kernel"]
    assert [k["total"] for k in c["per_kernel"]] == [4 * n, n]
    assert (c["elementwise"], c["special"], c["total"]) == (4 * n, n, 5 * n)


def test_rmsnorm_counts_scalar_work_once_per_row(counts):
    rows, cols, block = 4, 512, 128
    blocks = cols // block
    # pass 1: x * x and acc += (2 per element); sum(acc): block reductions of the 128-wide acc
    # between the passes: / n_cols, + eps, sqrt (special), 1.0 / (3 scalar elementwise)
    # pass 2: x * rstd * w (2 per element)
    c = counts["rmsnorm"]
    assert c["elementwise"] == rows * (4 * cols + 3)
    assert c["special"] == rows
    assert c["reductions"] == rows * block
    assert c["total"] == rows * (4 * cols + 3 + 1 + block) == 8_720
    assert blocks == 4


def test_transcendentals_are_counted_as_special(counts):
    n = 32 * 128
    c = counts["special"]  # exp(x) * 2.0 + sqrt(x): exp, sqrt special; mul, add elementwise
    assert (c["special"], c["elementwise"], c["total"]) == (2 * n, 2 * n, 4 * n)
    s = counts["sigmoid"]  # tl.sigmoid is 1 / (1 + exp(-x)) in Triton's library: neg, add, div and exp
    assert (s["special"], s["elementwise"]) == (n, 3 * n)


def test_fp32_dot_is_labelled_with_its_precision(counts):
    flops = 2 * 16 * 16 * 16
    assert counts["dot_tf32"]["dot_flops_by_dtype"] == {"fp32/tf32": flops}
    assert counts["dot_ieee"]["dot_flops_by_dtype"] == {"fp32/ieee": flops}
    assert counts["dot_ieee"]["elementwise"] == 16 * 16  # acc * 0.5 is not an add: not folded
    assert counts["dot_ieee"]["total"] == flops + 16 * 16


def test_uneven_work_is_estimated_from_samples(counts):
    # program p adds 1.0 to 16 lanes p + 1 times: 16 * (1 + 2 + 3 + 4 + 5) = 240 in all.
    # Samples 0, 2, 4 average 16 * 3 per program; 5 programs: exact for work linear in p.
    c = counts["triangle"]
    assert c["total"] == 240
    assert c["per_kernel"][0]["sampled_programs"] == [[0, 0, 0], [2, 0, 0], [4, 0, 0]]


def test_autotuned_kernel_counts_with_first_config(counts):
    c = counts["tuned"]["per_kernel"][0]
    assert c["grid"] == [32, 1, 1]  # BLOCK=32, the first config: cdiv(1000, 32) programs
    assert c["elementwise"] == 32 * 32  # masked-off lanes are computed too


def test_hooks_are_undone(result):
    assert result["after"] == {"builder_patched": [], "full_run_correct": True}


def test_refuses_without_interpreter(tmp_path):
    out = _run(_ERROR_SCRIPT, tmp_path, interpret=False).splitlines()
    assert out[0].startswith("without ") and "TRITON_INTERPRET=1" in out[0]
    assert out[1].startswith("too_late kernel add_kernel was decorated before TRITON_INTERPRET=1")
