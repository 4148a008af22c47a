"""Launch values set the ways real code sets them are moved by optimize, and every moved file
is judged correct (Triton's interpreter, CPU)."""

from __future__ import annotations

import pytest
import triton.language as tl

from tests.conftest import FIXTURES
from tritonforge.commands.optimize import OptimizeOptions, optimize
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.search.loop import SearchConfig
from tritonforge.store import RunStore
from tritonforge.worker.timing import TimingConfig

pytestmark = pytest.mark.slow  # whole optimize runs in the interpreter

STYLES = FIXTURES / "problems" / "styles"
# Newer Triton (3.9 here) removed block pointers: `tl.make_block_ptr` raises, tensor descriptors replace them.
NEEDS_BLOCK_POINTERS = pytest.mark.skipif("have been removed" in (tl.make_block_ptr.__doc__ or ""),
                                          reason="this Triton has removed block pointers")


@pytest.mark.parametrize("name, moved", [
    ("dict_config.py", "_CONFIGS"),  # the dict entry of the case's dtype
    ("capped_pow2.py", "BLOCK = min(triton.next_power_of_2(n_cols), "),
    ("helper_if_chain.py", "block = "),
    ("heuristic_block.py", "@triton.heuristics"),
    ("global_constexpr.py", "_BLOCK = tl.constexpr("),  # read inside the kernel, not passed
    ("generic_launcher.py", "def _launch_unary(kernel, x, "),  # the kernel is an argument
    ("class_kernel.py", "self._kernel[("),  # a static method of the class launching it
    ("dataclass_config.py", "LaunchConfig"),  # a field of a dataclass instance, or its default
    ("chunked_rows.py", "center_kernel[(rows,)]("),  # launched in a loop over chunks of rows
    ("kernel_table.py", "_KERNELS[x.dtype][("),  # one kernel per dtype, picked from a dict
    ("partial_launcher.py", "functools.partial(_launch, "),  # bound by functools.partial
    ("kwargs_forward.py", "_apply(x, out, "),  # forwarded through **kwargs
    ("jit_called.py", "softsign_kernel[("),  # `triton.jit(fn)` called, not a decorator
    ("optional_block.py", "block = block or "),  # a launcher's fallback for a value not passed
    ("bound_method_entry.py", "def __init__(self, lo, hi, block="),  # the entry is `op.forward`
    ("plan_helper.py", "return (triton.cdiv(n, "),  # grid, block and warps from one helper
    ("callable_instance.py", "scale = ScaleOp("),  # the entry is an instance whose __call__ launches
    ("bit_length_block.py", "BLOCK = min("),  # `1 << (N - 1).bit_length()`
    ("env_block.py", 'os.environ.get("MYLIB_'),  # an environment variable's default
    ("namedtuple_config.py", "_CFG = Cfg("),  # fields of a collections.namedtuple
    ("nested_class_namespace.py", "class Softplus:"),  # a class nested in a tuning namespace class
    ("namedtuple_asdict_spread.py", "BLOCK_"),  # a typing.NamedTuple spread as `**tiles._asdict()`
    ("triton_config_manual.py", "cfg = triton.Config("),  # a Config made by hand, spread by all_kwargs()
    ("entry_keyword_defaults.py", "def softplus(x, block="),  # defaults of the entry no case passes
    ("enum_tile.py", "class Tile(Enum):"),  # an Enum member's value, chosen by the size
    ("match_block.py", "BLOCK, warps = "),  # the arm of a match statement a case takes
    ("device_branch.py", "BLOCK = 2048 if torch.cuda"),  # a block chosen by the device
    ("module_dataclass_cfg.py", "self.cfg = KernelConfig("),  # a dataclass held by self
    ("class_launch_kwargs.py", "self.launch_kwargs = {"),  # **self.launch_kwargs
    ("kernel_factory_lazy.py", "_leaky_relu_kernel()[("),  # the one kernel a cached factory makes
    ("dict_call_meta.py", "meta = dict(BLOCK_SIZE="),  # a dict(...) call spread into the launch
    ("namespace_config.py", "CFG = types.SimpleNamespace("),  # fields of a SimpleNamespace
    ("walrus_block.py", "(BLOCK := min("),  # bound by := inside the grid
    ("bisect_block.py", "_BLOCKS = ["),  # a threshold table looked up with bisect
    ("chained_blocks.py", "BLOCK = "),  # a second block computed from the first follows it
    ("launcher_classmethod.py", "class ReluSq:"),  # a classmethod reading class attributes
    ("dict_item_assign.py", "_CFG["),  # a table filled by item assignment at import
    ("tuple_spread.py", "cfg = ("),  # a tuple spread positionally into the launch
    ("dataclass_property.py", "CFG = LaunchConfig("),  # a @property of a dataclass config
    ("config_list_next.py", '"BLOCK": '),  # a list of dicts searched with next()
    ("dataclass_asdict.py", "cfg = KernelCfg("),  # **dataclasses.asdict(cfg)
    ("partial_kernel_launch.py", "functools.partial(_leaky_kernel[grid], "),  # a partial of the launch
    ("for_break_table.py", "_TABLE = ("),  # a table searched by a for loop with break
    ("namedtuple_replace.py", "BASE"),  # a NamedTuple specialised with _replace
    ("class_dict_self.py", "_CONFIGS = {"),  # a class-body dict read through self
    ("getattr_fstring.py", "BLOCK_"),  # getattr(cls, f"BLOCK_{kind.upper()}")
    ("mappingproxy_config.py", "MappingProxyType"),
    ("itertools_product.py", "itertools.product"),
    ("nested_inner_helper.py", "return "),  # a helper defined inside a helper
    ("dict_get_default.py", "_BLOCKS.get(x.dtype, "),
    ("runtime_kwargs_dict.py", 'kwargs["BLOCK"] = '),  # a dict filled in the entry, then **kwargs
    ("device_name_table.py", "next((v for k, v in _TUNED.items()"),  # next's default
    ("module_property_block.py", "return 128 if self.wide else "),  # a Module's @property
    ("init_fallback_config.py", "self.block_size = "),  # a plain class's __init__
    ("dict_merge_overrides.py", "_BASE_CONFIG = "),  # {**_BASE, **_OVERRIDES.get(dtype, {})}
    ("lazy_global_config.py", "_CONFIG = {"),  # a global made on first use
    ("dispatch_dict_kernels.py", "_ACTIVATIONS = {"),  # `kernel, block = _ACTIVATIONS[act]`
    ("batch_size_sites.py", "block = min(triton.next_power_of_2(n_cols), "),  # after a site no case runs
    ("cached_launcher.py", "block = "),  # `launch, block, warps = _get_launcher(dtype)`, a cached kernel[grid]
    ("run_api.py", "_gate_kernel.run("),  # kernel.run(..., grid=grid, warmup=False)
    ("torch_ops_custom_op.py", "_BLOCK_SIZE = "),  # torch.ops.NS.NAME(...) of the file's custom_op
    ("record_through_helpers.py", "return KernelConfig("),  # a factory's record passed down two helpers
    # Configs built by code (attorch's warps_kernel_configs()) under a heuristic the first
    # round moves: the second round's best is a launch move, captured too, so its configs
    # are still read (they were "built by code, not written as a list" and the run stopped).
    ("attorch_warps_heuristics.py", "@triton.autotune(configs=["),
    ("module_instance_override.py", "_op = LeakyReLU("),  # a class attribute overridden per instance
    ("autograd_backward_ctx.py", "BLOCK_SIZE = "),  # forward's values, saved on ctx for backward's kernel
    ("mapping_subclass_cfg.py", "CFG = LaunchConfig("),  # **CFG of a collections.abc.Mapping subclass
    ("globals_get_block.py", "ROW_"),  # globals().get("ROW_BLOCK", 128)
    ("closure_launcher_factory.py", "_launch_exp2 = _make_launcher("),  # a def a factory returns, made at import
    ("launcher_two_callers.py", "return _launch(x, out, "),  # one launcher called from two lines
    ("vllm_nearest_config.py", '"64": {"BLOCK_SIZE": '),  # int-keyed by a dict comprehension, nearest key
    # Work splits the grid reads too (probe round 24): an autotuned rows-per-program factor read
    # from META, the same factor as a local constant (a persistent grid's programs per SM: below).
    ("split_rows_meta_grid.py", '"ROWS_PER_PROG": 32'),
    ("split_rows_literal_grid.py", "ROWS_PER_PROG = "),
    # Triton 3.x kernel idioms (probe round 25): tiles given only as a block pointer's
    # block_shape, a chunk count that follows the block's cap, configs a helper returns with
    # pre_hooks (xformers' get_configs()).
    pytest.param("block_ptr_tile_scale.py", "BLOCK_M, BLOCK_N = ", marks=NEEDS_BLOCK_POINTERS),
    pytest.param("block_ptr_matmul.py", "BLOCK_M, BLOCK_N, BLOCK_K = ", marks=NEEDS_BLOCK_POINTERS),
    ("static_range_chunks.py", "MAX_FUSED_SIZE = "),
    ("splitk_pre_hook_helper.py", '"SPLIT_K": '),
    # Probe round 26: a chunk count written as `div, mod = divmod(V, MAX_FUSED_SIZE)`,
    # `div + (mod != 0)` (unsloth's cross entropy), which follows the block's move.
    ("divmod_chunks.py", "MAX_FUSED_SIZE = "),
    # A tile cap from an if/elif chain on a device query (fla's check_shared_mem tiers): the
    # branch the capture saw, told by its value, has its literal edited.
    ("fla_shared_mem_tiers.py", "CONST_TILING = "),
    # `triton.autotune(...)(triton.heuristics(...)(kernel))` bound at module level.
    ("autotune_call_wrapper.py", "triton.Config("),
    # `with torch.cuda.device(x.device.index):` around the launch (mamba's layernorm_gated),
    # harmless in the interpreter, with the block capped by the element size.
    ("mamba_device_index.py", "num_warps = min(max(BLOCK_N // "),
    # `triton.autotune(...)(kernel)` made inside an lru_cache'd helper, kept in a dict (xformers).
    ("xformers_cached_autotune.py", "triton.Config("),
    ("partial_jit.py", "_square_kernel[("),  # `@_jit`, `_jit = functools.partial(triton.jit, ...)`
    # Probe round 27: an operator registered with Library("ns", "FRAGMENT").define/impl and
    # called as torch.ops.ns.op (vLLM's direct_register_custom_op); every candidate was refused.
    ("vllm_library_op.py", "BLOCK_SIZE = min("),
    # `assert BLOCK % CBLOCK == 0` beside the literals (lightning attention): no move breaks it.
    ("lightning_cblock.py", "CBLOCK = "),
    # `_BLOCK = tl.constexpr(int(os.getenv(NAME, "64")))` read in the kernel (lightllm, SGLang).
    ("env_constexpr_global.py", "_BLOCK = tl.constexpr("),
])
def test_computed_launch_values_are_moved_and_judged(tmp_path, name, moved):
    options = OptimizeOptions(out=tmp_path / "run", evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)),
                              search=SearchConfig(budget=4, minutes=None, per_round=4, patience=2))
    outcome = optimize(STYLES / name, options)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        judged = [(c, ev) for c, ev in store.judged() if c.origin != "baseline"]
        captured = store.events("captured")
    assert captured and not captured[0]["data"]["failures"]
    assert len(judged) == 4
    assert {ev["status"] for _, ev in judged} == {"correct"}  # none lost to the tool, none wrong
    source = (STYLES / name).read_text()
    rewritten = [c for c, _ in judged if any(moved in line for line in _changed(source, c.source))]
    assert rewritten, f"no candidate edited the computed value ({moved!r})"
    assert all(case["correct"] for case in outcome.summary["cases"])


