"""The records `features_of_source` returns: one `KernelFeatures` per kernel, made of the
memory operations, dots, reductions, atomics and loops found in it and its helpers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


class _Json:
    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class MemoryOp(_Json):
    """One load or store. `masked` is true for a raw-pointer mask or a block-pointer boundary check."""
    kind: str  # "load" | "store"
    line: int
    function: str
    pointer: str  # "raw" | "block_ptr" | "tensor_descriptor"
    masked: bool
    has_other: bool = False
    boundary_check: str | None = None
    padding_option: str | None = None
    cache_modifier: str | None = None
    eviction_policy: str | None = None
    volatile: str | None = None


@dataclass
class DotOp(_Json):
    line: int
    function: str
    kind: str = "dot"  # "dot" | "dot_scaled"
    has_acc: bool = False
    input_precision: str | None = None
    allow_tf32: str | None = None
    out_dtype: str | None = None
    max_num_imprecise_acc: str | None = None
    formats: tuple[str, str] | None = None  # dot_scaled's lhs/rhs formats


@dataclass
class ReductionOp(_Json):
    op: str
    line: int
    function: str
    method_form: bool = False
    axis: str | None = None


@dataclass
class AtomicOp(_Json):
    op: str
    line: int
    function: str
    masked: bool = False
    sem: str | None = None
    scope: str | None = None


@dataclass
class LoopInfo(_Json):
    """A for or while loop. `static` loops have compile-time bounds (trip_count when literal)."""
    kind: str  # "range" | "tl.range" | "static_range" | "for" | "while"
    line: int
    function: str
    static: bool
    trip_count: int | None = None
    depth: int = 0  # loops enclosing this one in the same function
    options: dict[str, str] = field(default_factory=dict)  # tl.range kwargs: num_stages, loop_unroll_factor...

    @property
    def num_stages(self) -> str | None:
        return self.options.get("num_stages")

    @property
    def loop_unroll_factor(self) -> str | None:
        return self.options.get("loop_unroll_factor")


@dataclass
class KernelFeatures(_Json):
    name: str
    line: int
    params: list[str]
    constexpr_params: list[str]
    decorators: list[str]
    jit_kwargs: dict[str, str] = field(default_factory=dict)
    autotune_configs: int | None = None  # how many configs, when the list is literal
    autotune_key: list[str] = field(default_factory=list)
    heuristics: list[str] = field(default_factory=list)
    loads: list[MemoryOp] = field(default_factory=list)
    stores: list[MemoryOp] = field(default_factory=list)
    dots: list[DotOp] = field(default_factory=list)
    reductions: list[ReductionOp] = field(default_factory=list)
    atomics: list[AtomicOp] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    program_id_axes: list[int] = field(default_factory=list)
    num_programs_axes: list[int] = field(default_factory=list)
    notable_ops: dict[str, int] = field(default_factory=dict)
    callees: list[str] = field(default_factory=list)  # jitted helpers reached, transitively
    called_by: list[str] = field(default_factory=list)  # jitted functions that reference this one
    unresolved_calls: list[str] = field(default_factory=list)  # calls to names not known as jitted here

    @property
    def uses_num_programs(self) -> bool:
        return bool(self.num_programs_axes) or "num_programs" in self.notable_ops

    @property
    def pointer_style(self) -> str:
        """"raw", "block_ptr", "tensor_descriptor", "mixed" or "none"."""
        styles = {op.pointer for op in self.loads + self.stores}
        if not styles:
            return "none"
        return styles.pop() if len(styles) == 1 else "mixed"

    @property
    def masked_loads(self) -> int:
        return sum(op.masked for op in self.loads)

    @property
    def unmasked_loads(self) -> int:
        return sum(not op.masked for op in self.loads)

    @property
    def has_runtime_loop(self) -> bool:
        return any(not loop.static for loop in self.loops)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["summary"] = {
            "pointer_style": self.pointer_style,
            "loads": len(self.loads),
            "masked_loads": self.masked_loads,
            "unmasked_loads": self.unmasked_loads,
            "stores": len(self.stores),
            "masked_stores": sum(op.masked for op in self.stores),
            "dots": len(self.dots),
            "reductions": len(self.reductions),
            "atomics": len(self.atomics),
            "loops": len(self.loops),
            "runtime_loops": sum(not loop.static for loop in self.loops),
            "uses_num_programs": self.uses_num_programs,
        }
        return out
