"""One reading of kernel source: features and launch sites agree on what a kernel is."""

from __future__ import annotations

import textwrap

import pytest

from tritonforge.analysis.features import features_of_source
from tritonforge.analysis.kernel_source import KernelSource
from tritonforge.analysis.launch_sites import find_launch_sites

ALIASES = """
import torch
import triton as tr
import triton.language as lang


@tr.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: lang.constexpr):
    offs = lang.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    lang.store(y_ptr + offs, lang.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def entry(x):
    y = torch.empty_like(x)
    copy_kernel[(tr.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""

FROM_IMPORTS = """
import torch
from triton import Config, cdiv, jit
from triton import autotune as tune
from triton import heuristics as derive
from triton.language import arange, load, program_id, store
from triton.language import constexpr as C


@tune(configs=[Config({"BLOCK": 128}, num_warps=4), Config({"BLOCK": 256}, num_warps=8)], key=["n"])
@derive(values={"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@jit(do_not_specialize=["n"])
def scaled_kernel(x_ptr, n, BLOCK: C, EVEN: "tl.constexpr"):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    store(x_ptr + offs, load(x_ptr + offs) * 2)


def entry(x):
    scaled_kernel[lambda meta: (cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel())
    return x
"""

STACKED = """
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def fill_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


def entry(x):
    fill_kernel[(triton.cdiv(x.numel(), 512),)](x, x.numel(), BLOCK=512)
    return x
"""

# A host-side decorator that happens to be called `jit`: `launch` is a plain Python helper.
LOOKALIKE = """
import torch
import triton
import triton.language as tl


def jit(fn):
    return fn


@triton.jit
def zero_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)


@jit
def launch(x, block):
    zero_kernel[(triton.cdiv(x.numel(), block),)](x, x.numel(), BLOCK=block)


def entry(x):
    launch(x, 1024)
    return x
"""

FILES = {"aliases": ALIASES, "from_imports": FROM_IMPORTS, "stacked": STACKED, "lookalike": LOOKALIKE}


@pytest.mark.parametrize("name", FILES)
def test_features_and_launch_sites_see_the_same_kernels(name):
    source = textwrap.dedent(FILES[name])
    features = features_of_source(source)
    sites = find_launch_sites(source, "entry")
    assert sites, "the entry's launch is found"
    assert {s.kernel for s in sites} == set(features) == set(KernelSource(source).kernels)
    for site in sites:
        feats = features[site.kernel]
        assert tuple(feats.constexpr_params) == site.facts.constexprs
        assert tuple(sorted(feats.heuristics)) == site.facts.heuristics
        assert (feats.autotune_configs is not None) == site.facts.autotuned


def test_what_each_file_declares():
    aliases = KernelSource(textwrap.dedent(ALIASES)).kernels["copy_kernel"]
    assert aliases.constexprs == ("BLOCK",) and aliases.autotune is None and not aliases.heuristics
    tuned = KernelSource(textwrap.dedent(FROM_IMPORTS)).kernels["scaled_kernel"]
    assert tuned.constexprs == ("BLOCK", "EVEN") and tuned.autotuned and tuned.heuristic_names() == ["EVEN"]
    feats = features_of_source(textwrap.dedent(FROM_IMPORTS))["scaled_kernel"]
    assert feats.jit_kwargs == {"do_not_specialize": "['n']"} and feats.autotune_configs == 2
    assert feats.decorators == ["triton.autotune", "triton.heuristics", "triton.jit"]
    [site] = find_launch_sites(textwrap.dedent(FROM_IMPORTS), "entry")
    assert site.facts.autotune_keys == ("BLOCK",) and site.facts.heuristics == ("EVEN",)


def test_a_decorator_named_jit_that_is_not_tritons_makes_no_kernel():
    source = textwrap.dedent(LOOKALIKE)
    assert set(KernelSource(source).kernels) == {"zero_kernel"}
    [site] = find_launch_sites(source, "entry")
    assert site.via == ("entry", "launch")  # the helper is followed, not mistaken for a kernel
    assert site.args["BLOCK"] == "block"


def test_a_decorator_bound_to_another_name_or_made_with_functools_partial():
    source = textwrap.dedent("""
        import functools
        import triton
        import triton.language as tl

        jit = triton.jit
        _jit = functools.partial(triton.jit, do_not_specialize=["n"])
        not_triton = functools.partial(print, end="")

        @jit
        def a(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

        @_jit
        def b(x_ptr, n, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

        @not_triton
        def c(x_ptr):
            return x_ptr
    """)
    assert set(KernelSource(source).kernels) == {"a", "b"}


def test_runtime_jit_import_and_a_nested_kernel():
    source = textwrap.dedent("""
        from triton.runtime import jit as triton_jit
        import triton.language as tl

        @triton_jit
        def top(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

        def factory():
            @triton_jit
            def inner(x_ptr):
                tl.store(x_ptr, 1.0)
            return inner
    """)
    assert set(features_of_source(source)) == {"top", "inner"}
    with pytest.raises(ValueError):
        find_launch_sites(source, "top")  # a kernel is not an entry
