"""The public records of launch-site discovery: what a rewrite edits (`Span`), one autotune
config (`ConfigSpec`), one tunable value (`Tunable`), what a kernel's body says about its
constexprs (`KernelFacts`) and one launch (`LaunchSite`), with the legal ranges they obey."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tritonforge.analysis.launch_sites.runtime import ReplayedValue

# Legal ranges. tl.arange needs powers of two; Triton caps a tensor at 2**20 elements.
BLOCK_MIN = 16
BLOCK_MAX = 65536
MAX_TENSOR_NUMEL = 1 << 20
DOT_MIN = 16
WARPS = (1, 2, 4, 8, 16, 32)
STAGES = (1, 2, 3, 4, 5, 6)
DEFAULT_WARPS = 4
DEFAULT_STAGES = 3

# Roles of a constexpr inside its kernel.
TILE_ROLES = frozenset({"arange", "shape"})  # the value is a tensor dimension
DOT_ROLES = frozenset({"dot_m", "dot_n", "dot_k"})
# A loop runs to it or steps by it: with a grid that reads it too, it splits the work over programs.
SPLIT_ROLES = frozenset({"loop_bound", "loop_step"})
# `tl.range(..., num_stages=S, loop_unroll_factor=U)`: how one loop is compiled, never what it computes.
LOOP_OPTION_ROLES = {"num_stages": "loop_stages", "loop_unroll_factor": "loop_unroll"}
LOOP_HINT_ROLES = frozenset(LOOP_OPTION_ROLES.values())
UNROLLS = (1, 2, 4, 8)
CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")  # a triton.Config's own options


@dataclass(frozen=True)
class Span:
    """Source text to rewrite: 1-based lines, 0-based UTF-8 byte columns, as `ast` gives them.

    `delta`: the text written is `value + delta` (the 255 of `(n + 255) // 256`).
    `insert`: a zero-width point where `insert=value` is added as a new keyword argument;
    `lead` says whether a ", " must precede it (False when the call has no arguments).
    """

    line: int
    col: int
    end_line: int
    end_col: int
    delta: int = 0
    insert: str | None = None
    lead: bool = True

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True)
class ConfigSpec:
    """One `triton.Config`: its constexpr values, warps, stages, other keywords verbatim."""

    kwargs: tuple[tuple[str, Any], ...]
    num_warps: int | None = None  # None: not written, Triton's default
    num_stages: int | None = None
    extra: tuple[str, ...] = ()  # e.g. ("num_ctas=1",), kept as written
    text: str = field(default="", compare=False)  # as written in the file, so a kept config stays byte-identical

    @property
    def warps(self) -> int:
        return DEFAULT_WARPS if self.num_warps is None else self.num_warps

    @property
    def stages(self) -> int:
        return DEFAULT_STAGES if self.num_stages is None else self.num_stages

    def values(self) -> dict[str, Any]:
        return dict(self.kwargs)

    def flat(self) -> dict[str, Any]:
        """JSON-friendly form: {"BLOCK": 128, "num_warps": 4, "num_stages": 3}."""
        out = dict(self.kwargs)
        out["num_warps"] = self.warps
        out["num_stages"] = self.stages
        return out

    def with_values(self, **changes: Any) -> "ConfigSpec":
        kw = dict(self.kwargs)
        warps, stages = self.num_warps, self.num_stages
        for k, v in changes.items():
            if k == "num_warps":
                warps = v
            elif k == "num_stages":
                stages = v
            else:
                kw[k] = v
        return ConfigSpec(tuple(kw.items()), warps, stages, self.extra)

    @staticmethod
    def from_flat(d: dict[str, Any]) -> "ConfigSpec":
        kw = {k: v for k, v in d.items() if k not in ("num_warps", "num_stages")}
        return ConfigSpec(tuple(kw.items()), d.get("num_warps"), d.get("num_stages"))

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.kwargs] + [f"num_warps={self.warps}", f"num_stages={self.stages}"]
        return "{" + ", ".join(parts) + "}"


@dataclass
class Tunable:
    """One value that shapes one or more launches; `free` when the search may change it."""

    id: str  # "add_kernel.BLOCK_SIZE", "matmul_kernel.num_warps", "k.autotune_configs"
    kind: str  # "constexpr" | "num_warps" | "num_stages" | "autotune_configs"
    current: Any  # int, tuple[ConfigSpec, ...], or None when not known statically
    free: bool
    why: str  # where the value comes from, or why it is not free
    locations: tuple[Span, ...] = ()  # what a rewrite edits (all together)
    legal: tuple[int, ...] = ()  # allowed values (current included); () for config lists
    roles: frozenset[str] = frozenset()  # arange, shape, tile, loop_step, dot_m/n/k, ...
    feeds: tuple[str, ...] = ()  # "kernel.PARAM" it shapes, in launch order
    pairs: tuple[str, ...] = ()  # ids it forms 2D tiles with
    relations: tuple[str, ...] = ()  # constraints, in words
    # A value the host code computes: moves edit the literals it reads (see launch_sites.runtime).
    replayed: "ReplayedValue | None" = field(default=None, repr=False)

    @property
    def per_case(self) -> dict[str, Any]:
        """The value on each captured case (a computed value may follow the shape)."""
        return dict(self.replayed.per_case) if self.replayed else {}

    @property
    def kernel(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        """The parameter part of the id: "BLOCK_SIZE", "num_warps"."""
        return self.id.split(".", 1)[1].split("#", 1)[0]

    @property
    def is_block(self) -> bool:
        return self.kind == "constexpr"


@dataclass
class KernelFacts:
    """What a @triton.jit function's body says about its constexprs."""

    name: str
    line: int
    params: tuple[str, ...]
    constexprs: tuple[str, ...]
    roles: dict[str, frozenset[str]]  # of the constexprs and the globals
    tiles: tuple[tuple[str, ...], ...]  # tensor shapes with >= 2 constexpr dimensions
    dots: tuple[tuple[str | None, str | None, str | None], ...]  # (M, N, K) of each tl.dot
    autotune_keys: tuple[str, ...] = ()  # constexprs set by @triton.autotune configs
    heuristics: tuple[str, ...] = ()  # constexprs set by @triton.heuristics
    autotuned: bool = False
    # @triton.autotune(..., prune_configs_by=...): Triton prunes only a list of two or more configs
    autotune_pruned: bool = False
    has_loop: bool = False  # num_stages only pipelines loads inside loops
    globals: tuple[str, ...] = ()  # module-level `NAME = tl.constexpr(...)` the body reads
    single_tiles: tuple[tuple[str, str], ...] = ()  # (C, p): one tl.arange(0, C) masked by < p (coverage.py)
    arange_ends: tuple[str, ...] = ()  # `BLOCK // VEC` of a tl.arange(0, BLOCK // VEC): a power of two >= 1

    @property
    def has_dot(self) -> bool:
        return bool(self.dots)

    def tile_dims(self) -> set[str]:
        return {c for c, r in self.roles.items() if r & TILE_ROLES}

    def work_splits(self, grid_meta: tuple[str, ...]) -> set[str]:
        """Config keys that shape no tensor but that a loop and the grid's meta both read
        (rows per program): the grid follows them, so they may move like tiles."""
        return {k for k in grid_meta if self.roles.get(k, frozenset()) & SPLIT_ROLES and k not in self.tile_dims()}


@dataclass
class LaunchSite:
    """One `kernel[grid](...)` reachable from the entry (a helper called twice gives two)."""

    kernel: str
    line: int
    function: str  # the function whose body holds the launch
    via: tuple[str, ...]  # call chain from the entry, entry first
    grid: str  # grid expression as written at the launch
    grid_kind: str  # "tuple" | "lambda" | "call" | "other" (after following a local name)
    grid_resolved: str  # the expression a grid name stands for ("" when written inline)
    grid_meta: tuple[str, ...]  # meta["..."] keys a lambda grid reads
    args: dict[str, str]  # kernel parameter / launch option -> argument text
    bindings: dict[str, str]  # kernel parameter / "num_warps" / ... -> tunable id
    tunables: list[Tunable]
    facts: KernelFacts
    guards: tuple[str, ...] = ()  # what the launching function asserts of them (coverage.launch_guards)

    @property
    def autotuned(self) -> bool:
        return self.facts.autotuned


def is_pow2(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0
