"""Rewriting launch values in place, and static pruning of configurations that cannot fit."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import EXAMPLES, ROOT
from tritonforge.analysis.launch_sites import ConfigSpec, SearchSpace, entry_of
from tritonforge.strategies.launch import HardwareLimits, apply_assignment, check_assignment, rewrite

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n"


def load(name: str) -> str:
    return (EXAMPLES / f"{name}.py").read_text()


def space(source: str) -> SearchSpace:
    return SearchSpace.from_source(source, entry_of(source))


def changed_lines(a: str, b: str) -> list[tuple[str, str]]:
    """(old, new) pairs of lines that differ; the rewrite never adds or removes lines."""
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    assert len(la) == len(lb)
    return [(x.strip(), y.strip()) for x, y in zip(la, lb) if x != y]


def entry_signature(source: str) -> str:
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_of(source))
    return ast.dump(fn.args)


# --- rewrite -------------------------------------------------------------------------------


def test_vector_add_rewrites_the_assignment_and_inserts_keywords():
    source = load("vector_add")
    out = rewrite(source, {"add_kernel.BLOCK_SIZE": 1024, "add_kernel.num_warps": 8, "add_kernel.num_stages": 2})
    assert changed_lines(source, out) == [
        ("BLOCK = 64", "BLOCK = 1024"),
        ("add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK)",
         "add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK, num_warps=8, num_stages=2)"),
    ]
    assert entry_signature(out) == entry_signature(source)
    assert space(out).current == {"add_kernel.BLOCK_SIZE": 1024, "add_kernel.num_warps": 8, "add_kernel.num_stages": 2}


def test_current_values_leave_every_example_byte_identical():
    for path in EXAMPLES.glob("*.py"):
        source = path.read_text()
        assert rewrite(source, space(source).current) == source, path.name


def test_every_example_round_trips_with_stable_ids():
    for path in EXAMPLES.glob("*.py"):
        source = path.read_text()
        before = space(source)
        doubled = {t.id: t.current * 2 if t.kind == "constexpr" else t.current for t in before.tunables}
        out = rewrite(source, doubled)
        after = space(out)
        assert after.current == doubled, path.name  # same ids, new values
        assert entry_signature(out) == entry_signature(source)
        assert rewrite(out, before.current) == source  # literal edits undo exactly


def test_matmul_tuple_unpacking_edits_each_literal():
    source = load("matmul")
    out = rewrite(source, {"matmul_kernel.BLOCK_N": 128, "matmul_kernel.BLOCK_K": 64, "matmul_kernel.num_stages": 4})
    assert changed_lines(source, out) == [
        ("BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32", "BLOCK_M, BLOCK_N, BLOCK_K = 32, 128, 64"),
        ("BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=2)",
         "BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=4)"),
    ]


def test_grid_copies_of_the_block_follow_it():
    source = HEADER + textwrap.dedent('''
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 1.0, mask=offs < n)

        def fill(x):
            n = x.numel()
            k[((n + 255) // 256,)](x, n, BLOCK=256)
        ''')
    out = rewrite(source, {"k.BLOCK": 1024}, entry="fill")
    assert "k[((n + 1023) // 1024,)](x, n, BLOCK=1024)" in out


def test_keywords_inserted_into_a_call_without_arguments():
    source = HEADER + textwrap.dedent('''
        @triton.jit
        def k():
            tl.arange(0, 16)

        def go():
            k[(1,)]()
        ''')
    out = rewrite(source, {"k.num_warps": 2, "k.num_stages": 1}, entry="go")
    assert "k[(1,)](num_warps=2, num_stages=1)" in out


AUTOTUNED = HEADER + textwrap.dedent('''
    @triton.autotune(
        configs=[
            triton.Config({'BLOCK': 128}, num_warps=4),
            triton.Config({'BLOCK': 256}, num_warps=8, num_stages=2),
        ],
        key=["n"],
    )
    @triton.jit
    def auto_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    def auto(x):
        n = x.numel()
        out = torch.empty_like(x)
        auto_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out
    ''')


def test_autotune_list_is_replaced_in_the_same_style():
    pinned = rewrite(AUTOTUNED, {"auto_kernel.autotune_configs": [{"BLOCK": 1024, "num_warps": 4, "num_stages": 3}]},
                     entry="auto")
    assert "        triton.Config({'BLOCK': 1024}, num_warps=4, num_stages=3),\n    ],\n    key=" in pinned
    tail = AUTOTUNED[AUTOTUNED.index("    key="):]
    assert pinned.endswith(tail)  # everything after the list is untouched
    again = SearchSpace.from_source(pinned, "auto")
    assert again.current == {"auto_kernel.autotune_configs": (ConfigSpec((("BLOCK", 1024),), 4, 3),)}


def test_widening_keeps_the_configs_it_had_byte_identical():
    tid = "auto_kernel.autotune_configs"
    current = list(SearchSpace.from_source(AUTOTUNED, "auto").current[tid])
    wider = rewrite(AUTOTUNED, {tid: current + [{"BLOCK": 512, "num_warps": 8, "num_stages": 3}]}, entry="auto")
    assert changed_lines(AUTOTUNED, wider.replace(
        "        triton.Config({'BLOCK': 512}, num_warps=8, num_stages=3),\n", "", 1)) == []
    # Configs given as plain dicts (a candidate's JSON params) are matched to the written ones too.
    flat = [c.flat() for c in current]
    assert rewrite(AUTOTUNED, {tid: flat}, entry="auto") == AUTOTUNED


def test_rewrite_refuses_unknown_and_fixed_ids():
    source = load("vector_add")
    with pytest.raises(ValueError, match="unknown tunable"):
        rewrite(source, {"add_kernel.BLOCK": 128})
    with pytest.raises(ValueError, match="needs an integer"):
        rewrite(source, {"add_kernel.BLOCK_SIZE": "128"})
    derived = HEADER + textwrap.dedent('''
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

        def go(x):
            k[(1,)](x, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
        ''')
    with pytest.raises(ValueError, match="not tunable"):
        rewrite(derived, {"k.BLOCK": 128}, entry="go")


CHECK = r'''
import importlib.util, json, sys, torch
ok = {}
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("m" + str(len(ok)), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    tol = getattr(m, "TOLERANCE", {"atol": 1e-2, "rtol": 1e-2})
    good = True
    for shape in m.TEST_SHAPES:
        args = m.make_inputs(0, "cpu", **shape)
        good &= torch.allclose(getattr(m, m.ENTRY)(*args).float(), m.reference(*args).float(), **tol)
    ok[path] = bool(good)
print(json.dumps(ok))
'''


@pytest.mark.slow
def test_rewritten_examples_still_compute_the_right_answer(tmp_path):
    """Grid and kernel stay consistent: run the rewritten files in Triton's interpreter."""
    changes = {
        "vector_add": {"add_kernel.BLOCK_SIZE": 256, "add_kernel.num_warps": 2},
        "silu_mul": {"silu_kernel.BLOCK_SIZE": 64},
        "col_sum": {"col_sum_kernel.BLOCK_M": 32, "col_sum_kernel.BLOCK_N": 64},
        "matmul": {"matmul_kernel.BLOCK_M": 16, "matmul_kernel.BLOCK_N": 64, "matmul_kernel.BLOCK_K": 16},
        "softmax": {"softmax_kernel.BLOCK": 32},
        "rmsnorm": {"rmsnorm_kernel.BLOCK": 64, "rmsnorm_kernel.num_stages": 2},
    }
    paths = []
    for name, assignment in changes.items():
        path = tmp_path / f"{name}.py"
        path.write_text(rewrite(load(name), assignment))
        paths.append(str(path))
    # Control: a kernel block changed without its grid must come out wrong, or this proves nothing.
    broken = tmp_path / "broken.py"
    broken.write_text(load("vector_add").replace("BLOCK_SIZE=BLOCK", "BLOCK_SIZE=32"))
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", CHECK, *paths, str(broken)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {**{p: True for p in paths}, str(broken): False}


