"""Launch-site discovery: the six examples and launch code written the other usual ways."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import EXAMPLES, FIXTURES
from tritonforge.analysis.kernel_source import KernelSource
from tritonforge.strategies.launch import rewrite
from tritonforge.analysis.launch_sites import (
    ConfigSpec,
    SearchSpace,
    Span,
    entry_of,
    find_launch_sites,
)


def example(name: str) -> tuple[str, SearchSpace]:
    source = (EXAMPLES / f"{name}.py").read_text()
    return source, SearchSpace.from_source(source, entry_of(source))


def text_at(source: str, span: Span) -> str:
    """The source text a span covers (single-line spans, as all literals here are)."""
    assert span.line == span.end_line
    line = source.splitlines()[span.line - 1].encode()
    return line[span.col:span.end_col].decode()


def line_of(source: str, span: Span) -> str:
    return source.splitlines()[span.line - 1].strip()


def space_of(code: str, entry: str) -> tuple[str, SearchSpace]:
    source = HEADER + textwrap.dedent(code)
    return source, SearchSpace.from_source(source, entry)


HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n"

ELEMENTWISE = '''
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)
'''


# --- the six examples ----------------------------------------------------------------------


def test_vector_add_shared_variable_is_one_tunable_at_its_assignment():
    source, space = example("vector_add")
    [site] = space.sites
    assert (site.kernel, site.function, site.grid, site.grid_kind) == ("add_kernel", "add", "grid", "tuple")
    assert site.grid_resolved == "(triton.cdiv(n_elements, BLOCK),)"
    assert space.current == {"add_kernel.BLOCK_SIZE": 64, "add_kernel.num_warps": 4, "add_kernel.num_stages": 3}
    block = space.get("add_kernel.BLOCK_SIZE")
    [loc] = block.locations
    assert text_at(source, loc) == "64" and line_of(source, loc) == "BLOCK = 64"
    assert "arange" in block.roles and 16 in block.legal and 65536 in block.legal and 131072 not in block.legal
    # Left out at the launch: Triton's defaults, tunable by inserting the keyword.
    warps = space.get("add_kernel.num_warps")
    assert warps.locations[0].insert == "num_warps" and warps.legal == (1, 2, 4, 8, 16, 32)
    assert space.get("add_kernel.num_stages").legal == (1, 2, 3, 4, 5, 6)


def test_silu_mul_two_kernels_share_one_block_but_have_their_own_warps():
    source, space = example("silu_mul")
    assert [s.kernel for s in space.sites] == ["silu_kernel", "mul_kernel"]
    block = space.get("silu_kernel.BLOCK_SIZE")
    assert block.feeds == ("silu_kernel.BLOCK_SIZE", "mul_kernel.BLOCK_SIZE")
    assert [line_of(source, s) for s in block.locations] == ["BLOCK = 256"]
    assert all(s.bindings["BLOCK_SIZE"] == block.id for s in space.sites)
    assert [t.id for t in space.tunables] == [
        "silu_kernel.BLOCK_SIZE", "silu_kernel.num_warps", "silu_kernel.num_stages",
        "mul_kernel.num_warps", "mul_kernel.num_stages",
    ]


def test_matmul_dot_dims_tiles_and_explicit_warps_stages():
    source, space = example("matmul")
    [site] = space.sites
    assert site.facts.dots == (("BLOCK_M", "BLOCK_N", "BLOCK_K"),)
    assert space.current == {
        "matmul_kernel.BLOCK_M": 32, "matmul_kernel.BLOCK_N": 32, "matmul_kernel.BLOCK_K": 32,
        "matmul_kernel.num_warps": 4, "matmul_kernel.num_stages": 2,
    }
    # `BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32`: three literals, three tunables.
    cols = [space.get(f"matmul_kernel.BLOCK_{d}").locations[0].col for d in "MNK"]
    assert len(set(cols)) == 3
    assert {"dot_m"} <= space.get("matmul_kernel.BLOCK_M").roles
    assert {"dot_k"} <= space.get("matmul_kernel.BLOCK_K").roles
    assert set(space.get("matmul_kernel.BLOCK_M").pairs) == {"matmul_kernel.BLOCK_N", "matmul_kernel.BLOCK_K"}
    assert any(">= 16" in r for r in space.get("matmul_kernel.BLOCK_N").relations)
    assert text_at(source, space.get("matmul_kernel.num_stages").locations[0]) == "2"


def test_col_sum_keyword_literal_and_variable_form_a_2d_tile():
    source, space = example("col_sum")
    bm, bn = space.get("col_sum_kernel.BLOCK_M"), space.get("col_sum_kernel.BLOCK_N")
    assert (bm.current, bn.current) == (8, 16)
    assert text_at(source, bm.locations[0]) == "8" and "BLOCK_M=8" in line_of(source, bm.locations[0])
    assert line_of(source, bn.locations[0]) == "BLOCK_N = 16"
    assert bm.pairs == (bn.id,) and bn.pairs == (bm.id,)
    assert "loop_step" in bm.roles
    assert 8 in bm.legal  # the current value stays representable below the usual minimum


@pytest.mark.parametrize("name", ["softmax", "rmsnorm"])
def test_row_kernels_block_literal_in_the_launch(name):
    source, space = example(name)
    [site] = space.sites
    assert site.grid == "(n_rows,)" and site.grid_kind == "tuple"
    block = space.get(f"{name}_kernel.BLOCK")
    assert block.current == 128 and text_at(source, block.locations[0]) == "128"
    assert {"arange", "loop_step"} <= block.roles


def test_ids_and_values_cover_every_example():
    for path in sorted(EXAMPLES.glob("*.py")):
        source = path.read_text()
        space = SearchSpace.from_source(source, entry_of(source))
        assert space.sites, path.name
        assert not space.fixed, (path.name, [t.why for t in space.fixed])
        for t in space.tunables:
            assert t.current in t.legal and t.locations, (path.name, t.id)


# --- other ways of writing launches --------------------------------------------------------


def test_lambda_grid_reads_meta_and_keyword_block():
    source, space = space_of(ELEMENTWISE + '''
def scale(x, alpha):
    n = x.numel()
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    scale_kernel[grid](x, out, n, alpha, BLOCK=512, num_warps=2)
    return out
''', "scale")
    [site] = space.sites
    assert site.grid_kind == "lambda" and site.grid_meta == ("BLOCK",)
    assert space.current == {"scale_kernel.BLOCK": 512, "scale_kernel.num_warps": 2, "scale_kernel.num_stages": 3}
    assert text_at(source, space.get("scale_kernel.num_warps").locations[0]) == "2"


def test_positional_constexpr_through_a_helper_from_a_module_constant():
    source, space = space_of('''
CHUNK = 1024

@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)

def _launch(src, dst, block, warps=8):
    n = src.numel()
    copy_kernel[(triton.cdiv(n, block),)](src, dst, n, block, num_warps=warps)

def copy(src):
    dst = torch.empty_like(src)
    _launch(src, dst, CHUNK)
    return dst
''', "copy")
    [site] = space.sites
    assert site.via == ("copy", "_launch") and site.function == "_launch"
    block, warps = space.get("copy_kernel.BLOCK"), space.get("copy_kernel.num_warps")
    assert block.current == 1024 and line_of(source, block.locations[0]) == "CHUNK = 1024"
    assert warps.current == 8 and line_of(source, warps.locations[0]) == "def _launch(src, dst, block, warps=8):"


def test_grid_with_its_own_copy_of_the_block_is_rewritten_with_it():
    source, space = space_of(ELEMENTWISE + '''
def scale(x, alpha):
    n = x.numel()
    out = torch.empty_like(x)
    scale_kernel[((n + 255) // 256,)](x, out, n, alpha, BLOCK=256)
    return out
''', "scale")
    block = space.get("scale_kernel.BLOCK")
    assert sorted((text_at(source, s), s.delta) for s in block.locations) == [("255", -1), ("256", 0), ("256", 0)]


def test_a_literal_dividing_a_count_of_blocks_is_no_copy_of_the_block():
    # `triton.cdiv(n_rows, 8)` divides a size by BLOCK_M's copy; the `// 8` after it groups
    # blocks eight to a split, and moving it with BLOCK_M would change the split instead.
    source, space = space_of('''
@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :])
    tl.atomic_add(out_ptr + cols, tl.sum(x, axis=0))

def col_sum(x):
    n_rows, n_cols = x.shape
    out = torch.zeros(n_cols, device=x.device)
    blocks = triton.cdiv(n_rows, 8)
    ceil_blocks = (n_rows + 7) // 8
    grid = (triton.cdiv(n_cols, 16), max(1, triton.cdiv(n_rows, 8) // 8, blocks // 8, ceil_blocks // 8 + 1))
    col_sum_kernel[grid](x, out, n_rows, n_cols, BLOCK_M=8, BLOCK_N=16)
    return out
''', "col_sum")
    rows = space.get("col_sum_kernel.BLOCK_M")
    assert sorted((line_of(source, s), text_at(source, s), s.delta) for s in rows.locations) == [
        ("blocks = triton.cdiv(n_rows, 8)", "8", 0),
        ("ceil_blocks = (n_rows + 7) // 8", "7", -1),
        ("ceil_blocks = (n_rows + 7) // 8", "8", 0),
        ("col_sum_kernel[grid](x, out, n_rows, n_cols, BLOCK_M=8, BLOCK_N=16)", "8", 0),
        ("grid = (triton.cdiv(n_cols, 16), max(1, triton.cdiv(n_rows, 8) // 8, blocks // 8, ceil_blocks // 8 + 1))", "8", 0),
    ]


def test_a_kernel_in_a_class_body_is_found_through_self_the_class_and_an_instance():
    source = (FIXTURES / "problems" / "styles" / "class_kernel.py").read_text()
    space = SearchSpace.from_source(source, "swish")
    block = space.get("_kernel.BLOCK")
    assert block.free and block.current == 32
    assert sorted(text_at(source, s) for s in block.locations) == ["32", "32"]  # the launch and its grid
    assert space.get("_kernel.num_warps").current == 1
    for launcher in ("Swish._kernel", "_swish._kernel"):
        other = SearchSpace.from_source(source.replace("self._kernel[", f"{launcher}["), "swish")
        assert other.get("_kernel.BLOCK").current == 32, launcher


def test_a_kernel_name_two_classes_define_is_not_guessed():
    source = (FIXTURES / "problems" / "styles" / "class_kernel.py").read_text()
    twin = "\n\nclass Other:\n    @staticmethod\n    @triton.jit\n    def _kernel(x_ptr):\n        pass\n"
    assert not SearchSpace.from_source(source + twin, "swish").tunables


def test_fields_of_a_dataclass_instance_are_moved_where_the_instance_is_made():
    source = (FIXTURES / "problems" / "styles" / "dataclass_config.py").read_text()
    space = SearchSpace.from_source(source, "row_max")
    where = {t.id: [(line_of(source, s), text_at(source, s)) for s in t.locations] for t in space.tunables}
    assert where["row_max_kernel.ROWS"] == [("CONFIG = LaunchConfig(2, block_cols=16)", "2")]  # launch and grid read it
    assert where["row_max_kernel.COLS"] == [("CONFIG = LaunchConfig(2, block_cols=16)", "16")]
    assert where["row_max_kernel.num_warps"] == [("num_warps: int = 2", "2")]  # the field's default
    assert where["row_max_kernel.num_stages"] == [("num_stages: int = field(default=1)", "1")]
    assert all(t.free for t in space.tunables)
    # An instance made with ** arguments, or a plain class, says nothing it can move.
    spread = SearchSpace.from_source(source.replace("LaunchConfig(2, block_cols=16)",
                                                    "LaunchConfig(2, **{\"block_cols\": 16})"), "row_max")
    assert "** arguments" in spread.get("row_max_kernel.COLS").why


def style(name: str, entry: str) -> tuple[str, SearchSpace]:
    source = (FIXTURES / "problems" / "styles" / name).read_text()
    return source, SearchSpace.from_source(source, entry)


def test_a_launch_through_a_table_of_kernels_launches_each_and_moves_one_literal():
    source, space = style("kernel_table.py", "hard_sigmoid")
    assert [s.kernel for s in space.sites] == ["_hard_sigmoid_f32", "_hard_sigmoid_f16"]
    [block] = [t for t in space.tunables if t.id.endswith(".BLOCK")]
    assert block.feeds == ("_hard_sigmoid_f32.BLOCK", "_hard_sigmoid_f16.BLOCK")
    assert sorted(text_at(source, s) for s in block.locations) == ["32", "32"]  # the launch and its grid
    # A local naming the table's item is the same launch.
    local = source.replace("    _KERNELS[x.dtype][(", "    kernel = _KERNELS[x.dtype]\n    kernel[(")
    assert [s.kernel for s in SearchSpace.from_source(local, "hard_sigmoid").sites] == [s.kernel for s in space.sites]


def test_arguments_bound_by_functools_partial_are_moved_where_the_partial_is_made():
    source, space = style("partial_launcher.py", "sqrt_abs")
    for tid, value in (("sqrt_abs_kernel.BLOCK", "32"), ("sqrt_abs_kernel.num_warps", "1")):
        t = space.get(tid)
        assert t.free and {line_of(source, s) for s in t.locations} == {
            "_launch_small = functools.partial(_launch, block=32, warps=1)"}
        assert {text_at(source, s) for s in t.locations} == {value}


def test_keywords_forwarded_through_kwargs_are_moved_at_the_call_that_gives_them():
    source, space = style("kwargs_forward.py", "negate")
    for tid in ("negate_kernel.BLOCK", "negate_kernel.num_warps"):
        t = space.get(tid)
        assert t.free and [line_of(source, s) for s in t.locations] == ["_apply(x, out, BLOCK=32, num_warps=1)"]
    # Keywords the file does not say (a dict spread into the wrapper) stay unknown.
    spread = source.replace("_apply(x, out, BLOCK=32, num_warps=1)", "_apply(x, out, **SETTINGS)")
    spread = spread.replace("def negate(x):", "SETTINGS = dict(BLOCK=32, num_warps=1)\n\n\ndef negate(x):")
    assert not SearchSpace.from_source(spread, "negate").get("negate_kernel.BLOCK").free


def test_a_kernel_made_by_calling_jit_is_launched_under_the_name_it_is_bound_to():
    source, space = style("jit_called.py", "softsign")
    [site] = space.sites
    assert site.kernel == "_softsign"  # the function's name, as the launch capture knows it
    assert space.get("_softsign.BLOCK").free and space.get("_softsign.BLOCK").current == 32


def test_an_entry_bound_to_a_method_of_a_module_level_instance_reads_its_init():
    source, space = style("bound_method_entry.py", "clamp")
    block = space.get("clamp_kernel.BLOCK")
    assert block.free and [line_of(source, s) for s in block.locations] == [
        "def __init__(self, lo, hi, block=32):"]  # read by the launch and its grid alike
    assert space.get("clamp_kernel.num_warps").current == 1


def test_an_entry_that_is_an_instance_runs_its_call_and_reads_where_it_is_made():
    source, space = style("callable_instance.py", "scale")
    assert_moved_at(source, space, {"scale_kernel.BLOCK": 64, "scale_kernel.num_warps": 1},
                    "scale = ScaleOp(block=64, num_warps=1)")


def assert_moved_at(source: str, space: SearchSpace, values: dict[str, int], line: str) -> None:
    """Each tunable is free, at its value, and moved by editing `line` alone."""
    for tid, value in values.items():
        t = space.get(tid)
        assert t.free and t.current == value
        assert [line_of(source, s) for s in t.locations] == [line]


@pytest.mark.parametrize("record", [
    'Cfg = namedtuple("Cfg", ["block", "warps"], defaults=[2])',
    'Cfg = namedtuple("Cfg", "block warps", defaults=(128, 2))',
    "class Cfg(NamedTuple):\n    block: int\n    warps: int = 2",
])
def test_a_named_tuple_config_is_moved_where_the_instance_is_made(record):
    source, _ = style("namedtuple_config.py", "relu")
    source = source.replace('Cfg = namedtuple("Cfg", ["block", "warps"])', record)
    space = SearchSpace.from_source(source, "relu")
    assert_moved_at(source, space, {"relu_kernel.BLOCK": 256, "relu_kernel.num_warps": 4},
                    "_CFG = Cfg(block=256, warps=4)")
    # A field the instance leaves out is moved at its default.
    source = source.replace("_CFG = Cfg(block=256, warps=4)", "_CFG = Cfg(256)")
    warps = SearchSpace.from_source(source, "relu").get("relu_kernel.num_warps")
    assert warps.free and warps.current == 2 and [line_of(source, s) for s in warps.locations] == [
        record.splitlines()[-1].strip() if "class" in record else record]


@pytest.mark.parametrize("spread", ["**cfg.all_kwargs()", "**cfg.kwargs, num_warps=cfg.num_warps"])
def test_a_triton_config_made_by_hand_is_moved_where_it_is_made(spread):
    source, _ = style("triton_config_manual.py", "silu")
    source = source.replace("**cfg.all_kwargs()", spread)
    space = SearchSpace.from_source(source, "silu")
    assert_moved_at(source, space, {"silu_kernel.BLOCK": 256, "silu_kernel.num_warps": 4},
                    'cfg = triton.Config({"BLOCK": 256}, num_warps=4)')
    if "all_kwargs" in spread:  # Triton fills num_stages into all_kwargs(): not written, not moved
        assert "triton.Config's default, not written" in space.get("silu_kernel.num_stages").why


def test_a_record_or_dict_held_by_self_is_read_where_init_sets_it():
    source, space = style("module_dataclass_cfg.py", "relu")  # `self.cfg.block`, self.cfg a dataclass
    assert_moved_at(source, space, {"relu_kernel.BLOCK": 256, "relu_kernel.num_warps": 4},
                    "self.cfg = KernelConfig(block=256, warps=4)")
    source, space = style("class_launch_kwargs.py", "abs_sqrt")  # `**self.launch_kwargs`, a dict
    assert_moved_at(source, space, {"abs_sqrt_kernel.BLOCK": 128, "abs_sqrt_kernel.num_warps": 2},
                    'self.launch_kwargs = {"BLOCK": 128, "num_warps": 2}')


def test_num_warps_in_a_shared_variable_and_num_stages_present():
    source, space = space_of(ELEMENTWISE + '''
def twice(x, alpha):
    n = x.numel()
    a, b = torch.empty_like(x), torch.empty_like(x)
    nw = 8
    scale_kernel[(triton.cdiv(n, 1024),)](x, a, n, alpha, BLOCK=1024, num_warps=nw, num_stages=2)
    scale_kernel[(triton.cdiv(n, 2048),)](a, b, n, alpha, BLOCK=2048, num_warps=nw, num_stages=1)
    return b
''', "twice")
    ids = [t.id for t in space.tunables]
    assert ids == ["scale_kernel.BLOCK", "scale_kernel.num_warps", "scale_kernel.num_stages",
                   "scale_kernel.BLOCK#2", "scale_kernel.num_stages#2"]
    assert space.get("scale_kernel.num_warps").feeds == ("scale_kernel.num_warps",)
    assert [s.bindings["num_warps"] for s in space.sites] == ["scale_kernel.num_warps"] * 2
    assert space.current["scale_kernel.BLOCK#2"] == 2048 and len(space.get("scale_kernel.BLOCK#2").locations) == 2


AUTOTUNED = '''
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 256}, num_warps=8, num_stages=2),
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
'''


def test_autotuned_kernel_exposes_its_config_list_only():
    source, space = space_of(AUTOTUNED, "auto")
    [site] = space.sites
    assert site.autotuned and site.grid_meta == ("BLOCK",)
    assert [t.id for t in space.tunables] == ["auto_kernel.autotune_configs"]
    t = space.tunables[0]
    assert t.kind == "autotune_configs"
    assert t.current == (
        ConfigSpec((("BLOCK", 128),), 4, None),
        ConfigSpec((("BLOCK", 256),), 8, 2),
    )
    assert [c.flat() for c in t.current][0] == {"BLOCK": 128, "num_warps": 4, "num_stages": 3}
    assert t.locations[0].line < site.facts.line  # the list inside the decorator


def test_runtime_derived_values_are_reported_not_free():
    _, space = space_of('''
@triton.jit
def row_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    row = tl.program_id(0) * GROUP
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, x, mask=cols < n_cols)

def rows(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK < 2048 else 8
    row_kernel[(n_rows,)](x, out, n_cols, BLOCK=BLOCK, GROUP=1, num_warps=num_warps)
    return out
''', "rows")
    fixed = {t.id: t for t in space.fixed}
    assert set(fixed) == {"row_kernel.BLOCK", "row_kernel.GROUP", "row_kernel.num_warps"}
    assert "next_power_of_2(n_cols)" in fixed["row_kernel.BLOCK"].why
    assert fixed["row_kernel.BLOCK"].current is None and not fixed["row_kernel.BLOCK"].locations
    assert "shapes no tensor" in fixed["row_kernel.GROUP"].why
    assert [t.id for t in space.tunables] == ["row_kernel.num_stages"]


def test_entry_arguments_and_reassigned_names_are_not_free():
    _, space = space_of(ELEMENTWISE + '''
def scale(x, alpha, BLOCK=128):
    n = x.numel()
    out = torch.empty_like(x)
    warps = 4
    if n > 4096:
        warps = 8
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, alpha, BLOCK=BLOCK, num_warps=warps)
    return out
''', "scale")
    fixed = {t.id: t.why for t in space.fixed}
    assert "argument 'BLOCK' of the entry" in fixed["scale_kernel.BLOCK"]
    assert "assigned 2 times" in fixed["scale_kernel.num_warps"]


def test_only_launches_reachable_from_the_entry():
    _, space = space_of(ELEMENTWISE + '''
def unused(x):
    scale_kernel[(1,)](x, x, 1, 1.0, BLOCK=32)

def scale(x, alpha):
    out = torch.empty_like(x)
    scale_kernel[(1,)](x, out, x.numel(), alpha, BLOCK=64)
    return out
''', "scale")
    assert [s.function for s in space.sites] == ["scale"]
    assert space.current["scale_kernel.BLOCK"] == 64


def test_bad_entry_and_bad_source():
    with pytest.raises(ValueError):
        find_launch_sites(HEADER + ELEMENTWISE, "missing")
    with pytest.raises(ValueError):
        find_launch_sites(HEADER + ELEMENTWISE, "scale_kernel")  # a kernel is not an entry
    with pytest.raises(SyntaxError):
        find_launch_sites("def f(:\n", "f")


def test_kernel_default_heuristics_and_module_level_config_lists():
    source, space = space_of('''
CONFIGS = [triton.Config({"BLOCK_N": 64}), triton.Config({"BLOCK_N": 128}, num_warps=8)]

@triton.jit
def dflt_kernel(x_ptr, n, BLOCK: tl.constexpr = 512):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

@triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def tuned_kernel(x_ptr, n, EVEN: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK_N), 1.0)

@triton.autotune(configs=[triton.Config({"B": b}) for b in (32, 64)], key=["n"])
@triton.jit
def built_kernel(x_ptr, n, B: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, B), 2.0)

def go(x):
    dflt_kernel[(1,)](x, x.numel())
    tuned_kernel[(1,)](x, x.numel())
    built_kernel[(1,)](x, x.numel())
''', "go")
    block = space.get("dflt_kernel.BLOCK")
    assert block.free and block.current == 512 and "default of dflt_kernel" in block.why
    assert "def dflt_kernel(" in line_of(source, block.locations[0])
    configs = space.get("tuned_kernel.autotune_configs")
    assert configs.free and line_of(source, configs.locations[0]).startswith("CONFIGS = [")
    assert [c.values() for c in configs.current] == [{"BLOCK_N": 64}, {"BLOCK_N": 128}]
    # the decorator's: listed, with where it comes from, but never free without captured launches
    assert not any(t.id.startswith("tuned_kernel.EVEN") and t.free for t in space.by_id.values())
    built = space.get("built_kernel.autotune_configs")
    assert not built.free and "built by code" in built.why


def test_an_instance_made_in_the_entry_is_followed_and_its_constructor_argument_tuned():
    source, space = space_of(ELEMENTWISE + '''
class Scale(torch.nn.Module):
    BLOCK = 128  # a class attribute: read through self like one set in __init__

    def __init__(self, warps=4):
        super().__init__()
        self.warps = warps

    def forward(self, x, alpha):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[(triton.cdiv(n, self.BLOCK),)](x, out, n, alpha, BLOCK=self.BLOCK, num_warps=self.warps)
        return out

def scale(x, alpha):
    op = Scale(warps=2)
    return op(x, alpha)
''', "scale")
    [site] = space.sites
    assert site.via == ("scale", "Scale.forward")
    block, warps = space.get("scale_kernel.BLOCK"), space.get("scale_kernel.num_warps")
    assert block.free and line_of(source, block.locations[0]) == "BLOCK = 128  # a class attribute: read through self like one set in __init__"
    assert warps.free and warps.current == 2 and line_of(source, warps.locations[0]) == "op = Scale(warps=2)"


def test_a_spread_dict_of_unknown_keys_is_named_and_nothing_is_inserted_beside_it():
    _, space = space_of(ELEMENTWISE + '''
def scale(x, alpha, **launch_options):
    out = torch.empty_like(x)
    scale_kernel[(1,)](x, out, x.numel(), alpha, **launch_options)
    return out
''', "scale")
    block, warps = space.get("scale_kernel.BLOCK"), space.get("scale_kernel.num_warps")
    assert not block.free and "may come from **launch_options" in block.why
    assert not warps.free and "may come from **launch_options" in warps.why  # no num_warps= beside it


def test_module_level_constexpr_globals_read_in_the_kernel_are_tunables_at_their_literals():
    source, space = space_of('''
TILE_M = tl.constexpr(4)
TILE_N = tl.constexpr(32)
SCALE = tl.constexpr(2)  # read in the kernel but shapes no tensor: may carry meaning
PLAIN = 64  # not a constexpr: Triton would refuse it in a kernel, and no kernel reads it

@triton.jit
def bias_kernel(x_ptr, b_ptr, out_ptr, M, N):
    rows = tl.program_id(0) * TILE_M + tl.arange(0, TILE_M)
    cols = tl.program_id(1) * TILE_N + tl.arange(0, TILE_N)
    offs = rows[:, None] * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask) * SCALE
    tl.store(out_ptr + offs, x + tl.load(b_ptr + cols, mask=cols < N)[None, :], mask=mask)

def add_bias(x, b):
    M, N = x.shape
    out = torch.empty_like(x)
    bias_kernel[(triton.cdiv(M, TILE_M.value), triton.cdiv(N, TILE_N.value))](x, b, out, M, N)
    return out
''', "add_bias")
    [site] = space.sites
    assert site.facts.globals == ("TILE_M", "TILE_N", "SCALE")
    m, n = space.get("bias_kernel.TILE_M"), space.get("bias_kernel.TILE_N")
    assert m.free and m.current == 4 and line_of(source, m.locations[0]) == "TILE_M = tl.constexpr(4)"
    assert text_at(source, n.locations[0]) == "32" and "at module level" in n.why and "read inside bias_kernel" in n.why
    assert n.id in m.pairs  # the two form one 2-D tile
    scale = space.get("bias_kernel.SCALE")
    assert not scale.free and "shapes no tensor" in scale.why


def test_a_kernel_passed_to_a_generic_launcher_is_followed_once_per_call():
    source, space = space_of(ELEMENTWISE + '''
@triton.jit
def shift_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + alpha, mask=mask)

def _elementwise(kernel, x, alpha, block=128, warps=2):
    out = torch.empty_like(x)
    n = x.numel()
    kernel[(triton.cdiv(n, block),)](x, out, n, alpha, BLOCK=block, num_warps=warps)
    return out

def scale_shift(x, alpha):
    fn = shift_kernel
    y = _elementwise(scale_kernel, x, alpha)
    return _elementwise(fn, y, alpha, block=256)
''', "scale_shift")
    assert [(s.kernel, s.via) for s in space.sites] == [("scale_kernel", ("scale_shift", "_elementwise")),
                                                        ("shift_kernel", ("scale_shift", "_elementwise"))]
    scale, shift = space.get("scale_kernel.BLOCK"), space.get("shift_kernel.BLOCK")
    assert scale.free and line_of(source, scale.locations[0]) == "def _elementwise(kernel, x, alpha, block=128, warps=2):"
    assert shift.free and shift.current == 256 and "block=256" in line_of(source, shift.locations[0])


def test_a_kernel_imported_from_another_module_is_named_with_why_it_has_no_site():
    source = (FIXTURES / "problems" / "sibling" / "axpy_wrapper.py").read_text()
    space = SearchSpace.from_source(source, "axpy")
    assert space.sites == []
    assert space.unreached(["axpy_kernel"]) == {
        "axpy_kernel": "imported from _axpy_kernels: only kernels defined in the problem file are analysed"}


def test_a_factorys_kernels_of_one_name_are_not_read_and_the_launch_says_why():
    # make_kernel(scale) defines `scale_add_kernel` in two branches: a recipe had rewritten the
    # one that never ran. Neither is read; the report says where the launched kernel is made.
    source = (FIXTURES / "problems" / "styles" / "kernel_factory.py").read_text()
    assert "scale_add_kernel" not in KernelSource(source).kernels
    space = SearchSpace.from_source(source, "scale_add")
    assert space.sites == [] and space.unreached(["scale_add_kernel"]) == {
        "scale_add_kernel": "defined 2 times inside make_kernel(), which picks one at run time: neither is analysed"}


def test_a_factory_that_makes_one_kernel_is_read_through_its_call():
    # `_leaky_relu_kernel()[grid](...)`: the factory defines one kernel and returns it, so the
    # launch is that kernel's, and the block and warps written at the launch move.
    source = (FIXTURES / "problems" / "styles" / "kernel_factory_lazy.py").read_text()
    space = SearchSpace.from_source(source, "leaky_relu")
    [site] = space.sites
    assert site.kernel == "leaky_relu_kernel"
    block, warps = space.get("leaky_relu_kernel.BLOCK_SIZE"), space.get("leaky_relu_kernel.num_warps")
    assert block.free and block.current == 128 and warps.free and warps.current == 4
    assert space.unreached(["leaky_relu_kernel"]) == {}
    moved = rewrite(source, {"leaky_relu_kernel.BLOCK_SIZE": 1024})
    assert "_leaky_relu_kernel()[(triton.cdiv(n, 1024),)](x, out, n, slope, BLOCK_SIZE=1024, num_warps=4)" in moved


def test_launch_options_the_search_leaves_alone_are_listed_with_where_they_are_written():
    source = (FIXTURES / "problems" / "styles" / "launch_options.py").read_text()
    space = SearchSpace.from_source(source, "softplus")
    ctas, regs = space.get("softplus_kernel.num_ctas"), space.get("softplus_kernel.maxnreg")
    assert not ctas.free and ctas.current == 1 and ctas.why == "num_ctas=1 (line 23): a launch option the search leaves as written"
    assert not regs.free and regs.current == 128 and regs.why.startswith("maxnreg=128 (line 23)")
    assert space.get("softplus_kernel.BLOCK").free


def test_a_kernel_launched_through_run_is_named_with_the_form_it_takes():
    source = (FIXTURES / "problems" / "styles" / "run_api.py").read_text()
    space = SearchSpace.from_source(source, "sigmoid_gate")
    assert space.sites == [] and space.unreached(["_gate_kernel"]) == {
        "_gate_kernel": "launched as _gate_kernel.run(...), a form launch analysis does not read "
                        "(`_gate_kernel[grid](...)` it does)"}


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "problems" / "styles").glob("*.py")))
def test_every_styles_search_space_is_plain_data(name):
    # The run store keeps each round's space as JSON: an AST node in it (the value of a
    # `num_ctas` read through `**cfg.all_kwargs()`) ended a run with a StoreError.
    import json

    from tritonforge.strategies.launch.strategy import space_record

    source = (FIXTURES / "problems" / "styles" / name).read_text()
    json.dumps(space_record(SearchSpace.from_source(source, entry_of(source))))