def test_a_persistent_grids_program_count_moves_through_its_multiplier(tmp_path):
    # `programs = min(NUM_SMS * PROGRAMS_PER_SM, tiles)`, passed as the grid and as the constexpr
    # the tile loop steps by (probe round 24). Its moves rank after the block's long jumps, and
    # where they rank among the rest depends on the baseline's diagnosis (CI at c86dd97: none of
    # eight candidates moved it), so this run gets one round of sixteen launch-value candidates,
    # all of ring 1; none edits the stand-in `NUM_SMS = 4` of the branch taken without a GPU.
    name = "persistent_programs_per_sm.py"
    options = OptimizeOptions(out=tmp_path / "run", strategies=["launch_params"],
                              evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)),
                              search=SearchConfig(budget=16, minutes=None, per_round=16, patience=2))
    optimize(STYLES / name, options)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        judged = [(c, ev) for c, ev in store.judged() if c.origin != "baseline"]
    assert judged and {ev["status"] for _, ev in judged} == {"correct"}
    source = (STYLES / name).read_text()
    changed = [line for c, _ in judged for line in set(c.source.splitlines()) - set(source.splitlines())]
    assert any(line.startswith("PROGRAMS_PER_SM = ") for line in changed)
    assert not any("NUM_SMS = " in line for line in changed)


def _changed(before: str, after: str) -> list[str]:
    old = set(before.splitlines())
    lines = after.splitlines()
    # the changed line and the one above it (a dict entry's opening line names the dict)
    return [text for i, line in enumerate(lines) if line not in old for text in lines[max(0, i - 3):i + 1]]


@pytest.mark.gpu
def test_gpu_only_host_code_is_optimized_on_the_gpu_without_losing_candidates(tmp_path):
    options = OptimizeOptions(out=tmp_path / "run", evaluation=EvalOptions(device="cuda"),
                              search=SearchConfig(budget=6, minutes=None, per_round=6, patience=2))
    outcome = optimize(STYLES / "device_guarded.py", options)
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        judged = [ev for c, ev in store.judged() if c.origin != "baseline"]
        captured = store.events("captured")[0]["data"]
    assert captured["launches"] and not captured["failures"]
    assert judged and all(ev["status"] == "correct" for ev in judged)
    assert outcome.result.best_verdict.correct
