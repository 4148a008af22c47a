"""The evaluator's defences, one function at a time (the adversarial suite runs them whole)."""

from __future__ import annotations

import pytest
import torch

from tritonforge.worker.compare import compare
from tritonforge.worker.launches import LaunchCounter
from tritonforge.worker.source_scan import introspection
from tritonforge.worker.torch_ops import TorchOps
from tritonforge.problem.spec import Tolerance

LOOSE = Tolerance(atol=1e-2, rtol=1e-2)


def test_a_tolerance_that_accepts_zeros_falls_back_to_the_norm():
    want = torch.randn(4096) * 1e-3  # every value is inside atol
    assert not compare(torch.zeros_like(want), want, LOOSE).ok
    assert not compare(torch.full_like(want, 1e-3), want, LOOSE).ok
    assert compare(want * (1 + 1e-3 * torch.randn_like(want)), want, LOOSE).ok
    assert compare(torch.zeros(8), torch.zeros(8), LOOSE).ok  # zeros that are the answer


def test_introspection_is_refused_by_name():
    assert introspection("import inspect\n") == "imports inspect"
    assert introspection("import sys\nf = sys._getframe(1)\n") == "uses ._getframe"
    assert introspection("from tritonforge.evaluate import timing\n") == "imports from tritonforge.evaluate"
    assert introspection("x = eval('1')\n") == "calls eval()"
    assert introspection("import torch\nimport triton\ny = torch.empty(3).view(3)\n") is None


def test_reading_a_module_global_by_a_written_name_is_not_introspection():
    # `globals().get("ROW_BLOCK", 128)` is how scripts let an optional module constant win (probe
    # round 20): every candidate of such a file was refused. Any other use stays refused.
    assert introspection("b = globals().get('ROW_BLOCK', 128)\nw = globals()['ROW_WARPS']\n") is None
    assert introspection("g = globals()\n") == "calls globals()"
    assert introspection("b = globals()['__builtins__']\n") == "calls globals()"
    assert introspection("name = 'x'\nb = globals().get(name)\n") == "calls globals()"
    assert introspection("globals()['BLOCK'] = 1\n") == "calls globals()"


def test_torch_ops_separates_glue_from_compute():
    ops = TorchOps(LaunchCounter(), None)
    x = torch.randn(16)
    with ops:
        y = torch.empty_like(x)
        y.copy_(x.view(4, 4).t().reshape(16))
    assert ops.compute() == []
    with ops:
        torch.add(x, x)
        x.float().sum()
    assert ops.compute() == ["add", "sum"]
    assert ops.compute(allowed={"sum"}) == ["add"]


def test_replacing_a_torch_operator_for_the_whole_process_is_refused():
    assert introspection("import torch\nlib = torch.library.Library('aten', 'IMPL')\n") == "uses torch.library.Library"
    assert introspection("from torch.utils._python_dispatch import TorchDispatchMode\n")
    assert introspection("import torch._C\n") == "imports torch._C"


def test_defining_an_operator_of_its_own_is_not_overriding_one():
    defines = ("import torch\nfrom torch.library import triton_op, wrap_triton\n"
               "@torch.library.custom_op('mine::f', mutates_args=())\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
               "    return x.clone()\n")
    assert introspection(defines) is None
    assert introspection("from torch.library import triton_op, Library\n") == "imports from torch.library"
    assert introspection("import torch\ntorch.library.impl('aten::add', 'CPU')\n") == "uses torch.library.impl"
    calls_own = defines + "def g(x):\n    return torch.ops.mine.f.default(x)\n"
    assert introspection(calls_own) is None  # its own operator, by name
    assert introspection(defines + "y = torch.ops.aten.add\n") == "uses torch.ops.aten.add"
    assert introspection(defines.replace("mine::f", "aten::f")) == "defines aten::f in torch's own namespace"
    fake = "import torch\ntorch.library.register_fake('aten::add.Tensor')(lambda a, b, alpha=1: a)\n"
    assert introspection(fake) == "registers a fake kernel for aten::add.Tensor, an operator it does not define"


def test_a_library_of_its_own_namespace_may_define_and_implement_its_operators():
    # vLLM's direct_register_custom_op: Library("ns", "FRAGMENT"), then define and impl on it.
    # PyTorch refuses such a library's impl of another namespace's operator; an "IMPL"
    # library, or one whose namespace is not written, could replace aten's.
    own = ("import torch\nfrom torch.library import Library\nlib = Library('mine', 'FRAGMENT')\n"
           "lib.define('f(Tensor x) -> Tensor')\nlib.impl('f', lambda x: x, 'CPU')\ny = torch.ops.mine.f\n")
    assert introspection(own) is None
    assert introspection(own.replace("'FRAGMENT'", "'IMPL'")) == "imports from torch.library"
    assert introspection(own.replace("'mine'", "'aten'")) == "imports from torch.library"
    assert introspection(own + "z = torch.ops.aten.add\n") == "uses torch.ops.aten.add"
    assert introspection(own + "other = Library(name, 'FRAGMENT')\n") == "imports from torch.library"


def test_what_a_python_operator_computes_is_seen_inside_it():
    @torch.library.custom_op("tf_test::adds_with_torch", mutates_args=())
    def adds_with_torch(x: torch.Tensor) -> torch.Tensor:
        return torch.add(x, 1)

    ops = TorchOps(LaunchCounter(), None)
    with ops:
        y = adds_with_torch(torch.zeros(3))
    assert torch.equal(y, torch.ones(3)) and ops.compute() == ["add"]  # not the operator's own name


def test_a_swapped_tensor_method_is_seen():
    from tritonforge.worker.integrity import Integrity

    watch = Integrity()
    assert "__add__" not in vars(torch.Tensor)  # inherited from the C base class
    try:
        torch.Tensor.__add__ = lambda a, b: a
        assert "torch.Tensor.__add__" in watch.violations()
    finally:
        del torch.Tensor.__add__
    assert watch.violations() == []


@pytest.mark.slow
def test_candidates_see_no_credentials_and_run_in_a_temporary_directory(monkeypatch):
    from tests.conftest import EXAMPLES, FIXTURES
    from tritonforge.evaluate.evaluator import EvalOptions, Evaluator, load_problem
    from tritonforge.worker.client import WorkerClient
    from tritonforge.domain.verdict import Status

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "TF_TEST_PASSWORD"):
        monkeypatch.setenv(name, "s3cret")
    with WorkerClient("cpu") as worker:
        evaluator = Evaluator(load_problem(EXAMPLES / "vector_add.py", worker), worker,
                              EvalOptions(device="cpu", measure=False))
        verdict = evaluator.evaluate(FIXTURES / "candidates" / "add_reads_secrets.py")
    assert verdict.status is Status.CORRECT, verdict.message
