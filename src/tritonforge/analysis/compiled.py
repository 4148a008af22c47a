"""Compile facts of a Triton kernel: registers, spills, shared memory and what the code does.

Two sources, one result type (`CompileFacts`):
- `compile_offline(record)` compiles a captured launch for a GPU this machine need not
  have (sm_90 by default) with the exact signature, constexprs and alignment attributes
  Triton's JIT would use, so the PTX/SASS match a real launch's;
- `facts_from_compiled(kernel)` reads a `CompiledKernel` that a real launch produced.

Registers and stack come from `cuobjdump --dump-resource-usage` on the cubin (the same
number the driver reports as n_regs; n_spills is stack bytes / 4). Spill bytes are local
memory traffic in SASS minus local traffic the PTX already had (arrays the program itself
put in local memory); on the kernels checked this equals ptxas -v's "bytes spill
stores/loads" exactly. Offline compiles must run in a process whose kernels were defined
without TRITON_INTERPRET (interpreted kernels cannot be compiled).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tritonforge.analysis.launch_capture import LaunchRecord
from tritonforge.analysis.occupancy import GpuSpec, occupancy, spec_for_arch


class CompileFailure(Exception):
    """A kernel that would not compile or launch.

    kind: "unsupported" (this record cannot be compiled offline), "compile_error" (the
    Triton front end rejected it), "ptxas_error", "out_of_resources" (compiled, but exceeds
    a per-block limit of the target: `facts` holds what it needed), or "internal_error".
    """

    def __init__(self, kind: str, message: str, facts: "CompileFacts | None" = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind, self.message, self.facts = kind, message, facts


# --- instruction summaries ----------------------------------------------------------------
@dataclass
class InstructionSummary:
    """Static instruction counts of one listing (PTX or SASS); each instruction counts once."""

    source: str  # "ptx" or "sass"
    total: int = 0
    global_loads: dict[int, int] = field(default_factory=dict)  # access width in bits -> count
    global_stores: dict[int, int] = field(default_factory=dict)
    tensor_core: dict[str, int] = field(default_factory=dict)  # wgmma/mma, HGMMA/HMMA/... -> count
    local_loads: int = 0
    local_stores: int = 0
    local_load_bytes: int = 0
    local_store_bytes: int = 0
    shared_loads: int = 0  # incl. ldmatrix / LDSM
    shared_stores: int = 0
    barriers: int = 0  # CTA barriers: bar.sync, barrier.*, BAR.*
    async_copies: dict[int, int] = field(default_factory=dict)  # cp.async / LDGSTS, width in bits -> count
    bulk_copies: int = 0  # cp.async.bulk (TMA) / UTMALDG, UTMASTG, UBLKCP
    atomics: int = 0

    @property
    def tensor_core_total(self) -> int:
        return sum(self.tensor_core.values())

    @property
    def widest_global_load(self) -> int:
        """Widest global read in bits, cp.async included (pipelined loads go that way)."""
        return max([*self.global_loads, *self.async_copies], default=0)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("global_loads", "global_stores", "async_copies"):
            out[key] = {str(k): v for k, v in sorted(out[key].items())}
        return out


def _tally(s: InstructionSummary, category: str, bits: int) -> None:
    """Count one classified instruction into `s`."""
    if category in ("global_loads", "global_stores", "async_copies"):
        counts = getattr(s, category)
        counts[bits] = counts.get(bits, 0) + 1
    elif category.startswith("tensor_core:"):
        name = category.split(":", 1)[1]
        s.tensor_core[name] = s.tensor_core.get(name, 0) + 1
    elif category in ("local_loads", "local_stores"):
        setattr(s, category, getattr(s, category) + 1)
        key = "local_load_bytes" if category == "local_loads" else "local_store_bytes"
        setattr(s, key, getattr(s, key) + bits // 8)
    else:
        setattr(s, category, getattr(s, category) + 1)


def _ptx_width(parts: list[str]) -> int:
    """Bits moved by ld/st parts like ['ld', 'global', 'v4', 'b32'] -> 128."""
    lanes = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d+", p)), 1)
    bits = next((int(m.group(1)) for p in reversed(parts) if (m := re.fullmatch(r"[bsuf](\d+)", p))), 32)
    return lanes * bits


def _ptx_instructions(ptx: str) -> list[tuple[str, str]]:
    """(opcode, operands) of every instruction, inline asm included."""
    ops = []
    for line in ptx.splitlines():
        line = line.split("//", 1)[0].strip()
        if not line.endswith(";") or line.startswith((".", "{", "}", "$")):
            continue
        if line.startswith("@"):  # predicate guard
            line = line.split(None, 1)[1] if " " in line else ""
        m = re.match(r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*", line)
        if m:
            ops.append((m.group(0), line[m.end():]))
    return ops


def _is_group_op(parts: list[str]) -> bool:
    return any(p in ("commit_group", "wait_group", "wait_group_read", "wait_all", "prefetch") for p in parts)


def _cp_async_bits(operands: str) -> int:
    """cp.async's copy size: the literal after the two addresses ("[..], [..], 0x10, ..." -> 128)."""
    m = re.search(r"(0x[0-9a-fA-F]+|\d+)", operands.rsplit("]", 1)[-1])
    return int(m.group(1), 0) * 8 if m else 0


