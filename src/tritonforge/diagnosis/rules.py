"""The bottleneck rules, as data.

A rule names the signals it needs, scores them (0: does not apply; otherwise the share
of run time plausibly at stake, times how sure the signals make us), and says which
signals to show as evidence and what usually helps. Adding a rule is adding an entry
to RULES; `tritonforge.diagnosis.diagnose` runs them all and ranks what fired.

Thresholds come from the seven H200 captures in tests/fixtures/ncu (see their README)
and from Nsight Compute's own guidance: above ~80% of a unit's peak there is little
left on that unit; a 32-byte sector whose bytes are mostly unused is wasted traffic.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from typing import Callable, Sequence

from tritonforge.diagnosis.model import Finding
from tritonforge.diagnosis.signals import Signals

Directions = Sequence[str] | Callable[[Signals], list[str]]


@dataclass(frozen=True)
class Rule:
    id: str
    title: str  # str.format over the signals; an unknown name prints as "?"
    trigger: str  # the condition, in words, for reports and docs
    needs: tuple[str, ...]  # signals that must be known for the rule to run
    score: Callable[[Signals], float]
    evidence: tuple[str, ...]
    directions: Directions
    unless: tuple[str, ...] = ()  # signals whose presence makes another rule the better judge
    # Said instead of `title` when a signal it names is unknown (static facts without counters).
    short_title: str = ""

    def apply(self, s: Signals) -> Finding | None:
        if any(n not in s for n in self.needs) or any(n in s for n in self.unless):
            return None
        score = max(0.0, min(1.0, float(self.score(s))))
        if score <= 0.0:
            return None
        directions = self.directions(s) if callable(self.directions) else list(self.directions)
        return Finding(kind=self.id, title=self.title_for(s), score=round(score, 3),
                       evidence={k: _rounded(s[k]) for k in self.evidence if k in s}, directions=directions)

    def title_for(self, s: Signals) -> str:
        if self.short_title and any(name not in s for name in _names(self.title)):
            return self.short_title.format_map(_Known(s))
        return self.title.format_map(_Known(s))


def _names(template: str) -> list[str]:
    return [field for _, field, _, _ in string.Formatter().parse(template) if field]


class _Known(dict):
    """Signals for str.format_map: every value wrapped so a missing one prints as "?"."""

    def __getitem__(self, key: str) -> "_Fmt":
        return _Fmt(super().__getitem__(key) if key in self else "?")


class _Fmt:
    """Formats like its value, and as "?" where a number format meets a missing value."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __format__(self, spec: str) -> str:
        try:
            return format(self.value, spec)
        except (TypeError, ValueError):
            return str(self.value)


def _rounded(v: object) -> float | str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return int(v)
    if isinstance(v, float):
        return float(f"{v:.6g}")
    return str(v)


# --- scores -------------------------------------------------------------------------
def memory_side(s: Signals) -> bool:
    """The memory units are busier than the SM pipelines."""
    return s.get("mem_pct", 0.0) >= s.get("sm_pct", 0.0)


def _near_peak(s: Signals) -> float:
    if s["dram_pct"] < 75:
        return 0.0
    # Near peak but moving more than the roofline's bytes is not "little left".
    return s["dram_pct"] / 100 / max(1.0, s.get("traffic_ratio", 1.0))


def _uncoalesced(s: Signals) -> float:
    eff, busy = s["access_efficiency_pct"], max(s["mem_pct"], s.get("l2_pct", 0.0))
    if eff >= 60 or busy < 30:
        return 0.0
    return (1 - eff / 100) * busy / 100


def _far_from_peak(s: Signals) -> float:
    dram, mem, sm = s["dram_pct"], s["mem_pct"], s["sm_pct"]
    if dram >= 75 or mem < 40 or mem < sm:
        return 0.0
    return 0.9 * (1 - dram / 100) * (1.0 if mem >= 1.5 * sm else 0.6)


_RESOURCE_LIMITERS = ("registers", "shared_mem", "warps", "blocks")


def _far_low_occupancy(s: Signals) -> float:
    """Memory far from peak because too few warps are resident to keep loads in flight."""
    occ, limiter = s["occupancy_pct"], str(s["occupancy_limiter"])
    far = _far_from_peak(s)
    if not far or occ >= 30 or not any(r in limiter for r in _RESOURCE_LIMITERS):
        return 0.0
    # Ranks above the plain far-from-peak finding, the more so the fewer warps are active.
    return min(0.95, far + 0.3 * (1 - occ / 30))


