"""Computed launch values: replayed from the captured launches, moved by editing the literals
they read, and still right when the rewritten file is run.

Each problem in tests/fixtures/problems/styles sets its launch values the way public kernel
libraries do (a per-dtype dict, a capped power of two, a helper with an if chain, a
@triton.heuristics lambda, CUDA-only host code). Captures here run the entry on CPU tensors
with its launches recorded and skipped, so no kernel runs and no GPU is needed.
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tritonforge.analysis.launch_capture import capture_launches
from tritonforge.analysis.launch_sites import SearchSpace
from tritonforge.analysis.launch_sites.replay import Replay
from tritonforge.analysis.launch_sites.replay_values import UNKNOWN
from tritonforge.analysis.launch_sites.runtime import Runtime, Unreachable
from tritonforge.domain.candidate import source_key
from tritonforge.problem.module import ProblemModule
from tritonforge.strategies.launch.rewrite import apply_assignment

STYLES = FIXTURES / "problems" / "styles"
CORPUS = ROOT / "benchmarks" / "corpus"


def captured_space(path: Path, source: str | None = None, stand_ins: bool = True
                   ) -> tuple[SearchSpace, dict[str, list[dict]]]:
    """The search space of `source` (default: the file) with the file's launches replayed."""
    records = capture(path, stand_ins)
    text = path.read_text()
    runtime = Runtime.from_records(records, None, source_key(text))
    pm = ProblemModule(path)
    return SearchSpace.from_source(source or text, pm.describe().entry, runtime), records


def capture(path: Path, stand_ins: bool = True) -> dict[str, list[dict]]:
    """Each case's launches, captured on CPU tensors (as for a GPU, unless `stand_ins` is off)."""
    pm = ProblemModule(path)
    out = {}
    for case in pm.cases()[1]:
        records = capture_launches(pm.entry, pm.make_args(case, 0, "cpu"), execute=False, stand_ins=stand_ins)
        out[case.label] = [r.to_json() for r in records]
    return out


def changed_lines(before: str, after: str) -> list[str]:
    return [line[1:].strip() for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
            if line.startswith("+") and not line.startswith("+++")]


def received(path: Path, case_index: int = -1) -> dict:
    """What the last launch of the dominant (last) case receives when `path` runs."""
    launch = list(capture(path).values())[case_index][-1]
    values = {a["name"]: a["value"] for a in launch["args"] if a["kind"] == "constexpr"}
    return {**values, "num_warps": launch["num_warps"], "grid": launch["grid"]}


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


# --- replay alone ---------------------------------------------------------------------
def evaluate(source: str, expr: str, fn: str | None, captured: dict) -> tuple:
    tree = ast.parse(source + f"\n__probe__ = {expr}\n")
    probe = tree.body[-1].value
    replay = Replay(tree, {fn: captured} if fn else {})
    frame = replay.function_frame(replay.functions[fn], None) if fn else replay.module_frame()
    value, reads = replay.value_of(probe, frame)
    return value, [c.value for c in reads]


def test_a_dict_lookup_reads_only_the_entry_it_selects():
    source = "import torch\nCFG = {torch.float16: {'B': 64, 'W': 4}, torch.float32: {'B': 32, 'W': 8}}\n"
    assert evaluate(source, "CFG[torch.float32]['B']", None, {}) == (32, [32])
    assert evaluate(source, "CFG['float16']['W']", None, {}) == (4, [4])


def test_the_modules_own_names_by_string_and_a_class_given_args_read_where_used():
    # Review of session 20: a name the module lacks is the default for .get, a KeyError (not
    # None) for a subscript; `*args` of `__init__` are values, not unread bindings.
    source = ("import sys\nBLOCK = 64\n"
              "class Cfg:\n    def __init__(self, *sizes, **kw):\n        self.sizes = sizes\n        self.kw = kw\n"
              "C = Cfg(16, 32, warps=4, stages=2)\n")
    assert evaluate(source, "globals().get('BLOCK', 128)", None, {}) == (64, [64])
    assert evaluate(source, "globals().get('NOPE', 128)", None, {}) == (128, [128])
    assert evaluate(source, "globals().get('NOPE')", None, {})[0] is None
    assert evaluate(source, "globals()['NOPE']", None, {})[0] is UNKNOWN
    assert evaluate(source, "sys.modules[__name__].BLOCK", None, {}) == (64, [64])
    assert evaluate(source, "C.sizes[1]", None, {}) == (32, [32])
    assert evaluate(source, "C.kw['stages']", None, {}) == (2, [2])  # not the 4 of another keyword
    assert evaluate(source, "max(C.kw.values())", None, {}) == (4, [4, 2])


def test_an_if_chain_reads_its_tests_and_the_branch_taken():
    source = "def pick(n):\n    if n < 1000:\n        b = 32\n    elif n < 9000:\n        b = 64\n    else:\n        b = 128\n    return b\n"
    assert evaluate(source, "pick(5000)", None, {}) == (64, [5000, 1000, 9000, 64])
    assert evaluate(source, "pick(50)", None, {}) == (32, [50, 1000, 32])


def test_a_written_out_tuple_charges_each_item_its_own_literals():
    # unsloth's `BLOCK_SIZE, num_warps = calculate_settings(n)` (s21): each item read the
    # whole tuple's literals, so the block was reported as reading the warp ladder.
    source = ("import triton\n"
              "def settings(n):\n    block = triton.next_power_of_2(n)\n    warps = 4\n"
              "    if block >= 2048:\n        warps = 8\n    return block, warps\n"
              "def launch(n):\n    b, w = settings(n)\n    return b, w\n")
    # (The probe's own argument is read first: it stands for the size a case passes.)
    assert evaluate(source, "settings(3000)[0]", None, {}) == (4096, [3000])
    assert evaluate(source, "settings(3000)[1]", None, {}) == (8, [3000, 2048, 8])
    assert evaluate(source, "launch(1000)[0]", None, {}) == (1024, [1000])
    assert evaluate(source, "launch(1000)[1]", None, {}) == (4, [1000, 4])
    assert evaluate(source, "settings(3000)", None, {}) == ((4096, 8), [3000, 2048, 8])


def test_a_files_own_replace_and_asdict_are_followed_not_taken_for_dataclasses():
    # The stdlib's meaning of `replace(cfg, ...)`/`asdict(cfg)` held for any function of those
    # names, and the record was evaluated twice; the file's own helper decides (review, s15).
    source = ("import dataclasses\n@dataclasses.dataclass\nclass Cfg:\n    block: int\n"
              "BASE = Cfg(block=512)\n"
              "def replace(cfg, block):\n    return Cfg(block=block * 2)\n"
              "def asdict(cfg):\n    return {'BLOCK': cfg.block // 4}\n")
    assert evaluate(source, "replace(BASE, block=64).block", None, {})[0] == 128
    assert evaluate(source, "asdict(BASE)['BLOCK']", None, {})[0] == 128
    assert evaluate(source, "dataclasses.replace(BASE, block=64).block", None, {})[0] == 64
    assert evaluate(source, "dataclasses.asdict(BASE)['block']", None, {})[0] == 512


def test_captured_locals_fill_what_the_body_does_not_say():
    source = "import triton\ndef f(x):\n    n = x.shape[1]\n    for i in range(3):\n        k = i\n    return n\n"
    tensor = {"__tensor__": {"shape": [4, 3000], "dtype": "torch.float32", "strides": [3000, 1]}}
    from tritonforge.analysis.launch_sites.replay_values import runtime_value
    captured = {"x": runtime_value(tensor), "k": 2}
    assert evaluate(source, "min(triton.next_power_of_2(n), 1024)", "f", captured)[0] == 1024
    assert evaluate(source, "k * 16", "f", captured) == (32, [16])  # k from the loop: as captured


def test_anything_else_is_unknown_not_a_guess():
    source = "import os\ndef f():\n    return 1\n"
    assert evaluate(source, "int(os.environ['BLOCK'])", None, {})[0] is UNKNOWN
    assert evaluate(source, "undefined_name * 2", None, {})[0] is UNKNOWN