def _classify_ptx(op: str, operands: str) -> tuple[str, int] | None:
    parts = op.split(".")
    head = parts[0]
    if head in ("ld", "st"):
        space = next((p for p in ("global", "local", "shared") if p in parts), None)
        if space:
            return f"{space}_{'loads' if head == 'ld' else 'stores'}", _ptx_width(parts)
    if head in ("ldmatrix", "stmatrix"):
        return ("shared_loads" if head == "ldmatrix" else "shared_stores"), 0
    if op.startswith("wgmma.mma_async") or head == "mma":
        return f"tensor_core:{'wgmma' if head == 'wgmma' else 'mma'}", 0
    if head in ("bar", "barrier") and "warp" not in parts:
        return "barriers", 0
    if op.startswith("cp.async") and not _is_group_op(parts):
        if op.startswith("cp.async.bulk"):
            return "bulk_copies", 0
        return ("async_copies", _cp_async_bits(operands)) if "mbarrier" not in parts else None
    if head in ("atom", "red"):
        return "atomics", 0
    return None


def summarize_ptx(ptx: str) -> InstructionSummary:
    s = InstructionSummary(source="ptx")
    for op, operands in _ptx_instructions(ptx):
        s.total += 1
        hit = _classify_ptx(op, operands)
        if hit:
            _tally(s, *hit)
    return s


_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_SASS_TENSOR = {"HGMMA", "HMMA", "IMMA", "QGMMA", "IGMMA", "DMMA", "BMMA", "OMMA", "UTCHMMA", "UTCQMMA",
                "UTCIMMA", "UTCOMMA"}
_SASS_CATEGORY = {
    "LDG": "global_loads", "STG": "global_stores", "LDL": "local_loads", "STL": "local_stores",
    "LDS": "shared_loads", "LDSM": "shared_loads", "STS": "shared_stores", "STSM": "shared_stores",
    "BAR": "barriers", "LDGSTS": "async_copies",
    "UTMALDG": "bulk_copies", "UTMASTG": "bulk_copies", "UBLKCP": "bulk_copies", "UTMAREDG": "bulk_copies",
    "ATOM": "atomics", "ATOMG": "atomics", "ATOMS": "atomics", "RED": "atomics", "REDG": "atomics",
}


def _sass_width(parts: list[str]) -> int:
    for p in parts:
        if p in ("64", "128", "256"):
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def summarize_sass(sass: str) -> InstructionSummary:
    s = InstructionSummary(source="sass")
    for line in sass.splitlines():
        m = _SASS_LINE.match(line)
        if not m:
            continue
        s.total += 1
        parts = m.group(1).split(".")
        if parts[0] in _SASS_TENSOR:
            _tally(s, f"tensor_core:{parts[0]}", 0)
        elif parts[0] in _SASS_CATEGORY:
            _tally(s, _SASS_CATEGORY[parts[0]], _sass_width(parts))
    return s