def _latency_bound(s: Signals) -> float:
    busiest, occ = s["busiest_pct"], s["occupancy_pct"]
    if busiest >= 50 or occ >= 40:
        return 0.0
    return (1 - busiest / 100) * (1 - occ / 40)


def _little_in_flight(s: Signals) -> float:
    # Enough warps, yet no unit busy: each warp has too little independent work.
    busiest, occ = s["busiest_pct"], s["occupancy_pct"]
    if busiest >= 50 or occ < 40:
        return 0.0
    return 0.8 * (1 - busiest / 100)


def _spills(s: Signals) -> float:
    fraction = s.get("local_fraction")
    if fraction:  # counters saw local-memory traffic: weigh by its share of all traffic
        return 0.5 + 0.45 * fraction
    if fraction is None and s.get("spills", 0) > 0:  # only the compiler's word for it
        return 0.55
    return 0.0  # counters saw none: spill code that never runs costs nothing


def _register_pressure(s: Signals) -> float:
    if s.get("local_fraction") or s.get("spills"):
        return 0.0  # register_spills says it better
    return 0.3 if s["registers"] >= 192 else 0.0


def _waves(s: Signals) -> float:
    waves, blocks, sms = s["waves"], s["grid_blocks"], s["sm_count"]
    if waves < 1:
        # Fewer blocks than SMs is the tiny-grid rule's; here every SM has work, too little.
        return 0.0 if blocks < sms else 0.5 * (1 - waves)
    loss = 1 - waves / math.ceil(waves)
    return 0.8 * loss if loss >= 0.1 else 0.0


def _tiny_grid(s: Signals) -> float:
    blocks, sms, duration = s.get("grid_blocks"), s.get("sm_count"), s.get("duration_ns")
    idle = 0.95 * (1 - blocks / sms) if blocks is not None and sms and blocks < sms else 0.0
    # A launch of a few microseconds is comparable to the cost of launching it.
    short = 0.7 * (1 - duration / 10_000) if duration is not None and duration < 10_000 else 0.0
    return max(idle, short)


def _tensor_busy(s: Signals) -> float:
    return 0.95 * s["tensor_pct"] / 100 if s["tensor_pct"] >= 50 else 0.0


def _tensor_unused(s: Signals) -> float:
    if s.get("tensor_pct", 0.0) >= 5 or s.get("uses_tensor_instructions"):
        return 0.0
    if s.get("sm_pct", 0.0) >= 50 and s.get("fma_pct", 0.0) >= 30:
        return 0.85 * max(s["sm_pct"], s["fma_pct"]) / 100
    # With no counters, a high flop-per-byte ratio alone says a dot product is due.
    return 0.6 if s.get("arithmetic_intensity", 0.0) >= 50 and "sm_pct" not in s else 0.0


def _pipes_busy(s: Signals) -> float:
    if s["sm_pct"] < 60 or s.get("tensor_pct", 0.0) >= 30:
        return 0.0
    return 0.7 * s["sm_pct"] / 100


def _redundant(s: Signals) -> float:
    ratio = s["traffic_ratio"]
    if ratio < 1.2:
        return 0.0
    # Extra DRAM bytes cost time in proportion to how busy the memory side is.
    busy = s["mem_pct"] / 100 if "mem_pct" in s else 0.6
    return (1 - 1 / ratio) * max(0.3, busy) * (1.0 if memory_side(s) else 0.4)


def _l2_thrash(s: Signals) -> float:
    ratio, hit = s["traffic_ratio"], s["l2_hit_pct"]
    if ratio < 1.3 or hit >= 50:
        return 0.0
    return 0.2 + 0.7 * (1 - 1 / ratio) * (1 - hit / 100)


def _ifetch(s: Signals) -> float:
    if s["top_stall"] != "no_instruction" or s["top_stall_share"] < 0.4:
        return 0.0
    return 0.45 * s["top_stall_share"]


def _at_floor(s: Signals) -> float:
    eff = s["floor_efficiency"]
    return 0.9 * eff if eff >= 0.8 else 0.0


# --- directions that depend on the signals --------------------------------------------
_LIMITER_DIRECTIONS = {
    "registers": ["cut registers per thread: a smaller BLOCK per program, or more num_warps for the same tile",
                  "keep fewer large tiles live across the loop (load, use, drop)"],
    "shared_mem": ["cut shared memory per block: fewer num_stages or smaller BLOCK_K/BLOCK_N"],
    "warps": ["use smaller programs (fewer num_warps) so that more blocks fit on an SM"],
    "blocks": ["give each program more work: an SM holds only so many blocks, however small"],
    "grid size": ["launch more programs: a smaller BLOCK, or split the loop (split-K) and combine after",
                  "if the work cannot be split, make each program's loads wider and deeper instead"],
}


