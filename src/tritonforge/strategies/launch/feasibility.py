"""Feasibility: rejecting, before any GPU time, launch values that cannot compile or fit.

Checked: illegal values, tl.dot dims under 16, tensors over 2**20 elements, an fp32
accumulator needing more than ~200 registers per thread, dot operands x num_stages over
the 227 KB of shared memory of an sm_90 SM, too few or too many elements per thread. A
value the current source already runs with widens the bound it is measured against (the
estimates are rough; a working baseline proves the hardware takes it). A caller-supplied
`feasible(assignment)` hook (an offline compile, say) runs after these.
Checked against Triton 3.6 on an H200 (examples/matmul.py, 90 configs): the shared-memory
estimate equalled the compiler's own figure, every accumulator rejection spilled, and
every accepted config compiled without spills.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, replace
from typing import Any, Callable

from tritonforge.analysis.launch_sites import DEFAULT_STAGES, DEFAULT_WARPS, DOT_MIN, MAX_TENSOR_NUMEL
from tritonforge.analysis.launch_sites import LaunchSite, SearchSpace, Tunable
from tritonforge.analysis.launch_sites.model import is_pow2
from tritonforge.analysis.launch_sites.syntax import fold
from tritonforge.strategies.launch.values import Assignment, numeric

FeasibleHook = Callable[[Assignment], "bool | str | None"]


@dataclass(frozen=True)
class HardwareLimits:
    """Static bounds for pruning; defaults are an sm_90 (H100/H200) GPU."""

    smem_bytes: int = 232448  # 227 KiB of shared memory per block
    acc_regs_per_thread: float = 200  # fp32 accumulator registers, leaving room for the rest
    max_elems_per_thread: float = 64  # non-dot tile per thread; 128 fp32 took ~245 registers on an H200
    min_elems_per_thread: float = 1.0  # fewer: threads hold copies of the same elements
    dot_elem_bytes: int = 2  # fp16/bf16 operands; fp32 (tf32) dots would be 4
    max_numel: int = MAX_TENSOR_NUMEL
    dot_min: int = DOT_MIN

    def with_gpu(self, gpu: dict[str, Any]) -> "HardwareLimits":
        """Bounds adjusted by `SearchState.gpu`, where known: "smem_bytes" (or the
        "max_shared_per_block" of analysis.occupancy's GpuSpec), "dot_elem_bytes",
        "acc_regs_per_thread"."""
        known = {k: gpu[k] for k in ("smem_bytes", "dot_elem_bytes", "acc_regs_per_thread") if k in gpu}
        if "smem_bytes" not in known and "max_shared_per_block" in gpu:
            known["smem_bytes"] = gpu["max_shared_per_block"]
        return replace(self, **known) if known else self


@dataclass(frozen=True)
class LaunchValues:
    """The values one launch (or one autotune config of it) runs with."""

    values: dict[str, int | None]
    warps: int
    stages: int
    label: str


def check_assignment(space: SearchSpace, assignment: Assignment, limits: HardwareLimits = HardwareLimits(),
                     feasible: FeasibleHook | None = None) -> str | None:
    """Why `assignment` (merged over the current values) cannot run well, or None if it may."""
    full = {**space.current, **assignment}
    for tid, value in assignment.items():
        reason = _illegal(space.by_id.get(tid), tid, value)
        if reason:
            return reason
    for site in space.sites:
        reason = check_site(site, full, space.current, limits)
        if reason:
            return reason
    return _ask_hook(feasible, full)


def _illegal(t: Tunable | None, tid: str, value: Any) -> str | None:
    if t is None or not t.free:
        return f"{tid} is not a tunable of this file" if t is None else f"{tid} is not tunable: {t.why}"
    if t.kind == "autotune_configs":
        return None if value else f"{t.id}: an empty config list"
    if value not in t.legal:
        return f"{t.id}={value} is not legal (allowed: {_span_text(t.legal)})"
    return None


def _span_text(values: tuple[int, ...]) -> str:
    return f"{values[0]}..{values[-1]}" if len(values) > 6 else ", ".join(map(str, values))


def _ask_hook(feasible: FeasibleHook | None, full: Assignment) -> str | None:
    if feasible is None:
        return None
    try:
        verdict = feasible(dict(full))
    except Exception as e:  # a broken hook must not stop the search, but must be visible
        return f"feasibility hook raised {type(e).__name__}: {e}"
    if isinstance(verdict, str):
        return verdict or None
    return None if verdict in (True, None) else "rejected by the feasibility hook"


def check_site(site: LaunchSite, full: Assignment, current: Assignment, limits: HardwareLimits) -> str | None:
    """Why the site cannot run well under `full`, or None. Every config of an autotuner must
    compile and keep its guards; one that would only run slowly (registers, shared memory,
    idle threads) is left to the autotuner, which times it and picks another, as long as one
    config runs well."""
    ref = _max_metrics(site, current, limits)
    launches = launch_values(site, full)
    slow = []
    for launch in launches:
        got = launch_metrics(site, launch, limits)
        reason = _cannot_run(site, launch, got, limits)
        if reason:
            return f"{site.kernel} (line {site.line}) {launch.label}: {reason}"
        reason = _runs_badly(site, got, ref, limits)
        if reason:
            slow.append(f"{site.kernel} (line {site.line}) {launch.label}: {reason}")
    autotuned = site.bindings.get("autotune_configs") is not None
    return slow[0] if slow and (not autotuned or len(slow) == len(launches)) else None


def launch_values(site: LaunchSite, full: Assignment) -> list[LaunchValues]:
    values: dict[str, int | None] = {}
    for param in (*site.facts.constexprs, *site.facts.globals):
        tid = site.bindings.get(param)
        v = (full[tid] if tid in full else _tunable_of(site, tid).current) if tid else None
        values[param] = v if numeric(v) else None
    tid = site.bindings.get("autotune_configs")
    if tid is not None:
        configs = full.get(tid) or _tunable_of(site, tid).current or ()
        return [LaunchValues({**values, **c.values()}, c.warps, c.stages, c.label()) for c in configs]
    warps = _value(site, full, "num_warps", DEFAULT_WARPS)
    stages = _value(site, full, "num_stages", DEFAULT_STAGES)
    label = ", ".join(f"{k}={v}" for k, v in values.items() if v is not None)
    return [LaunchValues(values, warps, stages, f"{{{label}, num_warps={warps}, num_stages={stages}}}")]


def _tunable_of(site: LaunchSite, tid: str) -> Tunable:
    return next(t for t in site.tunables if t.id == tid)


def _value(site: LaunchSite, full: Assignment, option: str, default: int) -> int:
    tid = site.bindings.get(option)
    if tid is None:
        return default
    v = full.get(tid, _tunable_of(site, tid).current)
    return v if isinstance(v, int) else default


def launch_metrics(site: LaunchSite, launch: LaunchValues, limits: HardwareLimits) -> dict[str, float]:
    """Rough per-program costs; a metric is absent when a value it needs is not known."""
    v, threads, facts = launch.values, 32 * launch.warps, site.facts
    out: dict[str, float] = {}
    sizes = [_product(v, tile) for tile in facts.tiles] + [v.get(d) for d in facts.tile_dims()]
    known = [s for s in sizes if s]
    if known:
        out["numel"] = max(known)
        out["elems_per_thread"] = max(known) / threads
    for m, n, k in facts.dots:
        vm, vn, vk = v.get(m or ""), v.get(n or ""), v.get(k or "")
        if vm and vn:
            out["acc_regs"] = max(out.get("acc_regs", 0), vm * vn / threads)
        if vm and vn and vk:
            smem = (vm * vk + vk * vn) * limits.dot_elem_bytes * launch.stages
            out["smem"] = max(out.get("smem", 0), smem)
    return out


def _product(values: dict[str, int | None], dims: tuple[str, ...]) -> int | None:
    out = 1
    for d in dims:
        v = values.get(d)
        if not v:
            return None
        out *= v
    return out


def _max_metrics(site: LaunchSite, current: Assignment, limits: HardwareLimits) -> dict[str, float]:
    """The largest cost of each kind the current values already run with (and the fewest elements)."""
    out: dict[str, float] = {}
    for launch in launch_values(site, current):
        m = launch_metrics(site, launch, limits)
        for k, v in m.items():
            out[k] = max(out.get(k, v), v)
        if "elems_per_thread" in m:
            out["min_elems"] = min(out.get("min_elems", math.inf), m["elems_per_thread"])
    return out


def _cannot_run(site: LaunchSite, launch: LaunchValues, got: dict[str, float], limits: HardwareLimits) -> str | None:
    """What makes the launch fail: a compile error, or a guard of the launching function."""
    for m, n, k in site.facts.dots:
        for d in (m, n, k):
            value = launch.values.get(d or "")
            if value is not None and value < limits.dot_min:
                return f"tl.dot needs {d} >= {limits.dot_min}, got {value}"
    for text in site.facts.arange_ends:
        size = _size_of(text, launch.values)
        if size is not None and not is_pow2(size):
            return f"tl.arange(0, {text}) would be {size}: a power of two >= 1 is needed"
    for guard in site.guards:
        if _holds(guard, launch.values) is False:
            return f"{site.function} requires {guard}"
    if got.get("numel", 0) > limits.max_numel:
        return f"a tile of {int(got['numel'])} elements exceeds Triton's {limits.max_numel}"
    return None


def _runs_badly(site: LaunchSite, got: dict[str, float], ref: dict[str, float], limits: HardwareLimits) -> str | None:
    """What makes the launch slow (`got`: its launch_metrics): registers, shared memory, idle
    or duplicated threads."""
    bounds = (
        ("acc_regs", limits.acc_regs_per_thread, "fp32 accumulator needs {:.0f} registers/thread (> {:.0f})"),
        ("smem", limits.smem_bytes, "shared memory {:.0f} B for dot operands x num_stages (> {:.0f} B)"),
        ("elems_per_thread", limits.max_elems_per_thread,
         "{:.0f} elements per thread (> {:.0f}): at or past the register limit"),
    )
    for key, bound, words in bounds:
        if key == "elems_per_thread" and site.facts.has_dot:
            continue  # dot operands live in shared memory; the accumulator check covers registers
        allowed = max(bound, ref.get(key, 0))
        if got.get(key, 0) > allowed:
            return words.format(got[key], allowed)
    if "elems_per_thread" in got:
        floor = min(limits.min_elems_per_thread, ref.get("min_elems", limits.min_elems_per_thread))
        if got["elems_per_thread"] < floor:
            return f"{got['elems_per_thread']:.2g} elements per thread (< {floor:.2g}): idle or duplicated threads"
    return None


def _size_of(text: str, values: dict[str, int | None]) -> int | None:
    """`BLOCK // VEC` under the launch's values; None where one of them is not known."""
    named = _substituted(text, values)
    return None if named is None else fold(named)


def _holds(text: str, values: dict[str, int | None]) -> bool | None:
    """Whether a guard (`BLOCK % CBLOCK == 0`) holds under the launch's values; None where a
    value it reads is not known or it is beyond integers and comparisons."""
    named = _substituted(text, values)
    return None if named is None else _truth(named)


def _substituted(text: str, values: dict[str, int | None]) -> ast.expr | None:
    """The expression `text` with the launch's values in place of its names; None where one of
    them is not known."""
    tree = ast.parse(text, mode="eval").body
    if any(isinstance(n, ast.Name) and values.get(n.id) is None for n in ast.walk(tree)):
        return None
    return ast.fix_missing_locations(_Substitute(values).visit(tree))


def _truth(node: ast.expr) -> bool | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        parts = [_truth(v) for v in node.values]
        if None in parts:
            return None
        return all(parts) if isinstance(node.op, ast.And) else any(parts)
    if isinstance(node, ast.Compare):
        sides = [fold(node.left), *(fold(c) for c in node.comparators)]
        if None in sides:
            return None
        compare = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
                   ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}
        if not all(type(op) in compare for op in node.ops):
            return None
        return all(compare[type(op)](a, b) for op, a, b in zip(node.ops, sides, sides[1:]))
    value = fold(node)
    return None if value is None else bool(value)


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, int | None]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(self.values[node.id])