# --- styles: found, moved, rewritten -----------------------------------------------------
def test_a_per_dtype_dict_is_edited_at_the_entry_the_case_used(tmp_path):
    path = STYLES / "dict_config.py"
    space, _ = captured_space(path)
    block_n = space.get("row_sum_kernel.BLOCK_N")
    assert block_n.free and block_n.current == 16 and "cfg[\"BLOCK_N\"]" in block_n.why
    assert space.get("row_sum_kernel.num_warps").free
    source = path.read_text()
    out = apply_assignment(space, {"row_sum_kernel.BLOCK_N": 128, "row_sum_kernel.BLOCK_M": 8})
    assert changed_lines(source, out) == ['torch.float32: {"BLOCK_M": 8, "BLOCK_N": 128, "num_warps": 2},']
    got = received(write(tmp_path, "dict_config.py", out))
    assert (got["BLOCK_M"], got["BLOCK_N"]) == (8, 128)
    assert got["grid"][0] == -(-9 // 8)  # the grid reads the same entry


def test_a_capped_power_of_two_moves_its_cap_and_keeps_following_the_shape(tmp_path):
    path = STYLES / "capped_pow2.py"
    space, _ = captured_space(path)
    block = space.get("row_sum_kernel.BLOCK")
    assert block.free and block.per_case == {"rows=5, cols=100": 64, "rows=3, cols=1500": 64}
    source = path.read_text()
    out = apply_assignment(space, {"row_sum_kernel.BLOCK": 256})
    assert changed_lines(source, out) == ["BLOCK = min(triton.next_power_of_2(n_cols), 256)"]
    new = write(tmp_path, "capped_pow2.py", out)
    assert received(new)["BLOCK"] == 256
    assert received(new, 0)["BLOCK"] == 128  # the short rows: still the power of two of the row
    assert received(new)["num_warps"] == 2  # not asked to move: kept


def test_warps_set_by_a_conditional_move_through_its_literals(tmp_path):
    path = STYLES / "capped_pow2.py"
    space, _ = captured_space(path)
    out = apply_assignment(space, {"row_sum_kernel.BLOCK": 1024, "row_sum_kernel.num_warps": 8})
    got = received(write(tmp_path, "capped_pow2.py", out))
    assert (got["BLOCK"], got["num_warps"]) == (1024, 8)


def test_a_helper_with_an_if_chain_is_edited_in_the_branch_taken(tmp_path):
    path = STYLES / "helper_if_chain.py"
    space, _ = captured_space(path)
    block = space.get("scale_kernel.BLOCK_SIZE")
    assert block.free and block.per_case == {"n=500": 32, "n=5000": 64}
    source = path.read_text()
    out = apply_assignment(space, {"scale_kernel.BLOCK_SIZE": 512})
    assert changed_lines(source, out) == ["block = 512"]
    new = write(tmp_path, "helper_if_chain.py", out)
    assert received(new)["BLOCK_SIZE"] == 512 and received(new, 0)["BLOCK_SIZE"] == 32


def test_a_settings_helpers_block_is_not_charged_with_its_warp_ladder():
    space, _ = captured_space(CORPUS / "rmsnorm_autograd_function.py")
    block = space.get("_rms_norm_forward_kernel.BLOCK_SIZE")
    assert not block.free and "no integer literal decides it" in block.why
    warps = space.get("_rms_norm_forward_kernel.num_warps")
    assert warps.free and warps.why.endswith("it reads 4 (line 23)")


def test_a_class_nested_in_a_namespace_class_is_read_and_its_literals_moved(tmp_path):
    # Probe round 24: `_Tuning.AddRMSNorm.BLOCK` was "not computable from this file".
    path = STYLES / "nested_class_namespace.py"
    space, _ = captured_space(path)
    block, warps = space.get("_softplus_kernel.BLOCK"), space.get("_softplus_kernel.num_warps")
    assert block.free and block.current == 64 and block.why.endswith("it reads 64 (line 14)")
    assert warps.free and warps.current == 1
    source = path.read_text()
    out = apply_assignment(space, {"_softplus_kernel.BLOCK": 256, "_softplus_kernel.num_warps": 4})
    assert changed_lines(source, out) == ["BLOCK = 256", "NUM_WARPS = 4"]
    got = received(write(tmp_path, "nested_class_namespace.py", out))
    assert got["BLOCK"] == 256 and got["num_warps"] == 4 and got["grid"][0] == -(-3000 // 256)


def test_a_namedtuples_asdict_spread_is_read_field_by_field_and_moved(tmp_path):
    # Probe round 24: `**tiles._asdict()` of a typing.NamedTuple: "whose keys the file does not say".
    path = STYLES / "namedtuple_asdict_spread.py"
    space, _ = captured_space(path)
    bm, bn = space.get("_add_bias_kernel.BLOCK_M"), space.get("_add_bias_kernel.BLOCK_N")
    assert bm.free and bm.current == 8 and bm.why.endswith("it reads 8 (line 14)")
    assert bn.free and bn.current == 16 and bn.why.endswith("it reads 16 (line 15)")
    source = path.read_text()
    out = apply_assignment(space, {"_add_bias_kernel.BLOCK_M": 1, "_add_bias_kernel.BLOCK_N": 1024})
    assert changed_lines(source, out) == ["BLOCK_M: int = 1", "BLOCK_N: int = 1024"]
    got = received(write(tmp_path, "namedtuple_asdict_spread.py", out))
    assert (got["BLOCK_M"], got["BLOCK_N"]) == (1, 1024) and got["grid"][:2] == [9, 1]


def test_a_heuristics_lambda_is_rewritten_and_the_meta_grid_follows(tmp_path):
    path = STYLES / "heuristic_block.py"
    space, _ = captured_space(path)
    block = space.get("add_kernel.BLOCK_SIZE")
    assert block.free and "@triton.heuristics" in block.why and block.current == 64
    out = apply_assignment(space, {"add_kernel.BLOCK_SIZE": 256})
    got = received(write(tmp_path, "heuristic_block.py", out))
    assert got["BLOCK_SIZE"] == 256 and got["grid"][0] == -(-3000 // 256)


def test_an_unreachable_value_is_refused_not_faked():
    space, _ = captured_space(STYLES / "capped_pow2.py")
    with pytest.raises(Unreachable):
        # min(next_power_of_2(1500), cap) never exceeds 2048, whatever the cap
        apply_assignment(space, {"row_sum_kernel.BLOCK": 4096})


def test_host_code_written_for_a_gpu_is_captured_on_cpu():
    space, records = captured_space(STYLES / "device_guarded.py")
    assert records["n=1000"][0]["kernel_name"] == "add_kernel"
    assert space.get("add_kernel.BLOCK_SIZE").free


def test_launch_records_carry_the_host_locals():
    records = capture(STYLES / "dict_config.py")
    frames = records["m=9, n=1000"][0]["frames"]
    assert frames["row_sum"]["M"] == 9 and frames["row_sum"]["x"]["__tensor__"]["shape"] == [9, 1000]
    assert frames["row_sum"]["cfg"]["__dict__"][0] == ["BLOCK_M", 2]


# --- launches inside classes, spread dicts and configs built by code ---------------------
def test_an_autograd_function_forward_is_followed_and_its_tuple_helper_edited(tmp_path):
    path = CORPUS / "rmsnorm_autograd_function.py"
    space, _ = captured_space(path)
    [site] = space.sites
    assert site.via == ("rms_norm", "RMSNormFunction.forward") and site.function == "RMSNormFunction.forward"
    warps = space.get("_rms_norm_forward_kernel.num_warps")
    assert warps.free and warps.per_case == {"tokens=7, hidden=300": 4, "tokens=3, hidden=1024": 4}
    source = path.read_text()
    out = apply_assignment(space, {"_rms_norm_forward_kernel.num_warps": 8})
    assert changed_lines(source, out) == ["num_warps = 8"]  # the value both cases' rows fall through to
    new = write(tmp_path, "rmsnorm_autograd_function.py", out)
    assert received(new)["num_warps"] == 8 and received(new)["BLOCK_SIZE"] == 1024
    assert received(new, 0)["BLOCK_SIZE"] == 512  # still the row's power of two


def test_an_nn_module_attribute_is_edited_where_init_gets_it(tmp_path):
    path = CORPUS / "scale_shift_module.py"
    space, _ = captured_space(path)
    [site] = space.sites
    assert site.via == ("scale_shift", "ScaleShift.forward", "ScaleShift._launch")
    block, warps = space.get("_scale_shift_kernel.BLOCK_SIZE"), space.get("_scale_shift_kernel.num_warps")
    assert block.free and block.current == 128 and "self.block_size = 128" in block.why
    assert warps.free and warps.current == 2  # passed by the module-level constructor call
    source = path.read_text()
    out = apply_assignment(space, {"_scale_shift_kernel.BLOCK_SIZE": 1024, "_scale_shift_kernel.num_warps": 8})
    assert changed_lines(source, out) == ["def __init__(self, block_size=1024, num_warps=4):",
                                          "_scale_shift = ScaleShift(num_warps=8)"]
    got = received(write(tmp_path, "scale_shift_module.py", out))
    assert (got["BLOCK_SIZE"], got["num_warps"], got["grid"][0]) == (1024, 8, -(-4099 // 1024))


def test_a_dict_spread_into_the_launch_is_edited_in_the_return_the_case_takes(tmp_path):
    path = CORPUS / "bias_relu_spread_meta.py"
    space, _ = captured_space(path)
    block = space.get("_bias_relu_kernel.BLOCK")
    assert block.free and block.current == 128 and "meta['BLOCK']" in block.why
    assert space.get("_bias_relu_kernel.num_warps").free
    source = path.read_text()
    out = apply_assignment(space, {"_bias_relu_kernel.BLOCK": 512})
    assert changed_lines(source, out) == ['return {"BLOCK": 512, "num_warps": 1}']
    got = received(write(tmp_path, "bias_relu_spread_meta.py", out))
    assert got["BLOCK"] == 512 and got["grid"][0] == -(-12000 // 512)  # the grid reads the same dict


def test_autotune_configs_built_by_code_are_written_out_as_they_ran(tmp_path):
    path = CORPUS / "row_sum_autotune_built.py"
    space, _ = captured_space(path)
    configs = space.get("_row_sum_kernel.autotune_configs")
    assert configs.free and "built by code" in configs.why
    assert [(c.values()["BLOCK_M"], c.values()["BLOCK_N"], c.warps) for c in configs.current] == \
        [(m, n, w) for m in (1, 2) for n in (32, 64) for w in (1, 2)]
    source = path.read_text()
    pinned = configs.current[3].with_values(BLOCK_N=128)
    out = apply_assignment(space, {"_row_sum_kernel.autotune_configs": (configs.current[0], pinned)})
    assert 'triton.Config({"BLOCK_M": 1, "BLOCK_N": 128}, num_warps=2, num_stages=3),' in changed_lines(source, out)
    assert "], key=[\"N\"])" in out and "configs=list(filter(keep, configs))" not in out
    launches = list(capture(write(tmp_path, "row_sum_autotune_built.py", out)).values())[-1]
    assert [launch["autotune_configs"][1]["kwargs"] for launch in launches][0] == {"BLOCK_M": 1, "BLOCK_N": 128}


def test_a_widened_list_built_by_code_keeps_its_code_and_adds_the_new_configs(tmp_path):
    # Before, widening wrote the code's eight configs out as literals in place of it.
    path = CORPUS / "row_sum_autotune_built.py"
    space, _ = captured_space(path)
    configs = space.get("_row_sum_kernel.autotune_configs")
    new = configs.current[0].with_values(BLOCK_N=256, num_warps=4)
    out = apply_assignment(space, {configs.id: configs.current + (new,)})
    assert changed_lines(path.read_text(), out) == [
        "@triton.autotune(configs=[", "*list(filter(keep, configs)),",
        'triton.Config({"BLOCK_M": 1, "BLOCK_N": 256}, num_warps=4, num_stages=3),', '], key=["N"])']
    launches = list(capture(write(tmp_path, path.name, out)).values())[-1]
    ran = [(c["kwargs"]["BLOCK_M"], c["kwargs"]["BLOCK_N"], c["num_warps"]) for c in launches[0]["autotune_configs"]]
    assert ran == [(c.values()["BLOCK_M"], c.values()["BLOCK_N"], c.warps) for c in configs.current] + [(1, 256, 4)]
    # Widened again, from the candidate's own capture: one spread, the new configs after it.
    again, _ = captured_space(write(tmp_path, path.name, out))
    wider = again.get(configs.id)
    out2 = apply_assignment(again, {configs.id: wider.current + (new.with_values(BLOCK_N=512),)})
    assert out2.count("*list(filter(keep, configs)),") == 1 and '"BLOCK_N": 256}' in out2 and '"BLOCK_N": 512}' in out2


def test_autotune_through_a_helper_returning_triton_autotune_is_edited(tmp_path):
    # trident's `@util.autotune(softmax_configs(), ["x_size"])`, `util` a namespace holding a
    # helper that returns `triton.autotune(configs, key, ...)` (probe round 21): the kernel was
    # not taken as autotuned, its block read "not passed", and a num_warps move inserted at the
    # launch changed nothing the config did not override.
    path = STYLES / "trident_mangled_forward.py"
    space, _ = captured_space(path, stand_ins=False)
    configs = space.get("forward.autotune_configs")
    assert configs.free and configs.current
    pinned = configs.current[0].with_values(x_block_size=512)
    out = apply_assignment(space, {"forward.autotune_configs": (pinned,)})
    assert '], ["x_size"])' in out and "@util.autotune(softmax_configs()" not in out
    launches = list(capture(write(tmp_path, path.name, out), stand_ins=False).values())[-1]
    assert {next(a["value"] for a in launch["args"] if a["name"] == "x_block_size") for launch in launches} == {512}


def test_a_launch_wrapped_for_torch_compile_is_found_and_its_grid_follows(tmp_path):
    path = STYLES / "triton_op_add.py"
    space, _ = captured_space(path)
    [site] = space.sites
    block = space.get("add_kernel.BLOCK_SIZE")
    assert block.free and block.current == 64
    source = path.read_text()
    out = apply_assignment(space, {"add_kernel.BLOCK_SIZE": 1024})
    assert changed_lines(source, out) == [
        "wrap_triton(add_kernel)[(triton.cdiv(n_elements, 1024),)](x, y, out, n_elements, BLOCK_SIZE=1024)"]


def test_an_entry_bound_to_an_autograd_functions_apply_is_followed(tmp_path):
    path = CORPUS / "layernorm_function_apply.py"
    assert ProblemModule(path).param_names == ["x", "normalized_shape", "weight", "bias", "eps"]
    space, _ = captured_space(path)
    [site] = space.sites
    assert site.via == ("layer_norm",) and site.kernel == "_ln_forward"
    warps = space.get("_ln_forward.num_warps")
    assert warps.free and warps.per_case == {"M=5, N=300": 2, "M=3, N=1000": 4}
    source = path.read_text()
    out = apply_assignment(space, {"_ln_forward.num_warps": 8})
    assert changed_lines(source, out) == ["num_warps = min(max(BLOCK // 128, 1), 8)"]
    new = write(tmp_path, "layernorm_function_apply.py", out)
    assert received(new)["num_warps"] == 8 and received(new, 0)["num_warps"] == 4  # still a function of the block


def test_a_block_and_a_flag_computed_from_it_are_two_values(tmp_path):
    # row_one_pass passes a block and a flag computed from it (`n_cols <= block`): both read
    # the same cap, and were once taken for one tunable, shown with the block's value.
    from tritonforge.strategies.recipes.row_one_pass import RowOnePass

    problem = ROOT / "examples" / "softmax.py"
    rewrite = tmp_path / "softmax.py"
    rewrite.write_text(RowOnePass().rewrite(problem.read_text(), "softmax").source)
    space, _ = captured_space(rewrite)
    [site] = space.sites
    block, flag = (space.get(site.bindings[p]) for p in ("BLOCK", "ROW_ONE_PASS"))
    assert block.id != flag.id
    assert flag.current is True and isinstance(block.current, int) and block.current > 1


def test_a_grid_returned_by_a_helper_follows_the_block_it_returns(tmp_path):
    # `grid, block, warps = _plan(n)`: the grid's `cdiv(n, 64)` is found by replaying the grid
    # and tied to the block; moved alone, a smaller block left programs without work.
    path = STYLES / "plan_helper.py"
    space, _ = captured_space(path)
    block = space.get("cube_kernel.BLOCK")
    assert block.free and block.per_case == {"n=300": 32, "n=3000": 64}
    source = path.read_text()
    for value in (16, 256):
        out = apply_assignment(space, {"cube_kernel.BLOCK": value})
        assert changed_lines(source, out) == [f"return (triton.cdiv(n, {value}),), {value}, 2"]
        got = received(write(tmp_path, "plan_helper.py", out))
        assert got["BLOCK"] == value and got["grid"][0] == -(-3000 // value)
        assert received(write(tmp_path, "plan_helper.py", out), 0)["BLOCK"] == 32  # the small case's branch


def test_a_parameter_its_launcher_falls_back_from_is_moved_at_the_fallback(tmp_path):
    # `block = block or 32` in a helper called without `block`: captured after the fallback
    # ran, the value once read no literal; replayed from the parameter's default it reads 32.
    path = STYLES / "optional_block.py"
    space, _ = captured_space(path)
    assert space.get("exp_kernel.BLOCK").free and space.get("exp_kernel.num_warps").free
    source = path.read_text()
    out = apply_assignment(space, {"exp_kernel.BLOCK": 256, "exp_kernel.num_warps": 4})
    assert changed_lines(source, out) == ["block = block or 256", "num_warps = 4"]
    got = received(write(tmp_path, "optional_block.py", out))
    assert (got["BLOCK"], got["num_warps"], got["grid"][0]) == (256, 4, -(-1100 // 256))
    # Where the caller passes the value, the fallback is not taken and its literal not moved.
    passed = source.replace("_launch(x, out)", "_launch(x, out, block=64)")
    space, _ = captured_space(write(tmp_path, "optional_block.py", passed))
    assert not space.get("exp_kernel.BLOCK").free and "no integer literal decides it" in space.get("exp_kernel.BLOCK").why


def test_a_case_that_takes_another_branch_gets_its_own_value_to_move(tmp_path):
    # `cfg = _SMALL if n <= 512 else _LARGE`: moves aimed at the dominant (last) case edit
    # _LARGE only; the small case's value is a tunable of its own, moved in _SMALL.
    path = STYLES / "size_keyed_configs.py"
    space, _ = captured_space(path)
    large, small = space.get("softsign_kernel.BLOCK"), space.get("softsign_kernel.BLOCK@n=300")
    assert (large.current, small.current) == (64, 32) and large.free and small.free
    assert "on n=300" in small.why
    source = path.read_text()
    out = apply_assignment(space, {"softsign_kernel.BLOCK@n=300": 256, "softsign_kernel.num_warps@n=300": 4})
    assert changed_lines(source, out) == ['_SMALL = {"BLOCK": 256, "num_warps": 4}']
    new = write(tmp_path, "size_keyed_configs.py", out)
    assert (received(new, 0)["BLOCK"], received(new, 0)["num_warps"], received(new)["BLOCK"]) == (256, 4, 64)
    assert received(new, 0)["grid"][0] == -(-300 // 256)  # the grid reads the same entry
    out = apply_assignment(space, {"softsign_kernel.BLOCK": 512})
    assert changed_lines(source, out) == ['_LARGE = {"BLOCK": 512, "num_warps": 2}']
    # The report shows the branch beside the dominant case's value.
    from tritonforge.report.launch_parameters import launch_parameters
    from tritonforge.strategies.launch.strategy import space_record

    rows = launch_parameters(space_record(space), "")["sites"][0]["parameters"]
    assert {r["parameter"]: r["value"] for r in rows if r["parameter"].startswith("BLOCK")} == {
        "BLOCK": 64, "BLOCK@n=300": 32}


def test_a_power_of_two_made_by_bit_length_is_moved_by_its_shift_not_its_rounding(tmp_path):
    # `min(1 << (N - 1).bit_length(), 8192)`: replayed through int.bit_length; the 1 of
    # `N - 1` is rounding and is never edited (`N - 64` would give 64 on one size only).
    path = STYLES / "bit_length_block.py"
    space, _ = captured_space(path)
    block = space.get("row_sumsq_kernel.BLOCK")
    assert block.free and block.current == 128
    source = path.read_text()
    out = apply_assignment(space, {"row_sumsq_kernel.BLOCK": 1024})
    assert "BLOCK = min(8 << (N - 1).bit_length(), 8192)" in changed_lines(source, out)
    assert received(write(tmp_path, "bit_length_block.py", out))["BLOCK"] == 1024


def test_an_environment_variables_default_is_moved_and_stays_a_string(tmp_path, monkeypatch):
    monkeypatch.delenv("MYLIB_BLOCK", raising=False)
    path = STYLES / "env_block.py"
    space, _ = captured_space(path)
    assert space.get("sigmoid_kernel.BLOCK").free and space.get("sigmoid_kernel.num_warps").free
    source = path.read_text()
    out = apply_assignment(space, {"sigmoid_kernel.BLOCK": 2048, "sigmoid_kernel.num_warps": 8})
    assert changed_lines(source, out) == ['BLOCK = int(os.environ.get("MYLIB_BLOCK", "2048"))',
                                          'NUM_WARPS = int(os.environ.get("MYLIB_NUM_WARPS", "8"))']
    got = received(write(tmp_path, "env_block.py", out))
    assert (got["BLOCK"], got["num_warps"]) == (2048, 8)
    # Set in the environment, the value is the user's: nothing in the file gives it.
    monkeypatch.setenv("MYLIB_BLOCK", "256")
    space, _ = captured_space(path)
    block = space.get("sigmoid_kernel.BLOCK")
    assert not block.free


def test_an_entry_parameter_rebound_to_its_fallback_starts_from_its_default(tmp_path):
    # `block_size = block_size or _default_block(n_cols)` in the entry (probe round 18): the
    # capture shows the rebound value, so replay read it as a run-time argument and nothing moved.
    path = STYLES / "entry_param_fallback.py"
    source = path.read_text()
    runtime = Runtime.from_records(capture(path), None, source_key(source), 1)
    space = SearchSpace.from_source(source, "row_max", runtime)
    assert space.get("_row_max_kernel.BLOCK_SIZE").free
    out = apply_assignment(space, {"_row_max_kernel.BLOCK_SIZE": 256})
    assert changed_lines(source, out) == ["return min(triton.next_power_of_2(n_cols), 256)"]
    assert received(write(tmp_path, path.name, out))["BLOCK_SIZE"] == 256


def test_an_entry_default_no_case_passes_is_moved_and_one_a_case_passes_is_not(tmp_path):
    path = STYLES / "entry_keyword_defaults.py"  # `def softplus(x, block=512, num_warps=4)`
    source = path.read_text()
    records = capture(path)
    passing = {1: ("softplus_kernel.BLOCK", "softplus_kernel.num_warps"), 2: ("softplus_kernel.num_warps",)}
    for passed, free in passing.items():
        runtime = Runtime.from_records(records, None, source_key(source), passed)
        space = SearchSpace.from_source(source, "softplus", runtime)
        assert {t.id for t in space.tunables if t.id != "softplus_kernel.num_stages"} == set(free)
    space = SearchSpace.from_source(source, "softplus", Runtime.from_records(records, None, source_key(source), 1))
    out = apply_assignment(space, {"softplus_kernel.BLOCK": 1024, "softplus_kernel.num_warps": 8})
    assert changed_lines(source, out) == ["def softplus(x, block=1024, num_warps=8):"]
    got = received(write(tmp_path, "entry_keyword_defaults.py", out))
    assert (got["BLOCK"], got["num_warps"], got["grid"][0]) == (1024, 8, 3)


def test_an_enum_members_value_is_moved_in_the_class_body(tmp_path):
    # `tile = Tile.LARGE if n > 4096 else Tile.SMALL`, launched with `BLOCK=tile.value`.
    path = STYLES / "enum_tile.py"
    space, _ = captured_space(path)
    assert space.get("square_kernel.BLOCK").current == 1024 and space.get("square_kernel.BLOCK@n=3000").current == 128
    source = path.read_text()
    out = apply_assignment(space, {"square_kernel.BLOCK": 2048})
    assert changed_lines(source, out) == ["LARGE = 2048"]
    got = received(write(tmp_path, "enum_tile.py", out))
    assert (got["BLOCK"], got["grid"][0]) == (2048, -(-5000 // 2048))
    as_int = source.replace("class Tile(Enum):", "class Tile(IntEnum):").replace("from enum import Enum",
                                                                                  "from enum import IntEnum")
    as_int = as_int.replace("tile.value", "tile")  # an IntEnum member is its value
    space, _ = captured_space(write(tmp_path, "enum_int.py", as_int))
    assert space.get("square_kernel.BLOCK").free and space.get("square_kernel.BLOCK").current == 1024


def test_a_match_statement_is_replayed_and_the_case_it_takes_is_moved(tmp_path):
    # `match n: case _ if n < 1024: BLOCK, warps = 128, 2 ...`: the arm the dominant case
    # takes is edited, the literal that is the value first (not the guard that sends it elsewhere).
    path = STYLES / "match_block.py"
    space, _ = captured_space(path)
    assert (space.get("clamp_kernel.BLOCK").current, space.get("clamp_kernel.BLOCK@n=1000").current) == (256, 128)
    source = path.read_text()
    out = apply_assignment(space, {"clamp_kernel.BLOCK": 1024, "clamp_kernel.num_warps": 8})
    assert changed_lines(source, out) == ["BLOCK, warps = 1024, 8"]
    got = received(write(tmp_path, "match_block.py", out))
    assert (got["BLOCK"], got["num_warps"], got["grid"][0]) == (1024, 8, 3)
    assert received(write(tmp_path, "match_block.py", out), 0)["BLOCK"] == 128  # the small case's arm


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="the CPU branch is the one taken here")
def test_a_value_chosen_by_the_device_is_moved_in_the_branch_this_device_takes():
    # `2048 if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9 else 256`:
    # replay asks CUDA as the capture did (no GPU here: the CPU branch).
    path = STYLES / "device_branch.py"
    space, _ = captured_space(path, stand_ins=False)
    block = space.get("row_absmax_kernel.BLOCK")
    assert block.free and block.current == 256
    out = apply_assignment(space, {"row_absmax_kernel.BLOCK": 1024})
    assert changed_lines(path.read_text(), out) == [
        "BLOCK = 2048 if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9 else 1024"]


def test_a_heuristic_given_by_a_named_function_is_moved_in_its_return(tmp_path):
    path = STYLES / "heuristic_function.py"  # @triton.heuristics({"BLOCK": _block_for})
    space, _ = captured_space(path)
    assert space.get("row_sum_kernel.BLOCK").free
    out = apply_assignment(space, {"row_sum_kernel.BLOCK": 256})
    assert changed_lines(path.read_text(), out) == ['return min(triton.next_power_of_2(args["n"]), 256)']
    assert received(write(tmp_path, "heuristic_function.py", out))["BLOCK"] == 256


def test_a_fixed_value_read_beside_a_moved_one_keeps_its_value():
    # `VEC = 16 // x.element_size()` is no tile (not moved); `BLOCK = VEC * 32 * num_warps`
    # moves by its 32, never by the 16 that VEC reads too.
    path = STYLES / "vec_from_element_size.py"
    space, _ = captured_space(path)
    assert not space.get("affine_kernel.VEC").free
    source = path.read_text()
    assert changed_lines(source, apply_assignment(space, {"affine_kernel.BLOCK": 1024})) == [
        "BLOCK = VEC * 64 * num_warps"]
    assert changed_lines(source, apply_assignment(space, {"affine_kernel.num_warps": 8})) == [
        "num_warps = 8", "BLOCK = VEC * 16 * num_warps"]


def test_a_value_computed_from_a_moved_block_follows_it(tmp_path):
    # `BLOCK2 = triton.next_power_of_2(cdiv(n, BLOCK))` beside `BLOCK = 1024`: every BLOCK
    # move had been refused for changing BLOCK2 ("no single literal edit gives 8").
    path = STYLES / "chained_blocks.py"
    space, _ = captured_space(path)
    follower = space.get("final_sum_kernel.BLOCK2")
    assert not follower.free and follower.why.startswith("computed from partial_abs_sum_kernel.BLOCK")
    out = apply_assignment(space, {"partial_abs_sum_kernel.BLOCK": 2048})
    assert changed_lines(path.read_text(), out) == ["BLOCK = 2048"]
    got = received(write(tmp_path, "chained_blocks.py", out))
    assert got["BLOCK2"] == triton_pow2(-(-5000 // 2048))


def triton_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


@pytest.mark.parametrize("name, tid, target, line", [
    ("dict_call_meta.py", "_leaky_relu_kernel.BLOCK_SIZE", 1024, "meta = dict(BLOCK_SIZE=1024, num_warps=4)"),
    ("namespace_config.py", "_matmul_kernel.BLOCK_M", 64,
     "CFG = types.SimpleNamespace(block_m=64, block_n=32, block_k=16, num_warps=4, num_stages=2)"),
    ("walrus_block.py", "_axpy_kernel.BLOCK", 2048,
     "_axpy_kernel[(triton.cdiv(n, (BLOCK := min(triton.next_power_of_2(n), 2048))),)]("),
    ("bisect_block.py", "_silu_kernel.BLOCK", 1024, "_BLOCKS = [128, 1024, 1024, 2048]"),
    ("launcher_classmethod.py", "relu_sq_kernel.BLOCK", 2048, "BLOCK_LARGE = 2048"),  # cls.BLOCK_LARGE
    ("dict_item_assign.py", "_l2norm_kernel.BLOCK", 256, '_CFG["large"] = (256, 8)'),  # filled at import
    ("tuple_spread.py", "_clamp_kernel.BLOCK", 1024, "cfg = (1024,)"),  # `*cfg` into the launch
    ("dataclass_property.py", "_gelu_kernel.BLOCK", 512, "CFG = LaunchConfig(vec=8, num_warps=2)"),  # @property
    ("config_list_next.py", "exp_kernel.BLOCK", 2048,  # next(c for c in _CONFIGS if n <= c["max_n"])
     '{"max_n": 1 << 30, "BLOCK": 2048, "num_warps": 8},'),
    ("dataclass_asdict.py", "softmax_kernel.BLOCK", 1024, "cfg = KernelCfg(BLOCK=1024, num_warps=4)"),  # **asdict
    ("partial_kernel_launch.py", "_leaky_kernel.BLOCK", 1024,  # functools.partial(kernel[grid], BLOCK=256)
     "launch = functools.partial(_leaky_kernel[grid], BLOCK=1024, num_warps=4)"),
    ("for_break_table.py", "_row_max_kernel.BLOCK", 4096,  # for ... in _TABLE: if n <= max_n: break
     "_TABLE = ((1024, 128, 2), (65536, 4096, 4), (1 << 40, 2048, 8))"),
    ("namedtuple_replace.py", "_relu_sq_kernel.BLOCK", 4096,  # BASE._replace(block=2048) if n > 4096
     "cfg = BASE._replace(block=4096) if n > 4096 else BASE"),
    ("class_dict_self.py", "_row_mean_kernel.BLOCK", 1024,  # self._CONFIGS[x.dtype], set in the class body
     "_CONFIGS = {torch.float32: (1024, 4), torch.float16: (512, 4)}"),
    # Probe round 14.
    ("getattr_fstring.py", "_unary_kernel.BLOCK", 128, "BLOCK_NEG = 128"),  # getattr(_Tiles, f"BLOCK_{...}")
    ("mappingproxy_config.py", "_hardtanh_kernel.BLOCK", 256,
     '_LAUNCH = types.MappingProxyType({"BLOCK": 256, "num_warps": 2})'),
    ("itertools_product.py", "_exp_kernel.BLOCK", 256, "_CONFIGS = list(itertools.product((32, 256, 128), (1, 2)))"),
    ("nested_inner_helper.py", "_softsign_kernel.BLOCK", 256, "return 256"),  # a helper's own helper
    ("dict_get_default.py", "_sigmoid_kernel.num_warps", 4,  # defaultdict(lambda: 2, ...)
     "_WARPS = collections.defaultdict(lambda: 4, {torch.float16: 4})"),
    ("runtime_kwargs_dict.py", "_mish_kernel.BLOCK", 256, 'kwargs["BLOCK"] = 256'),  # filled, then **kwargs
    # Probe round 15.
    ("device_name_table.py", "_silu_kernel.BLOCK", 512,  # next(..., (128, 2)) over _TUNED.items()
     "block, warps = next((v for k, v in _TUNED.items() if k in name), (512, 2))"),
    ("module_property_block.py", "_bias_tanh_kernel.BLOCK", 256, "return 128 if self.wide else 256"),  # @property
    ("init_fallback_config.py", "_neg_kernel.BLOCK_SIZE", 512,  # a plain class's __init__
     "self.block_size = block_size if block_size is not None else 512"),
    ("dict_merge_overrides.py", "_softsign_kernel.BLOCK_SIZE", 512,  # {**_BASE, **_OVERRIDES.get(...)}
     '_BASE_CONFIG = {"BLOCK_SIZE": 512, "num_warps": 4}'),
    ("lazy_global_config.py", "_residual_kernel.BLOCK_SIZE", 512,  # `if _CONFIG is None: _CONFIG = {...}`
     '_CONFIG = {"BLOCK_SIZE": 512, "num_warps": 2}'),
    ("dispatch_dict_kernels.py", "_sq_kernel.BLOCK", 512, '"square": (_sq_kernel, 512),'),  # (kernel, block) pairs
    # Probe round 16.
    ("str_dtype_key.py", "_rms_norm_kernel.BLOCK_N", 128,  # _CONFIGS[str(x.dtype).split(".")[-1]]
     '"float32": {"BLOCK_N": 128, "num_warps": 1},'),
    ("heuristics_registry.py", "softmax_kernel.TILE_N", 32,  # @triton.heuristics(HEURISTICS["softmax"])
     'return min(triton.next_power_of_2(args["N"]), 32)'),
    ("heuristics_registry.py", "softmax_kernel.num_warps", 2,  # "num_warps": a heuristic of its own
     'return 4 if args["TILE_N"] >= 1024 else 2'),
    ("config_attrs.py", "_row_sum_kernel.BLOCK", 64,  # cfg = _CONFIGS[0]; cfg.kwargs["BLOCK"]
     'triton.Config({"BLOCK": 64}, num_warps=1, num_stages=2),'),
    ("config_attrs.py", "_row_sum_kernel.num_warps", 4,  # cfg.num_warps
     'triton.Config({"BLOCK": 32}, num_warps=4, num_stages=2),'),
    ("stored_launcher.py", "_sqdiff_kernel.BLOCK_SIZE", 256, "BLOCK_SIZE = 256"),  # launch = kernel[grid]
    ("version_branch.py", "_scale_tokens_kernel.BLOCK_N", 128, "_BLOCK_N = 128"),  # if triton.__version__ >= ...
    ("subclass_override.py", "_gelu_kernel.BLOCK_SIZE", 256, "BLOCK_SIZE = 256"),  # a subclass's class attribute
    ("subclass_super_call.py", "_gelu_kernel.num_warps", 4, "NUM_WARPS = 4"),  # through super().__call__(x)
    ("max_key_config.py", "_softmax_kernel.BLOCK_SIZE", 1024,  # min([c for c in ... if ...], key=lambda c: ...)
     '{"BLOCK_SIZE": 1024, "num_warps": 2},'),
    ("dataclass_factory_field.py", "_leaky_relu_kernel.BLOCK", 256,  # **self.cfg.launch, a default_factory
     'launch: dict = field(default_factory=lambda: {"BLOCK": 256, "num_warps": 2})'),
    ("staticmethod_entry.py", "_swish_kernel.BLOCK", 256, "BLOCK = 256"),  # swish = SwishOps.forward
    ("hip_flag_block.py", "_gelu_tanh_kernel.BLOCK", 256,  # _is_hip = torch.version.hip is not None
     "BLOCK = 128 if _is_hip else 256"),
    ("record_method_spread.py", "_tanh_kernel.num_warps", 4,  # **TILING.meta(), a NamedTuple's method
     "TILING = Tiling(block=32, warps=4)"),
    ("work_items_loop.py", "_scale_kernel.BLOCK", 256,  # for src, dst, block in work: one launch per item
     "work = [(a, out_a, 256), (b, out_b, 256)]"),
    ("zip_dict_tiles.py", "_row_sum_kernel.BLOCK_N", 256,  # **dict(zip(_KEYS, _TILES[x.dtype]))
     "torch.float32: (2, 256, 1),"),
    ("contextvar_block.py", "_silu_kernel.BLOCK", 256,  # BLOCK = _BLOCK.get() of a ContextVar's default
     '_BLOCK = contextvars.ContextVar("silu_block", default=256)'),
    ("nested_unpack_tiles.py", "_row_scale_kernel.BLOCK_N", 128,  # (BLOCK_M, BLOCK_N), warps = _pick(M, N)
     "return (32, 128), 4"),
    ("dict_spread_base.py", "_fused_add_mul_kernel.num_warps", 8,  # dict(**_BASE_KWARGS, BLOCK_SIZE=block)
     "_BASE_KWARGS = dict(num_warps=8, num_stages=2)"),
    ("record_through_helpers.py", "_sq_relu_kernel.BLOCK", 1024,  # a factory's record passed down two helpers
     "return KernelConfig(block_size=1024, num_warps=4)"),
    ("torch_ops_custom_op.py", "_fake_quant_kernel.BLOCK_SIZE", 1024,  # torch.ops.NS.NAME(...) of a custom_op
     "_BLOCK_SIZE = 1024"),
    ("vllm_library_op.py", "_rms_norm_kernel.BLOCK_SIZE", 1024,  # an op registered by Library(...).impl
     "BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 1024)"),
    ("module_instance_override.py", "_leaky_relu_kernel.BLOCK_SIZE", 512,  # `_op = Op(block_size=128)` overrides
     "_op = LeakyReLU(slope=0.01, block_size=512)"),  # the class attribute in __init__
    # Probe round 20.
    ("mapping_subclass_cfg.py", "_gelu_fast_kernel.BLOCK_SIZE", 512,  # **CFG, a collections.abc.Mapping
     "CFG = LaunchConfig(BLOCK_SIZE=512, num_warps=4)"),
    ("mapping_subclass_cfg.py", "_gelu_fast_kernel.num_warps", 8,  # each key charged its own literal
     "CFG = LaunchConfig(BLOCK_SIZE=128, num_warps=8)"),
    ("globals_get_block.py", "_row_abs_sum_kernel.BLOCK", 256, "ROW_BLOCK = 256"),  # globals().get(NAME, 128)
    ("globals_get_block.py", "_row_abs_sum_kernel.num_warps", 4,  # a name the module lacks: the default
     'warps = globals().get("ROW_WARPS", 4)'),
    ("module_getattr_dtype.py", "_neg_exp_kernel.BLOCK", 512,  # getattr(sys.modules[__name__], f"BLOCK_{dt}")
     "BLOCK_float32 = 512"),
    ("next_filter_configs.py", "_square_kernel.BLOCK", 512,  # next(filter(lambda c: ..., _CONFIGS), ...)
     '{"max_n": 4096, "BLOCK": 512, "num_warps": 2},'),
    ("post_init_dataclass.py", "_rms_scale_kernel.BLOCK", 64,  # field(init=False) set by __post_init__
     "max_block: int = 64"),
    ("closure_launcher_factory.py", "_exp2_kernel.BLOCK", 1024,  # _run = _make_launcher(block=256), a closure
     "_launch_exp2 = _make_launcher(block=1024, num_warps=2)"),
    # Probe round 21.
    ("flaggems_runtime_heuristics.py", "max_kernel.BLOCK_M", 16,  # @triton.heuristics(runtime.get_heuristic_config("max"))
     'return 16 if args["M"] < 4096 else 8'),
    ("class_kernel_named_forward.py", "forward.BLOCK", 256,  # a class-body kernel named like autograd's forward
     "_DoubleKernel.forward[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)"),
    ("vllm_nearest_config.py", "_silu_kernel.BLOCK_SIZE", 1024,  # {int(k): v for k, v in _TUNED.items()}, nearest
     '"64": {"BLOCK_SIZE": 1024, "num_warps": 2},'),
])
def test_values_held_by_dict_calls_namespaces_walrus_bisect_tables_and_class_methods_move(tmp_path, name, tid, target, line):
    # Probe rounds 9 to 13: each was listed as "set at run time" or refused every move.
    path = STYLES / name
    space, _ = captured_space(path)
    assert space.get(tid).free
    out = apply_assignment(space, {tid: target})
    assert changed_lines(path.read_text(), out) == [line]
    assert received(write(tmp_path, name, out))[tid.split(".")[1]] == target


def test_a_constexpr_global_from_an_unset_environment_variable_moves_its_default(monkeypatch):
    # lightllm's `_BLOCK = tl.constexpr(int(os.getenv(NAME, "64")))` (probe round 27): each form
    # moved alone, together they were "not an integer literal".
    path = STYLES / "env_constexpr_global.py"
    space, _ = captured_space(path)
    assert space.get("_gelu_kernel._BLOCK").free
    out = apply_assignment(space, {"_gelu_kernel._BLOCK": 256})
    assert changed_lines(path.read_text(), out) == ['_BLOCK = tl.constexpr(int(os.getenv("MYLIB_GELU_BLOCK", "256")))']
    monkeypatch.setenv("MYLIB_GELU_BLOCK", "64")  # a variable that is set is the user's
    space, _ = captured_space(path)
    assert not space.get("_gelu_kernel._BLOCK").free


def test_a_launcher_called_from_two_lines_gives_each_call_its_own_values(tmp_path):
    # Two calls of one launcher helper reach the same launch line (a decode and a prefill
    # path). Matched by that line alone, both cases' launches went to the first call, whose
    # values then disagreed with them ("set elsewhere at run time"), and the second ran on
    # "no case": nothing moved. The capture now keeps the file's call lines of each launch.
    path = STYLES / "launcher_two_callers.py"
    space, _ = captured_space(path)
    decode, prefill = space.get("_gelu_and_mul_kernel.BLOCK_SIZE"), space.get("_gelu_and_mul_kernel.BLOCK_SIZE#2")
    assert decode.free and prefill.free and (decode.current, prefill.current) == (64, 256)
    assert space.get("_gelu_and_mul_kernel.num_warps#2").free
    out = apply_assignment(space, {"_gelu_and_mul_kernel.BLOCK_SIZE#2": 1024})
    assert changed_lines(path.read_text(), out) == ["return _launch(x, out, 1024, 4)"]
    moved = write(tmp_path, path.name, out)
    assert received(moved)["BLOCK_SIZE"] == 1024 and received(moved, 0)["BLOCK_SIZE"] == 64


def test_num_stages_a_mapping_spread_lacks_is_inserted_after_it(tmp_path):
    # `kernel[grid](..., **CFG)` with CFG a Mapping subclass (kernl): its keys are known only
    # when it runs, so inserting num_stages was refused as a possible clash with a key of
    # CFG, and a kernel with a loop never had its stages moved. The capture now records which
    # launch options each launch was passed; CFG passed num_warps and never num_stages.
    path = STYLES / "mapping_spread_stages.py"
    space, records = captured_space(path)
    assert all(r["given"] == ["num_warps"] for recs in records.values() for r in recs)
    stages = space.get("_row_abs_max_kernel.num_stages")
    assert stages.free and stages.current == 3 and "no key of **CFG" in stages.why
    out = apply_assignment(space, {"_row_abs_max_kernel.num_stages": 4})
    assert changed_lines(path.read_text(), out) == [
        "_row_abs_max_kernel[(rows,)](x, out, cols, x.stride(0), **CFG, num_stages=4)"]
    assert list(capture(write(tmp_path, path.name, out)).values())[-1][-1]["num_stages"] == 4


def test_a_config_picked_by_the_tensors_device_type_moves_in_the_branch_that_ran(tmp_path):
    # FlagAttention's `get_fwd_config(capability, D)`, the capability read as
    # `get_device_capability(device) if device.type == "cuda" else (0, 0)` (probe round 22):
    # a captured tensor had no device, so replay fell back to the launch's locals and every
    # value was "no integer literal decides it". Tensors now keep their device.
    path = STYLES / "flagattn_capability_config.py"
    space, _ = captured_space(path)
    assert all(space.get(f"_lse_kernel.{p}").free for p in ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages"))
    out = apply_assignment(space, {"_lse_kernel.BLOCK_N": 128})
    assert changed_lines(path.read_text(), out) == ["BLOCK_M, BLOCK_N, num_stages, num_warps = 2, 128, 1, 4"]
    assert received(write(tmp_path, path.name, out))["BLOCK_N"] == 128


def test_a_kernel_parameter_named_num_stages_is_the_launch_option_it_also_sets(tmp_path):
    # Triton's fused-softmax tutorial passes `num_stages=num_stages` to a kernel with a
    # `num_stages: tl.constexpr` parameter; Triton reads the keyword as the launch option too.
    # The capture had recorded the option as its default 3, and the report said "not passed:
    # Triton's default 3, but the launch received 4" (probe round 22).
    path = STYLES / "softmax_param_num_stages.py"
    space, records = captured_space(path)
    assert all(r["num_stages"] == 4 for recs in records.values() for r in recs)
    stages = space.get("softmax_kernel.num_stages")
    assert stages.free and stages.current == 4 and stages.kind == "num_stages"
    assert [t.id for t in space.tunables].count("softmax_kernel.num_stages") == 1
    out = apply_assignment(space, {"softmax_kernel.num_stages": 1})
    assert changed_lines(path.read_text(), out) == ["num_stages = 1 if SIZE_SMEM > 200000 else 2"]
    launch = list(capture(write(tmp_path, path.name, out)).values())[-1][-1]
    assert launch["num_stages"] == 1 and {a["name"]: a["value"] for a in launch["args"]}["num_stages"] == 1


def test_a_block_is_never_moved_below_what_the_entrys_own_guard_requires(tmp_path):
    # Triton's layer-norm tutorial: `BLOCK_SIZE = min(MAX_FUSED_SIZE, next_power_of_2(N))`,
    # then `if N > BLOCK_SIZE: raise`. BLOCK_SIZE 2048 -> 1024 was reached by lowering the cap,
    # and the candidate raised on n=1100 (probe round 22). The guard now bounds every case.
    path = STYLES / "layernorm_tutorial_guard.py"
    space, _ = captured_space(path)
    assert "raises unless BLOCK_SIZE >= N (1100" in space.get("_layer_norm_fwd_fused.BLOCK_SIZE").why
    with pytest.raises(Unreachable):
        apply_assignment(space, {"_layer_norm_fwd_fused.BLOCK_SIZE": 1024})
    unguarded = path.read_text().replace("    if N > BLOCK_SIZE:\n", "    if False:\n")
    space, _ = captured_space(write(tmp_path, path.name, unguarded))
    assert "MAX_FUSED_SIZE = 4096 //" in "\n".join(changed_lines(unguarded, apply_assignment(
        space, {"_layer_norm_fwd_fused.BLOCK_SIZE": 1024})))


def test_values_a_launcher_pops_from_its_kwargs_move_where_they_are_written(tmp_path):
    # SGLang / lightllm: `BLOCK = kwargs.pop("BLOCK", 128)` in a launcher the entry calls with
    # `num_warps=2` (probe round 23). `.pop` was not read, and the captured `kwargs` is what
    # the pops left, so replay gave the default 4 where the launch received 2.
    path = STYLES / "kwargs_pop_default.py"
    space, _ = captured_space(path)
    assert space.get("_silu_kernel.BLOCK").free and space.get("_silu_kernel.num_warps").free
    out = apply_assignment(space, {"_silu_kernel.BLOCK": 512, "_silu_kernel.num_warps": 4})
    assert changed_lines(path.read_text(), out) == ['BLOCK = kwargs.pop("BLOCK", 512)',
                                                    "return _launch_silu(x, out, num_warps=4)"]
    got = received(write(tmp_path, path.name, out))
    assert (got["BLOCK"], got["num_warps"]) == (512, 4)


def test_a_dtype_compared_with_is_takes_its_branch(tmp_path):
    # vLLM's `if q.dtype is torch.float32: BLOCK = BLOCK // 2` (probe round 21): `is` was known
    # only against None, so BLOCK was "assigned 2 times ... no integer literal decides it".
    # Captured as on a CPU (no GPU stand-ins), as the tool captures here.
    path = STYLES / "vllm_platform_block.py"
    space, _ = captured_space(path, stand_ins=False)
    block = space.get("_fwd_scale_kernel.BLOCK")
    assert block.free and block.current == 32
    out = apply_assignment(space, {"_fwd_scale_kernel.BLOCK": 16})
    assert changed_lines(path.read_text(), out) == ["BLOCK = 128 if current_platform.has_device_capability(80) else 32"]
    moved = write(tmp_path, path.name, out)
    launch = list(capture(moved, stand_ins=False).values())[-1][-1]
    assert {a["name"]: a["value"] for a in launch["args"] if a["kind"] == "constexpr"}["BLOCK"] == 16


def test_the_base_of_a_power_and_a_written_index_are_not_knobs():
    # bitsandbytes' `P2 = int(2 ** (math.ceil(math.log2(x.shape[1]))))` (probe round 21): P2 was
    # free on the literals 2 (the base) and 1 (the shape's index), and a move to 65536 wrote
    # `4 ** ...`, giving one case P2 = 1048576. P2 is a function of the shape alone.
    space, _ = captured_space(STYLES / "bnb_rowwise_p2.py")
    p2 = space.get("_quantize_rowwise.P2")
    assert not p2.free and "no integer literal decides it" in p2.why


def test_a_literal_that_divides_a_size_says_which_part_of_it():
    # Unsloth's RoPE, `calculate_settings(head_dim // 2)` (probe round 27): the 2 was the
    # block's only knob, and a move to `head_dim // 4` left half of each half-head unrotated
    # (a wrong candidate). The block is the half-head's power of two: not moved.
    space, _ = captured_space(STYLES / "unsloth_rope_groups.py")
    block = space.get("_rope_embedding.BLOCK_SIZE")
    assert not block.free and "no integer literal decides it" in block.why
    assert space.get("_rope_embedding.num_warps").free  # the helper's ladder still moves
    # A literal divided by a size is still one: mamba's `65536 // x.element_size()`.
    space, _ = captured_space(STYLES / "mamba_device_index.py")
    assert "it reads 65536 (line 31)" in space.get("_rms_norm_gated_fwd.BLOCK_N").why


def test_a_value_the_launch_did_not_receive_is_not_taken_from_the_line_that_seems_to_give_it():
    # Probe round 16: `_BLOCK_SIZE = 1024` and `_NUM_WARPS = 8`, then `set_block_size(64,
    # num_warps=1)` at import through `global`: every edit of lines 10-11 changed nothing that
    # ran, and one such no-op was kept as a 1.024x best.
    space, _ = captured_space(STYLES / "setter_global.py")
    for tid, ran in (("_exp_kernel.BLOCK_SIZE", 64), ("_exp_kernel.num_warps", 1)):
        t = space.get(tid)
        assert not t.free and t.current == ran
        assert f"but the launch received {ran} on n=1000: set elsewhere at run time" in t.why


def test_a_launch_option_a_launcher_fills_with_setdefault_is_not_inserted_again():
    # Probe round 16: `kwargs.setdefault("num_warps", 4)`, then `kernel[grid](*args, **kwargs)`:
    # num_warps was taken as not passed, and inserting `num_warps=8` raised "got multiple values".
    space, _ = captured_space(STYLES / "setdefault_launcher.py")
    warps = space.get("_relu6_kernel.num_warps")
    assert not warps.free and "kwargs['num_warps']" in warps.why
    assert space.get("_relu6_kernel.BLOCK_SIZE").free


def test_values_read_from_a_data_file_say_which_file_and_what_ran():
    # Probe round 9 (vLLM's tuned-config JSON style): not moved, as a data file is not the
    # problem file's text; the reason names the file and the values each case received.
    path = STYLES / "json_config.py"
    space, _ = captured_space(path)
    block = space.get("_row_sumsq_kernel.BLOCK_N")
    assert not block.free and block.current == 128
    assert "read at run time from json_config_tuned.json" in block.why
    assert block.why.endswith("as run: 64 on m=8, n=300, 128 on m=4, n=900")


def test_two_blocks_equal_on_the_dominant_case_stay_two_values():
    # `BLOCK = max(int(math.sqrt(n)) // 16 * 16, 16)` and `BLOCK_P2=triton.next_power_of_2(BLOCK)`
    # are both 16 on the dominant case: the grid's `cdiv(n, BLOCK)` had tied both to one value,
    # reported under BLOCK's name with BLOCK's values (probe round 13).
    space, _ = captured_space(STYLES / "sqrt_block_p2.py")
    [site] = space.sites
    assert site.bindings["BLOCK"] == "_affine_kernel.BLOCK" and site.bindings["BLOCK_P2"] == "_affine_kernel.BLOCK_P2"
    assert space.get("_affine_kernel.BLOCK_P2").per_case == {"n=1000": 16, "n=3000": 64, "n=100": 16}


def test_a_default_named_by_a_constant_says_the_constants_line():
    # `DEFAULT_BLOCK = 256` (line 10), `def row_sumsq(x, block=DEFAULT_BLOCK, ...)` (line 24): the
    # reason named the def's line, where nothing is edited (probe round 13).
    path = STYLES / "default_from_constant.py"
    source = path.read_text()
    runtime = Runtime.from_records(capture(path), None, source_key(source), 1)
    block = SearchSpace.from_source(source, "row_sumsq", runtime).get("_row_sumsq_kernel.BLOCK")
    assert block.free and block.why == "block = DEFAULT_BLOCK = 256 (line 10)"


def test_an_entry_made_by_functools_partial_moves_the_defaults_no_one_passes(tmp_path):
    # `gelu_tanh = functools.partial(_pointwise, approximate="tanh")` (probe round 16): "no Triton
    # launch was found from the entry". The partial's keyword is its own; the defaults neither
    # it nor any case passes are settings of the file.
    path = STYLES / "partial_entry.py"
    source = path.read_text()
    runtime = Runtime.from_records(capture(path), None, source_key(source), 1)
    space = SearchSpace.from_source(source, "gelu_tanh", runtime)
    assert space.get("_gelu_kernel.BLOCK").free and space.get("_gelu_kernel.num_warps").free
    out = apply_assignment(space, {"_gelu_kernel.BLOCK": 512})
    assert changed_lines(source, out) == ['def _pointwise(x, approximate="none", block_size=512, num_warps=2):']
    assert received(write(tmp_path, "partial_entry.py", out))["BLOCK"] == 512


def test_a_dict_bound_in_two_branches_says_its_keys():
    # vLLM's `extra_kargs = {}`, or `{"waves_per_eu": 2}` on ROCm, spread last (probe round 15):
    # num_stages was "set at run time ... may come from **extra_kargs, whose keys the file does
    # not say", though neither dict has it.
    space, _ = captured_space(STYLES / "hip_extra_kwargs.py")
    stages = space.get("_quick_gelu_kernel.num_stages")
    assert "whose keys the file does not say" not in stages.why
    assert stages.current == 3 and space.get("_quick_gelu_kernel.BLOCK").free


def test_a_kernel_picked_per_case_from_a_table_has_its_block_read_where_it_runs():
    # `kernel, block = _ACTIVATIONS[act]` (probe round 15): "no launch site in the problem
    # file"; each kernel's block is now read on the cases that launch it.
    space, _ = captured_space(STYLES / "dispatch_dict_kernels.py")
    relu, square = space.get("_relu_kernel.BLOCK"), space.get("_sq_kernel.BLOCK")
    assert relu.free and relu.current == 64 and square.free and square.current == 128
    assert not [t for t in space.tunables if "@" in t.id]  # one value per kernel, no branch copies


def test_an_instance_attribute_set_where_replay_cannot_follow_is_unknown_not_stale():
    source = ("class Cfg:\n    def __init__(self, n):\n        self.block = 64\n"
              "        for _ in range(n):\n            self.block = self.block * 2\n"
              "        self.warps = 4\n")
    assert evaluate(source, "Cfg(3).block", None, {})[0] is UNKNOWN
    assert evaluate(source, "Cfg(3).warps", None, {})[0] == 4


def test_a_value_looked_up_by_another_never_costs_a_candidate_its_table_lacks(tmp_path):
    # `num_warps = _WARPS_FOR_BLOCK[BLOCK]` (probe round 18): BLOCK moved to 256, a key the
    # table lacks, was written anyway (the failed look-up fell back to the captured 1) and the
    # candidate died with KeyError: 256. The table's keys are compared, not settings.
    path = STYLES / "warps_table_by_block.py"
    space, _ = captured_space(path)
    warps = space.get("_mul_add_kernel.num_warps")
    assert warps.free and "128 (line 10)" not in warps.why
    with pytest.raises(Unreachable):
        apply_assignment(space, {"_mul_add_kernel.BLOCK": 256})
    out = apply_assignment(space, {"_mul_add_kernel.BLOCK": 128, "_mul_add_kernel.num_warps": 4})
    assert changed_lines(path.read_text(), out) == ["BLOCK = 128"]  # the table's own row
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 128


def test_work_items_that_differ_are_not_moved_by_their_first(tmp_path):
    # `for src, dst, block in [(a, out_a, 32), (b, out_b, 64)]`: the launch site is matched to
    # the first item's launch; moving its 32 alone would move one launch of two.
    path = write(tmp_path, "work_items_loop.py",
                 (STYLES / "work_items_loop.py").read_text().replace("(b, out_b, 32)", "(b, out_b, 64)"))
    space, _ = captured_space(path)
    assert not space.get("_scale_kernel.BLOCK").free


def test_launchers_in_a_dispatch_table_move_where_they_ran(tmp_path):
    # `_LAUNCH[x.dtype](x, out, n)`, a dict of lambdas that launch (probe round 17): "no launch
    # site in the problem file". The cases are fp32: the fp16 launcher never runs, and a move of
    # it would be a candidate that changes nothing timed.
    path = STYLES / "dispatch_lambdas.py"
    space, _ = captured_space(path)
    assert space.get("_exp2_kernel.BLOCK").free
    assert "ran on no case" in space.get("_exp2_kernel.BLOCK#2").why
    out = apply_assignment(space, {"_exp2_kernel.BLOCK": 256})
    assert changed_lines(path.read_text(), out) == [
        "torch.float32: lambda x, out, n: _exp2_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256, num_warps=1),"]
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 256


def test_a_launcher_written_first_that_never_runs_does_not_take_the_launch_of_the_next(tmp_path):
    # Launches are matched to sites by the line that made them: with the fp16 launcher written
    # first, the fp32 launch is still the fp32 launcher's (in call order it was the fp16 one's,
    # which then disagreed with it, and the fp32 values were left unmoved).
    lines = (STYLES / "dispatch_lambdas.py").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "torch.float32: lambda" in line)
    lines[at], lines[at + 1] = lines[at + 1], lines[at]
    space, _ = captured_space(write(tmp_path, "dispatch_lambdas.py", "\n".join(lines) + "\n"))
    assert "ran on no case" in space.get("_exp2_kernel.BLOCK").why
    assert space.get("_exp2_kernel.BLOCK#2").free


def test_sites_of_one_kernel_are_matched_to_their_launches_by_line(tmp_path):
    # A decode-batch site written before the site every case takes: the first site ran on no
    # case, and the second's computed block is replayed from its own launches.
    path = STYLES / "batch_size_sites.py"
    space, _ = captured_space(path)
    assert "ran on no case" in space.get("_l2norm_kernel.BLOCK").why
    assert "ran on no case" in space.get("_l2norm_kernel.num_warps").why
    block = space.get("_l2norm_kernel.BLOCK#2")
    assert block.free and block.current == 256 and block.replayed is not None
    out = apply_assignment(space, {"_l2norm_kernel.BLOCK#2": 512})
    assert changed_lines(path.read_text(), out) == ["block = min(triton.next_power_of_2(n_cols), 512)"]
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 512


def test_a_value_set_elsewhere_at_one_site_leaves_another_that_never_ran_unmoved(tmp_path):
    # Matched by line, a site's disagreement with its launch (num_warps rebound at import) is
    # no sign that launches were matched to the wrong sites: the decode site still never ran.
    source = (STYLES / "batch_size_sites.py").read_text().replace(
        "DECODE_ROWS = 16\n", "DECODE_ROWS = 16\n_WARPS = 4\n\n\ndef set_warps(w):\n    global _WARPS\n"
        "    _WARPS = w\n\n\nset_warps(8)\n").replace("BLOCK=block, num_warps=4)", "BLOCK=block, num_warps=_WARPS)")
    space, _ = captured_space(write(tmp_path, "batch_size_sites.py", source))
    assert "the launch received 8" in space.get("_l2norm_kernel.num_warps#2").why
    assert "ran on no case" in space.get("_l2norm_kernel.BLOCK").why


def test_a_launcher_a_helper_caches_is_found_from_the_call_that_launched(tmp_path):
    # SGLang style (probe round 18): `_LAUNCHERS[key] = (kernel[grid], block, 4)` filled on a
    # miss, then `launch, block, warps = _get_launcher(x.dtype)`: "no launch of it was traced".
    path = STYLES / "cached_launcher.py"
    space, _ = captured_space(path)
    (site,) = space.sites
    assert site.grid == "<grid made at run time>"
    assert space.get("_scaled_tanh_kernel.BLOCK").free and space.get("_scaled_tanh_kernel.num_warps").free
    out = apply_assignment(space, {"_scaled_tanh_kernel.BLOCK": 1024})
    assert changed_lines(path.read_text(), out) == ["block = 1024 if dtype == torch.float32 else 512"]
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 1024
    out = apply_assignment(space, {"_scaled_tanh_kernel.num_warps": 8})
    assert changed_lines(path.read_text(), out) == ["_LAUNCHERS[key] = (_scaled_tanh_kernel[grid], block, 8)"]


def test_kernel_run_is_read_from_the_call_that_launched(tmp_path):
    path = STYLES / "run_api.py"  # `_gate_kernel.run(x, y, out, n, BLOCK=256, grid=grid, warmup=False, ...)`
    space, _ = captured_space(path)
    assert space.get("_gate_kernel.BLOCK").free  # the grid is a lambda of meta: it follows BLOCK
    out = apply_assignment(space, {"_gate_kernel.BLOCK": 1024, "_gate_kernel.num_stages": 2})
    assert changed_lines(path.read_text(), out) == [
        "_gate_kernel.run(x, y, out, n, BLOCK=1024, grid=grid, warmup=False, num_warps=4, num_stages=2)"]
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 1024


def test_a_block_beside_a_grid_sized_out_of_sight_is_not_moved():
    # The helper's grid divides by its own 512: moving BLOCK alone would leave elements unread.
    space, _ = captured_space(STYLES / "returned_launcher.py")
    block = space.get("_softsign_kernel.BLOCK")
    assert not block.free and "grid is made where launch analysis cannot see it" in block.why
    assert space.get("_softsign_kernel.num_warps").free


def test_a_backward_run_by_autograd_is_followed_and_reads_what_forward_saved_on_ctx(tmp_path):
    # Liger / fla style (probe round 18): `y.backward(dy)` after `Cls.apply(x)`; forward sets
    # `ctx.BLOCK_SIZE = BLOCK_SIZE`, backward launches with it. The backward kernel was unreached.
    path = STYLES / "autograd_backward_ctx.py"
    source = path.read_text()
    runtime = Runtime.from_records(capture(path), None, source_key(source), 2)
    space = SearchSpace.from_source(source, "softplus_grad", runtime)
    assert [s.function for s in space.sites] == ["SoftplusFunction.forward", "SoftplusFunction.backward"]
    assert "computed from _softplus_fwd.BLOCK_SIZE" in space.get("_softplus_bwd.BLOCK_SIZE").why  # it follows
    assert space.get("_softplus_bwd.num_stages").free
    out = apply_assignment(space, {"_softplus_fwd.BLOCK_SIZE": 512})
    assert changed_lines(source, out) == ["BLOCK_SIZE = 512"]
    assert received(write(tmp_path, path.name, out))["BLOCK_SIZE"] == 512  # the last launch is backward's


def test_launches_without_lines_are_matched_in_call_order():
    # Records from before lines were captured, or a launch made from no site's line (a partial
    # called elsewhere): that kernel's launches stay matched in call order.
    records = capture(STYLES / "chunk_loop_tail.py")
    runtime = Runtime.from_records(records)
    sites = [("_rms_scale_kernel", 33, ()), ("_rms_scale_kernel", 36, ())]
    assert runtime.at_sites(sites).lines == {"_rms_scale_kernel": (33, 36)}
    case = list(records)[-1]
    assert runtime.at_sites(sites).launch(case, "_rms_scale_kernel", 1).values["BLOCK"] == 128
    assert runtime.at_sites(sites[:1]).lines == {}  # the tail's launches came from no site's line
    unlined = Runtime.from_records({c: [{**r, "line": None} for r in recs] for c, recs in records.items()})
    assert unlined.at_sites(sites).lines == {}
    assert unlined.at_sites(sites).launch(case, "_rms_scale_kernel", 1).values["BLOCK"] == 64


def test_a_site_after_a_loop_of_launches_gets_its_own_launch(tmp_path):
    # Full chunks of rows in a loop, then one launch for the rest: in call order the tail's site
    # was matched to the loop's second launch, and its BLOCK=128 called "set elsewhere at run time".
    path = STYLES / "chunk_loop_tail.py"
    space, _ = captured_space(path)
    loop, tail = space.get("_rms_scale_kernel.BLOCK"), space.get("_rms_scale_kernel.BLOCK#2")
    assert (loop.free, loop.current, tail.free, tail.current) == (True, 64, True, 128)
    out = apply_assignment(space, {"_rms_scale_kernel.BLOCK#2": 256})
    assert changed_lines(path.read_text(), out) == [
        "_rms_scale_kernel[(tail,)](x[done:], out[done:], n_cols, x.stride(0), BLOCK=256)"]
    assert received(write(tmp_path, path.name, out))["BLOCK"] == 256  # the last launch is the tail's


def test_a_context_variable_set_around_the_launch_is_not_moved_by_its_default(tmp_path):
    # `with block_size(64):` around the launch: the default, 32, is not what ran.
    source = (STYLES / "contextvar_block.py").read_text().replace(
        "    BLOCK = _BLOCK.get()\n", "    with block_size(64):\n        BLOCK = _BLOCK.get()\n")
    space, _ = captured_space(write(tmp_path, "contextvar_block.py", source))
    block = space.get("_silu_kernel.BLOCK")
    assert not block.free and "the launch received 64" in block.why