# --- pruning -------------------------------------------------------------------------------


def test_oversized_matmul_tiles_are_rejected_for_registers_then_shared_memory():
    mm = space(load("matmul"))
    big = {"matmul_kernel.BLOCK_M": 256, "matmul_kernel.BLOCK_N": 256, "matmul_kernel.BLOCK_K": 128,
           "matmul_kernel.num_stages": 4}
    assert "512 registers/thread" in check_assignment(mm, big)
    # 16 warps bring the accumulator to 128 registers/thread; (256*128 + 128*256) * 2 B * 4 stages won't fit.
    assert "shared memory 524288 B" in check_assignment(mm, {**big, "matmul_kernel.num_warps": 16})
    ok = {"matmul_kernel.BLOCK_M": 128, "matmul_kernel.BLOCK_N": 128, "matmul_kernel.BLOCK_K": 64,
          "matmul_kernel.num_stages": 3}
    assert check_assignment(mm, ok) is None
    # fp32 operands double the footprint: the same tiles with 4 stages no longer fit.
    fp32 = HardwareLimits(dot_elem_bytes=4)
    assert "shared memory" in check_assignment(mm, {**ok, "matmul_kernel.num_stages": 4}, fp32)


def test_dot_minimum_and_legality():
    mm = space(load("matmul"))
    assert "not legal" in check_assignment(mm, {"matmul_kernel.BLOCK_K": 8})
    assert "not legal" in check_assignment(mm, {"matmul_kernel.BLOCK_K": 48})
    strict = HardwareLimits(dot_min=32)
    assert "tl.dot needs BLOCK_K >= 32" in check_assignment(mm, {"matmul_kernel.BLOCK_K": 16}, strict)
    assert "not legal" in check_assignment(mm, {"matmul_kernel.num_warps": 3})