# --- facts -------------------------------------------------------------------------------
@dataclass
class CompileFacts:
    kernel_name: str
    arch: int  # compute capability, e.g. 90
    target: str  # e.g. "sm_90a"
    num_warps: int
    num_stages: int
    num_ctas: int
    registers: int | None  # per thread
    stack_bytes: int | None  # local memory per thread (stack frame): spills and local arrays
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    spill_stores: int | None  # SASS spill store instructions
    spill_loads: int | None
    shared_bytes: int  # dynamic shared memory per block, as Triton launches it
    ptx: InstructionSummary | None
    sass: InstructionSummary | None
    source: str  # "offline" or "runtime"

    @property
    def spills(self) -> bool:
        return bool(self.spill_store_bytes or self.spill_load_bytes)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("ptx", "sass")}
        out["ptx"] = self.ptx.to_json() if self.ptx else None
        out["sass"] = self.sass.to_json() if self.sass else None
        return out


def _tool(name: str) -> str | None:
    """Path of an NVIDIA binary: Triton's knob, the copy Triton ships, then PATH."""
    with contextlib.suppress(Exception):
        from triton import knobs
        path = getattr(knobs.nvidia, name).path
        if path and os.path.exists(path):
            return path
    with contextlib.suppress(ImportError):
        import triton
        shipped = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
        if shipped.exists():
            return str(shipped)
    return shutil.which(name)


@dataclass
class _CubinInfo:
    registers: int | None = None
    stack_bytes: int | None = None
    sass: str | None = None