def _latency_directions(s: Signals) -> list[str]:
    limiter = str(s.get("occupancy_limiter", ""))
    out = [d for key, ds in _LIMITER_DIRECTIONS.items() if key in limiter for d in ds]
    return out + ["raise the bytes in flight per warp: wider vector loads, num_stages for loops"]


_STALL_DIRECTIONS = {
    "long_scoreboard": ["warps wait on global memory: raise BLOCK so each thread has more (and wider, 16-byte) "
                        "loads in flight",
                        "fewer, larger programs: a program's fixed cost (index math, masks, scheduling) is "
                        "paid per BLOCK elements"],
    "lg_throttle": ["the load/store queue is full of small requests: load wider vectors, fewer instructions"],
    "short_scoreboard": ["warps wait on shared memory or special functions (exp, sqrt): fewer of them per element"],
    "mio_throttle": ["shared-memory or special-function pipe congested: fewer, wider shared accesses"],
    "wait": ["fixed-latency dependencies: interleave independent work (unroll over more elements per thread)"],
    "barrier": ["warps wait at barriers: less synchronizing reduction work per element, more warps"],
}


def _in_flight_directions(s: Signals) -> list[str]:
    stall = str(s.get("top_stall", ""))
    return _STALL_DIRECTIONS.get(stall, []) + ["num_stages > 1 on loops so the next loads overlap this use"]


def _far_directions(s: Signals) -> list[str]:
    out = []
    if s.get("l2_pct", 0.0) >= 60 or s.get("l1_pct", 0.0) >= 60:
        out.append("the caches, not DRAM, are the busy part: look at the access pattern "
                   "(uncoalesced or re-read data)")
        out.append("raise reuse: larger tiles so each loaded byte serves more work")
    if s.get("top_stall") in ("long_scoreboard", "lg_throttle"):
        out.append("too few bytes in flight: raise BLOCK so each thread loads wider vectors and more elements")
    return out + ["more warps or num_stages to overlap loads with use",
                  "fewer, larger programs: tiny blocks waste issue slots on index math"]