def test_elements_per_thread_and_tile_size_bounds():
    add = space(load("vector_add"))
    assert "512 elements per thread" in check_assignment(add, {"add_kernel.BLOCK_SIZE": 65536})
    assert check_assignment(add, {"add_kernel.BLOCK_SIZE": 65536, "add_kernel.num_warps": 32}) is None
    assert "idle or duplicated" in check_assignment(add, {"add_kernel.BLOCK_SIZE": 128, "add_kernel.num_warps": 16})
    cols = space(load("col_sum"))
    too_big = {"col_sum_kernel.BLOCK_M": 2048, "col_sum_kernel.BLOCK_N": 1024, "col_sum_kernel.num_warps": 32}
    assert "exceeds Triton's 1048576" in check_assignment(cols, too_big)


def test_a_bound_the_current_source_already_exceeds_is_widened_to_it():
    source = rewrite(load("vector_add"), {"add_kernel.BLOCK_SIZE": 16384})  # 128 elements per thread
    add = space(source)
    assert check_assignment(add, {}) is None
    assert check_assignment(add, {"add_kernel.num_stages": 2}) is None
    assert "256 elements per thread" in check_assignment(add, {"add_kernel.BLOCK_SIZE": 32768})


def test_the_feasibility_hook_sees_the_full_assignment_and_can_veto():
    add = space(load("vector_add"))
    seen = []

    def hook(values):
        seen.append(values)
        return "ptxas: too many resources" if values["add_kernel.BLOCK_SIZE"] > 1024 else True

    assert check_assignment(add, {"add_kernel.BLOCK_SIZE": 512}, feasible=hook) is None
    assert check_assignment(add, {"add_kernel.BLOCK_SIZE": 2048}, feasible=hook) == "ptxas: too many resources"
    assert seen[0] == {"add_kernel.BLOCK_SIZE": 512, "add_kernel.num_warps": 4, "add_kernel.num_stages": 3}
    assert check_assignment(add, {}, feasible=lambda v: False) == "rejected by the feasibility hook"
    assert "hook raised KeyError" in check_assignment(add, {}, feasible=lambda v: v["nope"])
    # Static reasons come first: the hook (an offline compile, say) is not asked in vain.
    assert "not legal" in check_assignment(add, {"add_kernel.BLOCK_SIZE": 100}, feasible=lambda v: 1 / 0)


def test_apply_assignment_uses_the_space_source():
    source = load("softmax")
    out = apply_assignment(space(source), {"softmax_kernel.BLOCK": 1024, "softmax_kernel.num_warps": 8})
    assert changed_lines(source, out) == [(
        "softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=128)",
        "softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=1024, num_warps=8)",
    )]


def test_check_names_ids_it_cannot_judge():
    add = space(load("vector_add"))
    assert check_assignment(add, {"add_kernel.BLOCK": 128}) == "add_kernel.BLOCK is not a tunable of this file"


@pytest.mark.gpu
def test_estimates_agree_with_the_compiler():
    """What the static checks accept compiles without spills; what they reject for shared
    memory, Triton refuses; what they reject for registers, spills."""
    import importlib.util

    import torch

    def compiled(example: str, kernel: str, args: tuple, values: dict) -> int | str:
        spec = importlib.util.spec_from_file_location(f"gpu_{example}", EXAMPLES / f"{example}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            k = getattr(module, kernel).warmup(*args, grid=(1,), **values)
            k._init_handles()  # OutOfResources is raised here
            return k.n_spills
        except Exception as e:
            return type(e).__name__

    half = [torch.empty(512, 512, device="cuda", dtype=torch.float16) for _ in range(3)]
    mm = ("matmul", "matmul_kernel", (*half, 512, 512, 512, 512, 1, 512, 1, 512, 1))
    x = torch.empty(1 << 20, device="cuda")
    add = ("vector_add", "add_kernel", (x, x, x, 1 << 20))
    cases = [  # (launch, values, what check_assignment says, what the compiler does)
        (mm, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3), None, 0),
        (mm, dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=4), None, 0),
        (mm, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, num_warps=8, num_stages=4), "shared memory", "OutOfResources"),
        (mm, dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=32, num_warps=4, num_stages=3), "registers", "spills"),
        (add, dict(BLOCK_SIZE=2048, num_warps=4), None, 0),
        (add, dict(BLOCK_SIZE=65536, num_warps=4), "register limit", "spills"),
    ]
    for (example, kernel, args), values, reason, expected in cases:
        verdict = check_assignment(space(load(example)), {f"{kernel}.{k}": v for k, v in values.items()})
        assert (verdict is None) if reason is None else (reason in (verdict or "")), (values, verdict)
        got = compiled(example, kernel, args, values)
        if expected == "spills":
            assert isinstance(got, int) and got > 0, (values, got)
        else:
            assert got == expected, (values, got)