def _inspect_cubin(cubin: bytes) -> _CubinInfo:
    tool = _tool("cuobjdump")
    if tool is None or not cubin:
        return _CubinInfo()
    with tempfile.TemporaryDirectory(prefix="tf-cubin-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        res = subprocess.run([tool, "--dump-resource-usage", "-sass", str(path)],
                             capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        return _CubinInfo()
    regs = [int(x) for x in re.findall(r"\bREG:(\d+)", res.stdout)]
    stack = [int(x) for x in re.findall(r"\bSTACK:(\d+)", res.stdout)]
    # Several functions when device functions were not inlined: the entry needs the most.
    return _CubinInfo(registers=max(regs, default=None), stack_bytes=max(stack, default=None), sass=res.stdout)


def _sm_name(arch: int) -> str:
    return f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"


def facts_from_compiled(kernel: Any) -> CompileFacts:
    """Facts of a `CompiledKernel`: from a real launch, or from `triton.compile` offline."""
    md = kernel.metadata
    ptx_text, cubin = kernel.asm.get("ptx"), kernel.asm.get("cubin")
    info = _inspect_cubin(cubin) if cubin else _CubinInfo()
    ptx = summarize_ptx(ptx_text) if ptx_text else None
    sass = summarize_sass(info.sass) if info.sass else None
    arch = int(getattr(getattr(md, "target", None), "arch", 0) or re.sub(r"\D", "", str(md.arch)) or 0)
    # A kernel the driver has loaded carries the driver's own numbers; they win.
    loaded = getattr(kernel, "n_regs", None) is not None
    registers = int(kernel.n_regs) if loaded else info.registers
    stack = info.stack_bytes
    if stack is None and loaded:
        stack = int(kernel.n_spills) * 4  # Triton's n_spills is the local size in words
    return CompileFacts(
        kernel_name=md.name, arch=arch, target=_sm_name(arch), num_warps=md.num_warps,
        num_stages=getattr(md, "num_stages", 0), num_ctas=getattr(md, "num_ctas", 1),
        registers=registers, stack_bytes=stack, **_spill_traffic(ptx, sass), shared_bytes=int(md.shared),
        ptx=ptx, sass=sass, source="runtime" if loaded else "offline",
    )


def _spill_traffic(ptx: InstructionSummary | None, sass: InstructionSummary | None) -> dict[str, int | None]:
    """Local memory traffic ptxas added: SASS local accesses beyond those the PTX asked for."""
    if sass is None:
        return dict(spill_store_bytes=None, spill_load_bytes=None, spill_stores=None, spill_loads=None)
    base = ptx or InstructionSummary(source="ptx")
    return dict(
        spill_store_bytes=max(0, sass.local_store_bytes - base.local_store_bytes),
        spill_load_bytes=max(0, sass.local_load_bytes - base.local_load_bytes),
        spill_stores=max(0, sass.local_stores - base.local_stores),
        spill_loads=max(0, sass.local_loads - base.local_loads),
    )


# --- offline compile -----------------------------------------------------------------------
def _ast_source(record: LaunchRecord) -> Any:
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    kernel = record.kernel
    if kernel is None:
        why = "the record has no kernel (rebuild it with LaunchRecord.from_json(data, kernel))"
        raise CompileFailure("unsupported", f"{record.kernel_name}: cannot compile offline: {why}")
    if not isinstance(kernel, JITFunction):
        why = "it was captured under TRITON_INTERPRET=1; capture it again in a process without it"
        raise CompileFailure("unsupported", f"{record.kernel_name}: cannot compile offline: {why}")
    signature, constexprs, attrs = {}, {}, {}
    for i, a in enumerate(record.args):
        if a.triton_type is None:
            why = f"argument {a.name} ({a.kind}) has no Triton type"
            raise CompileFailure("unsupported", f"{record.kernel_name}: {why}")
        signature[a.name] = a.triton_type
        if a.triton_type == "constexpr":
            constexprs[(i,)] = a.raw if a.raw is not None or a.value is None else a.value
        # The JIT turns every string it specializes to into attributes ("D" -> divisibility 16).
        if a.spec_attr is not None:
            attrs[(i,)] = _parse_attr(a.spec_attr)
        elif a.triton_type == "constexpr" and isinstance(a.raw, str):
            attrs[(i,)] = _parse_attr(a.raw)
    return ASTSource(kernel, signature, constexprs, attrs)


def _parse_attr(spec: str) -> list:
    from triton.backends.compiler import BaseBackend
    return BaseBackend.parse_attr(spec)


def _options(record: LaunchRecord) -> dict[str, Any]:
    opts = {k: v for k, v in record.options.items() if k not in ("grid", "warmup")}
    opts.update(num_warps=record.num_warps, num_stages=record.num_stages, num_ctas=record.num_ctas)
    opts["debug"] = bool(opts.get("debug") or getattr(record.kernel, "debug", False))
    return opts


def compile_offline(record: LaunchRecord, arch: int = 90, *, spec: GpuSpec | None = None) -> CompileFacts:
    """Compile a captured launch for `arch` (no GPU needed) and return its facts.

    Raises CompileFailure; for kind "out_of_resources" its `facts` are filled in. `spec`
    (default: the spec of `arch`, when known) gives the per-block limits to check.
    """
    import triton
    from triton.backends.compiler import GPUTarget

    src = _ast_source(record)
    printed = io.StringIO()  # Triton prints a whole PTX dump when ptxas fails
    try:
        with contextlib.redirect_stdout(printed):
            kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=_options(record))
    except Exception as e:  # anything the compiler throws is this kernel's failure, not ours
        raise CompileFailure(_failure_kind(e), _first_lines(e)) from e
    facts = facts_from_compiled(kernel)
    spec = spec or spec_for_arch(arch)
    problem = _resource_problem(facts, spec) if spec else None
    if problem:
        raise CompileFailure("out_of_resources", f"{record.kernel_name}: {problem}", facts)
    return facts


def _failure_kind(e: Exception) -> str:
    name = type(e).__name__
    if name == "PTXASError":
        return "ptxas_error"
    if name == "OutOfResources":
        return "out_of_resources"
    if name in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"):
        return "compile_error"
    return "internal_error"


def _first_lines(e: Exception, n: int = 12) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    text = "\n".join(lines[:n]) or type(e).__name__
    return f"{type(e).__name__}: {text}"


def _resource_problem(facts: CompileFacts, spec: GpuSpec) -> str | None:
    """Why a launch would fail with OutOfResources on `spec`, or None."""
    if facts.shared_bytes > spec.max_shared_per_block:
        return f"shared memory {facts.shared_bytes} B per block > {spec.max_shared_per_block} B allowed"
    occ = occupancy(facts.registers or 0, facts.shared_bytes, facts.num_warps, spec)
    if not occ.fits:
        return f"no block fits on an SM (limited by {', '.join(occ.limiters)})"
    return None