# --- the rules ----------------------------------------------------------------------
RULES: list[Rule] = [
    Rule(
        id="memory_bound_near_peak",
        title="Memory-bound at {dram_pct:.0f}% of DRAM peak: little left to gain by tuning this kernel",
        trigger="DRAM throughput >= 75% of peak (score falls when DRAM bytes exceed the roofline's)",
        needs=("dram_pct",),
        score=_near_peak,
        evidence=("dram_pct", "mem_pct", "dram_bytes", "dram_gbps", "traffic_ratio", "floor_efficiency"),
        directions=("little left here: the kernel already streams DRAM near its peak",
                    "move fewer bytes instead: fuse with the kernel before or after, keep intermediates on chip",
                    "use narrower dtypes (bf16, fp8) for inputs or outputs where accuracy allows",
                    "if DRAM bytes match the roofline's count, stop tuning this kernel"),
    ),
    Rule(
        id="uncoalesced_access",
        title="Uncoalesced global accesses: {access_efficiency_pct:.0f}% of each fetched sector is used",
        trigger="bytes used per 32-byte global sector < 60% while the memory units are >= 30% busy",
        needs=("access_efficiency_pct", "mem_pct"),
        score=_uncoalesced,
        evidence=("access_efficiency_pct", "load_bytes_per_sector", "store_bytes_per_sector", "mem_pct",
                  "l2_pct", "dram_pct"),
        directions=("make neighbouring lanes touch neighbouring addresses: the unit-stride dimension "
                    "goes on the fastest axis of tl.arange",
                    "load 2-D tiles [BLOCK_R, BLOCK_C] with the contiguous dimension last, "
                    "then reduce or transpose in registers",
                    "for column-wise work, handle many adjacent columns per program so every row segment is "
                    "read whole"),
    ),
    Rule(
        id="redundant_traffic",
        title="DRAM traffic is {traffic_ratio:.2f}x the bytes the roofline says must move",
        trigger="DRAM bytes read+written >= 1.2x the roofline's compulsory bytes",
        needs=("traffic_ratio",),
        score=_redundant,
        evidence=("dram_bytes", "roofline_bytes", "traffic_ratio", "l2_hit_pct", "access_efficiency_pct"),
        directions=("read each input once: tile so a block reuses what it loaded instead of reloading it",
                    "make accesses coalesced so whole sectors are used",
                    "order program ids so blocks sharing data run together (grouped/swizzled launch order)"),
    ),
    Rule(
        id="l2_thrashing",
        title="L2 thrashing: {l2_hit_pct:.0f}% L2 hit rate with {traffic_ratio:.2f}x the compulsory DRAM traffic",
        trigger="L2 hit rate < 50% and DRAM bytes >= 1.3x the roofline's",
        needs=("traffic_ratio", "l2_hit_pct"),
        score=_l2_thrash,
        evidence=("l2_hit_pct", "traffic_ratio", "dram_bytes", "roofline_bytes"),
        directions=("group program ids (GROUP_M swizzle) so concurrent blocks share their inputs in L2",
                    "shrink the working set of one wave: smaller tiles along the reused dimension",
                    "evict-first hints (eviction_policy) on streams read once, to keep reused data"),
    ),
    Rule(
        id="memory_bound_far_from_peak",
        title="Memory-bound far from DRAM peak: DRAM {dram_pct:.0f}%, memory units {mem_pct:.0f}% busy",
        trigger="memory units >= 40% busy and busier than the SM, DRAM < 75% of peak",
        needs=("dram_pct", "mem_pct", "sm_pct"),
        score=_far_from_peak,
        evidence=("dram_pct", "mem_pct", "l1_pct", "l2_pct", "sm_pct", "top_stall", "occupancy_pct"),
        directions=_far_directions,
    ),
    Rule(
        id="memory_bound_low_occupancy",
        title="Too little in flight: {occupancy_pct:.0f}% of warps active, limited by {occupancy_limiter}; "
              "DRAM at {dram_pct:.0f}% of peak",
        trigger="memory-bound far from peak while achieved occupancy < 30% under a resource limit",
        needs=("dram_pct", "mem_pct", "sm_pct", "occupancy_pct", "occupancy_limiter"),
        score=_far_low_occupancy,
        evidence=("occupancy_pct", "theoretical_occupancy_pct", "occupancy_limiter", "blocks_per_sm",
                  "registers", "shared_bytes", "dram_pct", "mem_pct"),
        directions=_latency_directions,
    ),
    Rule(
        id="latency_bound_low_occupancy",
        title="Latency-bound: {occupancy_pct:.0f}% of warps active (theoretical "
              "{theoretical_occupancy_pct:.0f}%), limited by {occupancy_limiter}",
        trigger="no unit >= 50% busy and achieved occupancy < 40%",
        needs=("busiest_pct", "occupancy_pct"),
        score=_latency_bound,
        evidence=("occupancy_pct", "theoretical_occupancy_pct", "occupancy_limiter", "blocks_per_sm",
                  "registers", "shared_bytes", "waves", "sm_pct", "mem_pct", "top_stall"),
        directions=_latency_directions,
    ),
    Rule(
        id="latency_bound_little_in_flight",
        title="Latency-bound with enough warps: no unit above {busiest_pct:.0f}% busy, warps mostly "
              "stalled on {top_stall}",
        trigger="no unit >= 50% busy while achieved occupancy >= 40%",
        needs=("busiest_pct", "occupancy_pct"),
        score=_little_in_flight,
        evidence=("busiest_pct", "sm_pct", "mem_pct", "dram_pct", "occupancy_pct", "top_stall",
                  "top_stall_share", "waves"),
        directions=_in_flight_directions,
    ),
    Rule(
        id="register_spills",
        title="Register spills: local memory carries {local_fraction:.0%} of the memory traffic",
        short_title="Register spills: the compiler reports {spills:.0f} spilled 4-byte values per thread",
        trigger="local-memory sectors seen by the counters, or spills reported by the compiler",
        needs=(),
        score=_spills,
        evidence=("spills", "registers", "local_sectors", "spill_instructions", "local_fraction",
                  "occupancy_pct"),
        directions=("shrink what one program keeps live: a smaller BLOCK, or more num_warps to spread the tile",
                    "work in chunks with a carried value (running sum, running max) instead of whole-row "
                    "tl.cumsum / tl.sort / tl.flip on a huge block",
                    "split long expressions over big tiles so temporaries die early"),
    ),
    Rule(
        id="register_pressure",
        title="High register use: {registers:.0f} registers per thread",
        trigger=">= 192 registers per thread and no spills",
        needs=("registers",),
        score=_register_pressure,
        evidence=("registers", "num_warps", "occupancy_pct", "blocks_per_sm"),
        directions=("smaller tiles or more num_warps per tile lower registers per thread",
                    "check occupancy: one block per SM leaves nothing to hide latency with"),
    ),
    Rule(
        id="wave_quantization",
        title="Wave quantization: {waves:.2f} waves of blocks per SM",
        trigger="less than one full wave over all SMs, or a last wave that leaves >= 10% of the time idle",
        needs=("waves", "grid_blocks", "sm_count"),
        score=_waves,
        evidence=("waves", "last_wave_pct", "grid_blocks", "sm_count", "blocks_per_sm", "occupancy_pct"),
        directions=("choose BLOCK so the grid is a multiple of SMs x blocks per SM",
                    "a persistent kernel (grid = SMs, loop over tiles) removes the tail",
                    "more, smaller programs when the grid is under one wave"),
    ),
    Rule(
        id="launch_bound_tiny_grid",
        title="Tiny launch: {grid_blocks} block(s) for {sm_count} SMs, {duration_ns:,.0f} ns",
        trigger="fewer blocks than SMs, or a launch shorter than 10 us",
        needs=(),
        score=_tiny_grid,
        evidence=("grid_blocks", "sm_count", "waves", "duration_ns", "occupancy_pct", "mem_pct"),
        directions=("split the work over many programs (several per SM): a split reduction combined by a "
                    "second pass or atomics",
                    "for microsecond kernels, fuse with neighbouring kernels or capture a CUDA graph"),
    ),
    Rule(
        id="compute_bound_tensor",
        title="Compute-bound on tensor cores ({tensor_pct:.0f}% busy)",
        trigger="tensor pipe active >= 50% of its peak",
        needs=("tensor_pct",),
        score=_tensor_busy,
        evidence=("tensor_pct", "sm_pct", "mem_pct", "occupancy_pct", "registers", "shared_bytes", "tensor_ops"),
        directions=("tensor cores already do most of the work: gains come from keeping them fed",
                    "larger tiles (BLOCK_M/BLOCK_N 128-256) and num_stages 3-5 so loads hide behind MMAs",
                    "grouped program order for L2 reuse; a persistent kernel for the tail",
                    "cut non-MMA work in the loop: hoist pointer math, skip masks on full tiles",
                    "lower precision (fp8 with scaling) only where accuracy allows"),
    ),
    Rule(
        id="tensor_cores_unused",
        title="Floating-point work on CUDA cores: tensor pipe {tensor_pct:.0f}% busy",
        trigger="SM >= 50% and FMA pipe >= 30% busy with the tensor pipe idle, or (no counters) "
                ">= 50 flop/byte with no tensor instructions",
        needs=(),
        score=_tensor_unused,
        evidence=("tensor_pct", "fma_pct", "sm_pct", "fp32_flops", "arithmetic_intensity",
                  "uses_tensor_instructions"),
        directions=("write the inner product as tl.dot on 2-D tiles (sizes multiples of 16)",
                    "fp32 inputs: allow tf32 in tl.dot (input_precision) if the tolerance allows",
                    "cast operands to bf16/fp16 for the dot and accumulate in fp32"),
    ),
    Rule(
        id="compute_bound_pipes",
        title="Compute-bound on CUDA-core pipelines: SM {sm_pct:.0f}% busy",
        trigger="SM throughput >= 60% with the tensor pipe < 30%",
        needs=("sm_pct",),
        score=_pipes_busy,
        evidence=("sm_pct", "fma_pct", "issue_pct", "tensor_pct", "instructions"),
        directions=("cut instructions: hoist index math and masks out of loops",
                    "cheaper math: multiply by reciprocals, exp2 instead of exp, fewer conversions",
                    "look at the SASS instruction mix for the pipeline that is saturated"),
    ),
    Rule(
        id="instruction_fetch_stalls",
        title="Instruction-fetch stalls: {top_stall_share:.0%} of stalls wait for instructions",
        trigger="no_instruction is the top stall reason with >= 40% of stall cycles",
        needs=("top_stall", "top_stall_share"),
        score=_ifetch,
        evidence=("top_stall", "top_stall_share", "stall_no_instruction", "instructions"),
        directions=("the code is too large for the instruction cache: a huge BLOCK gets fully unrolled",
                    "loop over smaller chunks inside the program instead of one giant tile"),
    ),
    Rule(
        id="at_roofline_floor",
        title="At {floor_efficiency:.0%} of the roofline floor: little left to gain",
        trigger="floor time / measured time >= 0.8 (used when there are no counters)",
        needs=("floor_efficiency",),
        unless=("sm_pct",),
        score=_at_floor,
        evidence=("floor_efficiency", "floor_ns", "measured_ns", "roofline_bytes", "roofline_flops"),
        directions=("the launch runs close to what the hardware allows for this much work",
                    "only less work helps: fuse, or move fewer/narrower bytes"),
    ),
]
